"""Control flow (ops.cond, switch, while_loop, fori_loop, scan) on every backend, against plain Python loops.

Every case lives in ONE jitted function per backend (`program`), called with a few sets of inputs (both
branches, clamped switch indices, zero-trip loops); the trace-time errors are checked with `lower`, which
compiles nothing.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend import control

from conftest import BACKENDS, assert_close, line_in

F32, F64, I32 = np.float32, np.float64, np.int32


def program(x, y, p, k, n):
    """x f32[4], y f32[2, 3], p bool, k i32, n i32 (0 <= n <= 6)."""
    out = {}
    # cond: pytree operands and results; a Python scalar in one branch takes the other's dtype
    out["cond_pair"] = ops.cond(p, lambda a, b: (a * 2, b.sum()), lambda a, b: (a - 1, b.max()), x, y)
    out["cond_weak"] = ops.cond(p, lambda: 1.5, lambda: x.sum())
    out["cond_weak_int"] = ops.cond(p, lambda: 2, lambda: k * 3)
    out["cond_capture"] = ops.cond(~p, lambda: {"v": x + y.sum(), "b": x > 1}, lambda: {"v": -x, "b": x < 2})
    # switch: the index is clamped to the branches, as lax.switch does
    out["switch"] = ops.switch(k, [lambda v: v, lambda v: v * v, lambda v: -v], x)
    out["switch_one"] = ops.switch(k, [lambda: y.sum(axis=0)])
    # while_loop with a nested cond: the Collatz steps from n + 6
    out["collatz"] = ops.while_loop(
        lambda c: c[1] != 1,
        lambda c: (c[0] + 1, ops.cond(c[1] % 2 == 0, lambda v: v // 2, lambda v: 3 * v + 1, c[1])),
        (0, n + 6))
    out["while_zero_trips"] = ops.while_loop(lambda c: ops.any(c > 100.0), lambda c: c * 2, x)
    # fori_loop: static and traced bounds, dict carry, f64, weakly typed carries
    out["fori_dict"] = ops.fori_loop(1, 4, lambda i, c: {"s": c["s"] + x * i, "p": c["p"] * 1.5},
                                     {"s": ops.zeros_like(x), "p": np.float32(1)})
    out["fori_traced"] = ops.fori_loop(k, n, lambda i, c: c + i.astype(F32) * x.sum(), 0)  # 0 becomes f32
    out["fori_int"] = ops.fori_loop(0, n, lambda i, c: c + i, 0)                            # stays int32
    out["fori_f64"] = ops.fori_loop(0, 4, lambda i, c: c * 1.5 + 0.25, np.float64(1))
    out["fori_half"] = ops.fori_loop(0, 3, lambda i, c: c + 0.5, 0)                         # weak f32 then
    # unroll (JAX's): 3 steps per trip and 1 left over; all in one trip; a weak carry promoted
    out["fori_unroll"] = ops.fori_loop(1, 8, lambda i, c: c * 0.5 + i.astype(F32) * x, ops.zeros_like(x), unroll=3)
    out["fori_unroll_all"] = ops.fori_loop(2, 6, lambda i, c: c + i * 0.25, 0, unroll=True)
    # scan: pytrees, reverse, length without xs, nested in a loop, zero length
    out["scan_cumsum"] = ops.scan(lambda c, v: (c + v, c * v), 0.0, x)
    out["scan_reverse"] = ops.scan(lambda c, v: (c + v, {"before": c, "big": v > 1}), np.float32(0), x,
                                   reverse=True)
    out["scan_rows"] = ops.scan(lambda c, r: ((c[0] + r["row"], c[1] + r["w"]), r["row"].max()), (ops.zeros(3), 0.0),
                                {"row": y, "w": y.sum(axis=1)})
    out["scan_length"] = ops.scan(lambda c, _: (c * 2, c), 1.0, None, length=5)
    out["scan_nested"] = ops.fori_loop(0, 3, lambda i, c: ops.scan(lambda c2, r: (c2 + r.sum() * c2, None), c, y)[0],
                                       np.float32(0.5))
    out["scan_empty"] = ops.scan(lambda c, _: (c + 1, c), np.float32(3), None, length=0)
    out["scan_unroll"] = ops.scan(lambda c, v: (c * v + 1, {"c": c, "v": v}), np.float32(0.5), x, reverse=True,
                                  unroll=3)
    return out


def expected(x, y, p, k, n):
    """What `program` computes, in plain Python/numpy."""
    x, y, p, k, n = np.asarray(x), np.asarray(y), bool(p), int(k), int(n)
    out = {}
    out["cond_pair"] = (x * 2, y.sum()) if p else (x - 1, y.max())
    out["cond_weak"] = F32(1.5) if p else x.sum()
    out["cond_weak_int"] = I32(2) if p else I32(k * 3)
    out["cond_capture"] = {"v": x + y.sum(), "b": x > 1} if not p else {"v": -x, "b": x < 2}
    out["switch"] = [x, x * x, -x][min(max(k, 0), 2)]
    out["switch_one"] = y.sum(axis=0)
    steps, v = 0, n + 6
    while v != 1:
        steps, v = steps + 1, v // 2 if v % 2 == 0 else 3 * v + 1
    out["collatz"] = (I32(steps), I32(v))
    out["while_zero_trips"] = x
    s, prod = np.zeros_like(x), F32(1)
    for i in range(1, 4):
        s, prod = s + x * i, prod * F32(1.5)
    out["fori_dict"] = {"s": s, "p": prod}
    c = F32(0)
    for i in range(k, n):
        c = F32(c + F32(i) * x.sum())
    out["fori_traced"] = c
    out["fori_int"] = I32(sum(range(0, n)))
    c64 = 1.0
    for _ in range(4):
        c64 = c64 * 1.5 + 0.25
    out["fori_f64"] = F64(c64)
    out["fori_half"] = F32(1.5)
    c = np.zeros_like(x)
    for i in range(1, 8):
        c = c * F32(0.5) + F32(i) * x
    out["fori_unroll"] = c
    out["fori_unroll_all"] = F32(sum(i * 0.25 for i in range(2, 6)))
    c, ys = F32(0), []
    for v in x:
        c, y_ = c + v, c * v
        ys.append(y_)
    out["scan_cumsum"] = (c, np.array(ys, F32))
    c, before, big = F32(0), np.zeros(4, F32), np.zeros(4, bool)
    for i in reversed(range(4)):
        before[i], big[i] = c, x[i] > 1
        c = c + x[i]
    out["scan_reverse"] = (c, {"before": before, "big": big})
    c0, c1, maxes = np.zeros(3, F32), F32(0), []
    for i in range(2):
        c0, c1 = c0 + y[i], c1 + y[i].sum()
        maxes.append(y[i].max())
    out["scan_rows"] = ((c0, c1), np.array(maxes, F32))
    out["scan_length"] = (F32(32), np.array([1, 2, 4, 8, 16], F32))
    c = F32(0.5)
    for _ in range(3):
        for r in y:
            c = c + r.sum() * c
    out["scan_nested"] = c
    out["scan_empty"] = (F32(3), np.zeros((0,), F32))
    c, cs = F32(0.5), np.zeros(4, F32)
    for i in reversed(range(4)):
        cs[i], c = c, F32(c * x[i] + 1)
    out["scan_unroll"] = (c, {"c": cs, "v": x})
    return out


INPUTS = [  # (p, k, n): both branches, switch indices in and out of range, loops that run 0..6 times
    (True, 1, 3), (False, -2, 0), (True, 7, 6), (False, 2, 1),
]


def arguments(p, k, n):
    x = np.array([0.5, 1.5, -2.0, 3.0], F32)
    y = np.array([[0.25, -1.0, 2.0], [1.5, 0.5, -0.75]], F32)
    return x, y, np.bool_(p), I32(k), I32(n)


def flat(tree, prefix=""):
    if isinstance(tree, dict):
        return [kv for key in sorted(tree) for kv in flat(tree[key], f"{prefix}[{key!r}]")]
    if isinstance(tree, (tuple, list)):
        return [kv for i, item in enumerate(tree) for kv in flat(item, f"{prefix}[{i}]")]
    return [(prefix, tree)]


_COMPILED: dict = {}


@pytest.mark.shares_compiles
@pytest.mark.parametrize("p, k, n", INPUTS)
def test_control_flow_agrees_with_python(backend, p, k, n):
    if backend not in _COMPILED:
        _COMPILED[backend] = hj.jit(program, backend=backend)
    got = _COMPILED[backend](*arguments(p, k, n))
    want = expected(*arguments(p, k, n))
    assert set(got) == set(want)
    for name in want:
        got_leaves, want_leaves = flat(got[name]), flat(want[name])
        assert [p for p, _ in got_leaves] == [p for p, _ in want_leaves], name
        for (path, g), (_, w) in zip(got_leaves, want_leaves):
            w = np.asarray(w)
            try:
                assert_close(g, w, w.dtype, scale=4)
            except AssertionError as e:
                raise AssertionError(f"{name}{path} on {backend}: {e}") from None


def test_control_flow_compiles_for_cuda():
    from hlojit.pipeline import compile_program, cuda
    compile_program(hj.jit(program).lower(*arguments(True, 1, 3)).program, cuda())


def test_weak_carries_are_typed_as_jax_types_them():
    lowered = hj.jit(program, backend="reference").lower(*arguments(True, 1, 3))
    text = lowered.mlir
    assert text.count("stablehlo.while") >= 8 and '"stablehlo.if"' in text and '"stablehlo.case"' in text
    got = hj.jit(program, backend="reference")(*arguments(True, 1, 3))
    assert got["fori_traced"].dtype == F32 and got["fori_int"].dtype == I32 and got["fori_half"].dtype == F32
    assert got["cond_weak"].dtype == F32 and got["cond_weak_int"].dtype == I32 and got["fori_f64"].dtype == F64


# --- trace-time errors: the op, the shapes/dtypes and the user's line --------------------------------

line_of = functools.partial(line_in, __file__)   # the line of this file holding a fragment


def raises(fn, args, error, message, fragment):
    with pytest.raises(error) as info:
        hj.jit(fn, backend="reference").lower(*args)
    text = str(info.value)
    assert re.search(message, text), text
    assert text.endswith(f"at test_control.py:{line_of(fragment)}"), text


X3 = np.zeros(3, F32)


def test_cond_pred_must_be_a_bool_scalar():
    raises(lambda x: ops.cond(x.sum(), lambda: x, lambda: x), [X3], hj.DTypeError,
           r"^cond: pred must be a bool scalar, not float32\[\]; compare it", "ops.cond(x.sum(), lambda")
    raises(lambda x: ops.cond(x > 0, lambda: x, lambda: x), [X3], hj.ShapeError,
           r"^cond: pred must be a bool scalar, not bool\[3\]; reduce it", "ops.cond(x > 0, lambda")


def test_cond_branches_must_agree():
    raises(lambda x: ops.cond(True, lambda: x, lambda: ops.zeros(2)), [X3], hj.ShapeError,
           r"^cond: false_fn returns float32\[2\] but true_fn returns float32\[3\]; branches must return the "
           "same shapes", "lambda: ops.zeros(2)), [X3]")
    raises(lambda x: ops.cond(True, lambda: (x, x), lambda: (x, x.astype(I32))), [X3], hj.DTypeError,
           r"^cond: branches return different dtypes at \[1\]: true_fn returns float32\[3\], false_fn returns "
           r"int32\[3\]", "lambda: (x, x.astype(I32))")
    raises(lambda x: ops.cond(True, lambda: (x, x), lambda: [x, x]), [X3], hj.TracingError,
           r"^cond: false_fn returns \[\*, \*\] but true_fn returns \(\*, \*\); branches must return the same "
           "structure", "lambda: [x, x])")
    raises(lambda x: ops.cond(True, lambda: 1.5, lambda: x.astype(I32).sum()), [X3], hj.DTypeError,
           r"^cond: branches return different dtypes: true_fn returns float32\[\] \(weak\), false_fn returns "
           r"int32\[\]", "lambda: x.astype(I32).sum()")


def test_switch_errors():
    raises(lambda x: ops.switch(x.sum(), [lambda: x]), [X3], hj.DTypeError,
           r"^switch: index must be an integer scalar, not float32\[\]", "ops.switch(x.sum(), [lambda: x])")
    raises(lambda x: ops.switch(0, []), [X3], ValueError, r"^switch: needs at least one branch", "ops.switch(0, [])")
    raises(lambda x: ops.switch(1, [lambda: x, lambda: x, lambda: 2 * x.sum()]), [X3], hj.ShapeError,
           r"^switch: branches\[2\] returns float32\[\] but branches\[0\] returns float32\[3\]",
           "lambda: 2 * x.sum()]")


def test_while_loop_errors():
    raises(lambda x: ops.while_loop(lambda c: c, lambda c: c + 1, x), [X3], hj.DTypeError,
           r"^while_loop: cond_fun must be a bool scalar, not float32\[3\]",
           "ops.while_loop(lambda c: c, lambda c: c + 1, x)")
    raises(lambda x: ops.while_loop(lambda c: True, lambda c: c.reshape(1, 3), x),
           [X3], hj.ShapeError,
           r"^while_loop: body_fun changes the carry from float32\[3\] to float32\[1, 3\]; a loop carry keeps "
           "its shape", "c.reshape(1, 3), x)")
    raises(lambda x: ops.while_loop(lambda c: True, lambda c: (c[0], c[1].astype(I32)), (x, x)), [X3],
           hj.DTypeError, r"^while_loop: body_fun changes the carry at \[1\] from float32\[3\] to int32\[3\]; a "
           "loop carry keeps its dtype", "c[1].astype(I32)), (x, x))")
    raises(lambda x: ops.while_loop(lambda c: True, lambda c: {"a": c}, x), [X3], hj.TracingError,
           r"^while_loop: body_fun returns \{'a': \*\} but the carry is \*; it must return the carry's "
           "structure", "lambda c: {\"a\": c}, x)")


def test_fori_loop_and_scan_errors():
    raises(lambda x: ops.fori_loop(0.0, 3, lambda i, c: c, x), [X3], hj.DTypeError,
           r"^fori_loop: lower must be an integer scalar, not float32\[\]", "ops.fori_loop(0.0, 3")
    raises(lambda x: ops.fori_loop(0, 3, lambda i, c: c.sum(), x), [X3], hj.ShapeError,
           r"^fori_loop: body_fun changes the carry from float32\[3\] to float32\[\]", "lambda i, c: c.sum(), x)")
    raises(lambda x: ops.scan(lambda c, v: c + v, 0.0, x), [X3], hj.TracingError,
           r"^scan: f must return a pair \(carry, y\), not Tensor", "ops.scan(lambda c, v: c + v, 0.0, x)")
    raises(lambda x: ops.scan(lambda c, v: (c, v), 0.0, (x, ops.zeros(2))), [X3], hj.ShapeError,
           r"^scan: the leading axes differ \(xs\[0\]: float32\[3\], xs\[1\]: float32\[2\]\)",
           "ops.scan(lambda c, v: (c, v), 0.0, (x, ops.zeros(2)))")
    raises(lambda x: ops.scan(lambda c, v: (c, v), 0.0, x.sum()), [X3], hj.ShapeError,
           r"^scan: xs is a scalar float32\[\]", "ops.scan(lambda c, v: (c, v), 0.0, x.sum())")
    raises(lambda x: ops.scan(lambda c, v: (c, v), 0.0), [X3], hj.ShapeError, r"^scan: needs xs or a length",
           "ops.scan(lambda c, v: (c, v), 0.0)")
    raises(lambda x: ops.fori_loop(0, x.shape[0] + ops.argmax(x), lambda i, c: c, x, unroll=2), [X3], ValueError,
           r"^fori_loop: unroll needs loop bounds known at trace time \(Python or numpy ints\), not int32\[\] and "
           r"int32\[\]", "ops.fori_loop(0, x.shape[0] + ops.argmax(x)")
    raises(lambda x: ops.scan(lambda c, v: (c, v), 0.0, x, unroll=0), [X3], ValueError,
           r"^scan: unroll must be a bool or a positive int, not 0", "ops.scan(lambda c, v: (c, v), 0.0, x, unroll=0)")
    raises(lambda x: ops.fori_loop(0, 5, lambda i, c: c.sum(), x, unroll=2), [X3], hj.ShapeError,
           r"^fori_loop: body_fun changes the carry from float32\[3\] to float32\[\]", "lambda i, c: c.sum(), x, unroll=2)")
    raises(lambda x: ops.scan(lambda c, v: (c * v, v), I32(0), x), [X3], hj.DTypeError,
           r"^scan: f changes the carry from int32\[\] to float32\[\]", "ops.scan(lambda c, v: (c * v, v), I32(0), x)")


def test_errors_inside_a_body_point_at_the_body_line():
    def f(x):
        return ops.fori_loop(0, 2, lambda i, c: c + ops.zeros(4), x)
    raises(f, [X3], hj.ShapeError, r"^add: shapes \(3,\) and \(4,\) cannot be broadcast",
           "lambda i, c: c + ops.zeros(4), x)")


def test_jax_exported_control_flow_runs_everywhere():
    """JAX's lowering of fori_loop/cond/scan: func.call inside while bodies, captured constants."""
    jax = pytest.importorskip("jax")

    def f(x, n):
        def body(i, c):
            return jax.lax.cond(i % 2 == 0, lambda c: c * 2.0, lambda c: c + x, c)
        c = jax.lax.fori_loop(0, n, body, x)
        s, ys = jax.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
        return c, s, ys
    x, n = np.array([0.5, -1.0, 2.0], F32), I32(5)
    text = jax.jit(f).lower(x, n).as_text()
    want = jax.jit(f)(x, n)
    for backend in BACKENDS:
        got = hj.from_mlir(text, backend=backend)(x, n)
        for g, w in zip(got, want):
            assert_close(g, np.asarray(w), F32)


def _long_scans(x, rows):
    """Scans long enough to run in blocks once control.BLOCKED_FROM is lowered (23 steps: 5 blocks of 4, 3 left):
    a pytree of ys, reverse, a length without xs, unrolled, and no y at all."""
    return {
        "forward": ops.scan(lambda c, v: (c * 0.5 + v, {"c": c, "big": v > 0}), np.float32(0.25), x),
        "reverse": ops.scan(lambda c, r: (c + r.sum() * 0.1, r * c), ops.zeros(()), rows, reverse=True),
        "length": ops.scan(lambda c, _: (c * 1.1 + 1, c), np.float32(1), None, length=23),
        "unrolled": ops.scan(lambda c, v: (c * v + 1, c), np.float32(0.5), x, reverse=True, unroll=3),
        "no_y": ops.scan(lambda c, v: (c - v * c, None), np.float32(2), x)[0],
    }


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_long_scans_run_in_blocks_and_give_one_loops_bits(backend, monkeypatch):
    """A scan of BLOCKED_FROM steps or more is a scan of blocks of scans (IREE copies a loop's stacked outputs
    every iteration): the same steps in the same order, so the same bits as one loop, and the same gradient."""
    rng = np.random.default_rng(11)
    x, rows = rng.standard_normal(23).astype(F32), rng.standard_normal((23, 3)).astype(F32)
    loss = lambda x, rows: ops.sum(_long_scans(x, rows)["forward"][1]["c"] ** 2)   # noqa: E731
    one_loop = hj.jit(_long_scans, backend=backend)(x, rows), hj.jit(hj.grad(loss), backend=backend)(x, rows)
    monkeypatch.setattr(control, "BLOCKED_FROM", 8)
    text = hj.jit(_long_scans).lower(x, rows).as_text()
    assert text.count("stablehlo.while") == 5 * 3, "each scan: the blocks' loop, a block's loop, the 3 steps left"
    blocked = hj.jit(_long_scans, backend=backend)(x, rows), hj.jit(hj.grad(loss), backend=backend)(x, rows)
    for a, b in zip(*(hj.tree_util.tree_leaves(r) for r in (one_loop, blocked))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    c, cs = np.float32(0.25), []
    for v in x:
        cs.append(c)
        c = np.float32(c * np.float32(0.5) + v)
    np.testing.assert_array_equal(np.asarray(blocked[0]["forward"][1]["c"]), np.array(cs, F32))
