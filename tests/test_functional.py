"""ops.apply_along_axis and ops.vectorize (on hj.vmap) against numpy's, on every target: traced (every case of
the table in ONE module per target), under hj.grad and hj.vmap, eagerly, and their errors."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.errors import ShapeError
from conftest import BACKENDS, assert_close

rng = np.random.default_rng(7)
f32 = np.float32


def normal(*shape):
    return rng.normal(size=shape).astype(f32)


def _cumulative(r):
    return ops.cumsum(r) * 2.0


def _affine(r, scale, offset=0.0):
    return ops.sum(r) * scale + offset


def _hj_clipped(x, low, high):
    return ops.where(x < low, low, ops.where(x > high, high, x))


def _extremes(r):
    return ops.min(r), ops.max(r)


def _power(x, p, mode="plain"):
    return x ** p if mode == "plain" else -(x ** p)


def _np_power(x, p, mode="plain"):
    return x ** p if mode == "plain" else -(x ** p)


def _weighted(x, w=1.0):
    return x * w + 1.0


CASES = [  # (id, hlojit fn, numpy fn, inputs)
    ("apply scalar result axis 0", lambda x: ops.apply_along_axis(lambda r: ops.sum(r * r), 0, x),
     lambda x: np.apply_along_axis(lambda r: np.sum(r * r), 0, x), (normal(3, 4, 5),)),
    ("apply vector result axis 1", lambda x: ops.apply_along_axis(_cumulative, 1, x),
     lambda x: np.apply_along_axis(lambda r: np.cumsum(r) * 2, 1, x), (normal(2, 4, 3),)),
    ("apply matrix result axis -1", lambda x: ops.apply_along_axis(lambda r: ops.outer(r, r[:2]), -1, x),
     lambda x: np.apply_along_axis(lambda r: np.outer(r, r[:2]), -1, x), (normal(3, 4),)),
    ("apply args and kwargs", lambda x: ops.apply_along_axis(_affine, 1, x, 3.0, offset=0.5),
     lambda x: np.apply_along_axis(lambda r: np.sum(r) * 3 + 0.5, 1, x).astype(f32), (normal(4, 5, 2),)),
    ("apply on a 1-d array", lambda x: ops.apply_along_axis(ops.max, 0, x),
     lambda x: np.apply_along_axis(np.max, 0, x), (normal(6),)),
    ("scalars broadcast", lambda x, lo, hi: ops.vectorize(_hj_clipped)(x, lo, hi),
     lambda x, lo, hi: np.vectorize(lambda a, b, c: b if a < b else c if a > c else a, otypes=[f32])(x, lo, hi),
     (normal(3, 1, 4), normal(5, 1) - 1, normal(4) + 1)),
    ("(n),(n)->() broadcast loops", lambda a, b: ops.vectorize(lambda u, v: ops.sum(u * v), signature="(n),(n)->()")(
        a, b), lambda a, b: np.vectorize(lambda u, v: np.sum(u * v), signature="(n),(n)->()")(a, b),
     (normal(2, 1, 4), normal(3, 4))),
    ("(m,n)->(n)", lambda a: ops.vectorize(lambda m: ops.max(m, axis=0) - ops.min(m, axis=0),
                                           signature="(m,n)->(n)")(a),
     lambda a: np.vectorize(lambda m: m.max(0) - m.min(0), signature="(m,n)->(n)")(a), (normal(5, 3, 4),)),
    ("(m,n),(n)->(m) unmapped vector", lambda a, v: ops.vectorize(ops.matmul, signature="(m,n),(n)->(m)")(a, v),
     lambda a, v: np.vectorize(np.matmul, signature="(m,n),(n)->(m)")(a, v), (normal(2, 3, 3, 4), normal(4))),
    ("(n)->(),() two outputs", lambda a: ops.vectorize(_extremes, signature="(n)->(),()")(a),
     lambda a: np.vectorize(lambda r: (r.min(), r.max()), signature="(n)->(),()")(a), (normal(4, 6),)),
    ("(n)->(k) a new dimension", lambda a: ops.vectorize(lambda r: r[:2] * r[-1], signature="(n)->(k)")(a),
     lambda a: np.vectorize(lambda r: r[:2] * r[-1], signature="(n)->(k)")(a), (normal(3, 5),)),
    ("excluded position and keyword", lambda x: ops.vectorize(_power, excluded={1, "mode"})(x, 3, mode="negated"),
     lambda x: np.vectorize(_np_power, excluded={1, "mode"})(x, 3, mode="negated"), (normal(2, 3),)),
    ("keyword argument mapped", lambda x, w: ops.vectorize(_weighted)(x, w=w),
     lambda x, w: np.vectorize(_weighted)(x, w=w), (normal(2, 3), normal(3))),
    ("size-1 loop dims kept", lambda a, b: ops.vectorize(lambda u, v: ops.sum(u * v), signature="(n),(n)->()")(
        a, b), lambda a, b: np.vectorize(lambda u, v: np.sum(u * v), signature="(n),(n)->()")(a, b),
     (normal(1, 2, 1, 4), normal(1, 1, 1, 4))),
    ("vectorize under vmap", lambda a: hj.vmap(ops.vectorize(lambda r: ops.sum(r) * r, signature="(n)->(n)"))(a),
     lambda a: a.sum(-1, keepdims=True) * a, (normal(3, 2, 4),)),
]

_RESULTS = {}


def _table(backend):
    if backend not in _RESULTS:
        run = hj.jit(lambda inputs: [case[1](*args) for case, args in zip(CASES, inputs)], backend=backend)
        _RESULTS[backend] = run([case[3] for case in CASES])
    return _RESULTS[backend]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(CASES)), ids=[case[0] for case in CASES])
def test_traced_matches_numpy(backend, index):
    _, _, reference, inputs = CASES[index]
    expected = reference(*inputs)
    actual = _table(backend)[index]
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_close(a, e.astype(f32), scale=10)
    else:
        assert_close(actual, np.asarray(expected).astype(f32), scale=10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_both(backend):
    """d/dx sum_i dot(x_i, w) = w for every row; d/dx sum of apply_along_axis(sum(r**2)) = 2x; one module."""
    x, w = normal(3, 4), normal(4)
    dot = ops.vectorize(lambda u, v: ops.sum(u * v), signature="(n),(n)->()")

    def both(x, w):
        g1 = hj.grad(lambda x: ops.sum(dot(x, w)))(x)
        g2 = hj.grad(lambda x: ops.sum(ops.apply_along_axis(lambda r: ops.sum(r ** 2), 1, x)))(x)
        return g1, g2
    g1, g2 = hj.jit(both, backend=backend)(x, w)
    assert_close(g1, np.broadcast_to(w, x.shape))
    assert_close(g2, 2 * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_eager_on_numpy_arrays(backend):
    a, b = normal(2, 1, 4), normal(3, 4)
    dot = ops.vectorize(lambda u, v: ops.sum(u * v), signature="(n),(n)->()")
    with hj.eager.default_backend(backend):
        got_dot = dot(a, b)
        got_apply = ops.apply_along_axis(_cumulative, 1, a[:, 0])
    assert isinstance(got_dot, hj.Array) and isinstance(got_apply, hj.Array)
    assert_close(got_dot, np.einsum("...n,...n->...", a, b))
    assert_close(got_apply, np.cumsum(a[:, 0], axis=1) * 2)


def _lowered(fn, *args):
    return hj.jit(fn, backend="reference").lower(*args)


def test_signature_mismatches_are_shape_errors():
    dot = ops.vectorize(lambda u, v: ops.sum(u * v), signature="(n),(n)->()")
    with pytest.raises(ShapeError, match=r"vectorize: core dimension 'n' is 3 in one argument and 4 .*\(2, 3\), "
                                         r"\(4,\).*test_functional.py"):
        _lowered(dot, normal(2, 3), normal(4))
    with pytest.raises(ShapeError, match=r"vectorize: argument 0 has shape \(\), fewer dimensions than its core "
                                         r"dimensions \(n\)"):
        _lowered(dot, np.float32(1), normal(4))
    wrong_out = ops.vectorize(lambda u: u * 2, signature="(n)->()")
    with pytest.raises(ShapeError, match=r"vectorize: output 0 has shape \(4,\) per example, not the core "
                                         r"dimensions \(\) of signature '\(n\)->\(\)'"):
        _lowered(wrong_out, normal(3, 4))
    two = ops.vectorize(lambda u: u, signature="(n)->(),()")
    with pytest.raises(ShapeError, match=r"vectorize: signature '\(n\)->\(\),\(\)' has 2 outputs, the function "
                                         r"returned one array of shape \(4,\)"):
        _lowered(two, normal(3, 4))
    with pytest.raises(ShapeError, match=r"vectorize \(loop dimensions of \(2, 4\), \(3, 4\).*cannot be broadcast"):
        _lowered(dot, normal(2, 4), normal(3, 4))
    with pytest.raises(TypeError, match="vectorize: signature .* takes 2 mapped arguments, the call gives 1"):
        _lowered(lambda *args: dot(*args), normal(3, 4))


def test_bad_arguments():
    with pytest.raises(ValueError, match="vectorize: '\\(n\\)->' is not a valid gufunc signature"):
        ops.vectorize(ops.sum, signature="(n)->")
    with pytest.raises(TypeError, match="excluded holds positions"):
        ops.vectorize(ops.sum, excluded={1.5})
    with pytest.raises(ShapeError, match="apply_along_axis: axis 2 is out of range for an array of rank 2"):
        _lowered(lambda x: ops.apply_along_axis(ops.sum, 2, x), normal(2, 3))
