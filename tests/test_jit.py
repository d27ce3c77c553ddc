"""hj.jit / hj.Exec: the first working path, the cache and what it reports, pytrees, static arguments,
results as hj.Array, backend selection, thread safety, and the errors a user sees."""
import functools
import gc
import logging
import os
import threading
import warnings

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

from conftest import line_in

HERE = os.path.basename(__file__)


line_of = functools.partial(line_in, __file__)   # the line of this file holding a fragment


def x4_plus_1(x):
    return x**4 + 1


def test_issue_example_end_to_end():
    fast = hj.jit(x4_plus_1)
    assert float(np.asarray(fast(np.float32(3.0)))) == 82.0
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(fast(x)), x**4 + 1)
    text = fast.lower(np.float32(3.0)).mlir
    assert text.count("stablehlo.multiply") == 2 and "stablehlo.add" in text and "stablehlo.power" not in text
    info = fast.cache_info()
    assert (info.currsize, info.hits, info.misses) == (2, 0, 2)
    assert info.miss_reasons == ["first call: x: f32[]", "x: f32[] before, now f32[2,3]"]
    ref = hj.jit(x4_plus_1, backend="reference")
    np.testing.assert_allclose(np.asarray(ref(x)), x**4 + 1)


def test_default_backend_is_iree_cpu_and_env_var_chooses(monkeypatch):
    assert hj.jit(x4_plus_1).backend.name == "iree:cpu"
    monkeypatch.setenv("HLOJIT_BACKEND", "reference")
    assert hj.jit(x4_plus_1).backend.name == "reference"
    assert hj.jit(x4_plus_1, backend="iree:vmvx").backend.name == "iree:vmvx"


def test_unknown_backend_lists_known_ones():
    with pytest.raises(hj.BackendError, match=r"unknown backend 'tpu'.*iree:cpu.*reference") as e:
        hj.jit(x4_plus_1, backend="tpu")
    assert isinstance(e.value, ValueError)


def test_cache_hits_and_miss_reasons(backend):
    f = hj.jit(lambda x, y: x * y, backend=backend)
    a3, a4 = np.ones(3, np.float32), np.ones(4, np.float32)
    f(a3, a3)
    f(a3, a3)
    f(a3, a3.astype(np.int32))
    f(a4, a4)
    info = f.cache_info()
    assert info.hits == 1 and info.misses == 3
    assert info.miss_reasons[1] == "y: f32[3] before, now i32[3]"
    # equally near entries: the most recent one is named
    assert info.miss_reasons[2] == "x: f32[3] before, now f32[4]; y: i32[3] before, now f32[4]"
    assert "2 entries" not in str(info) and "3 entries (max 64), 1 hits, 3 misses" in str(info)


def test_lru_bound_and_eviction_reason():
    f = hj.jit(lambda x: x + 1, backend="reference", cache_size=2)
    for n in (1, 2, 3):
        f(np.zeros(n, np.float32))
    assert f.cache_info().currsize == 2
    f(np.zeros(1, np.float32))  # evicted: compiled again
    assert "evicted" in f.cache_info().miss_reasons[-1]
    assert f.cache_info().entries == ["x: f32[3]", "x: f32[1]"]


def test_recompiling_warns_naming_the_function():
    def keeps_changing(x):
        return x * 2
    f = hj.jit(keeps_changing, backend="reference")
    with pytest.warns(hj.RecompileWarning, match=r"keeps_changing has been traced and compiled 8 times.*f32\[7\]"):
        for n in range(8):
            f(np.zeros(n, np.float32))


def test_calls_that_fail_to_trace_are_no_recompiles():
    """A call whose trace raises caches nothing: it counted as a miss, and calls that kept failing were warned of
    as recompiles ("pad to a few fixed shapes"), beside the error that said what was wrong."""
    f = hj.jit(lambda x: x @ x, backend="reference")
    x = np.ones((3, 4), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", hj.RecompileWarning)
        for _ in range(9):
            with pytest.raises(hj.ShapeError):
                f(x)
    assert f.cache_info().misses == 0 and f.cache_info().miss_reasons == []
    f(np.ones((3, 3), np.float32))
    assert f.cache_info().misses == 1 and f.cache_info().miss_reasons[0].startswith("first call")


def test_pytrees_in_and_out(backend):
    def f(params, batch, scale=None):
        w, b = params["w"], params["b"]
        y = batch[0] @ w + b
        return {"y": y, "pair": (y.sum(), [batch[1] * 2]), "none": None}
    params = {"w": np.ones((3, 2), np.float32), "b": np.arange(2, dtype=np.float32)}
    batch = (np.ones((4, 3), np.float32), np.int32(5))
    out = hj.jit(f, backend=backend)(params, batch)
    assert set(out) == {"y", "pair", "none"} and out["none"] is None
    np.testing.assert_allclose(np.asarray(out["y"]), np.ones((4, 3)) @ params["w"] + params["b"])
    assert float(np.asarray(out["pair"][0])) == pytest.approx(4 * (3 + 4))
    assert int(np.asarray(out["pair"][1][0])) == 10 and isinstance(out["pair"][1], list)


def test_python_scalar_arguments_are_weakly_typed(backend):
    f = hj.jit(lambda x, s: x * s, backend=backend)
    if backend != "iree:vmvx":  # IREE 3.13's vmvx cannot lower f16 arithmetic (arith.truncf)
        y = f(np.ones(2, np.float16), 3.0)       # a weak float keeps f16
        assert y.dtype == np.float16
        np.testing.assert_array_equal(np.asarray(y), [3, 3])
    assert f(np.ones(2, np.int8), 2).dtype == np.int8
    assert f(np.ones(2, np.int32), 1.5).dtype == np.float32
    assert "s: f32[] (weak)" in f.cache_info().entries[-1]


def test_static_arguments(backend):
    def power(x, n, *, mode):
        return x**n if mode == "pow" else x * n
    f = hj.jit(power, backend=backend, static_argnums=1, static_argnames="mode")
    x = np.full(3, 2, np.float32)
    np.testing.assert_array_equal(np.asarray(f(x, 3, mode="pow")), [8, 8, 8])
    np.testing.assert_array_equal(np.asarray(f(x, 3, mode="mul")), [6, 6, 6])
    f(x, 3, mode="pow")
    info = f.cache_info()
    assert (info.hits, info.misses) == (1, 2)
    assert info.miss_reasons[1] == "static mode: 'pow' before, now 'mul'"


def test_unhashable_static_argument_is_a_clear_error():
    f = hj.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(hj.SignatureError) as e:
        f(np.zeros(4, np.float32), [2, 2])  # unhashable-static
    message = str(e.value)
    assert isinstance(e.value, TypeError)
    assert "static argument 'shape' must be hashable" in message and "list" in message
    assert f"{HERE}:{line_of('unhashable-static')}" in message


def test_wrong_number_of_arguments_names_function_and_lines():
    def add(x, y):
        return x + y
    f = hj.jit(add)
    with pytest.raises(hj.SignatureError) as e:
        f(np.zeros(2, np.float32))  # one-argument-call
    message = str(e.value)
    assert "add()" in message and "missing a required argument: 'y'" in message
    assert f"called at {HERE}:{line_of('one-argument-call')}" in message
    assert f"add is defined at {HERE}:{line_of('def add(x, y):')}" in message
    with pytest.raises(TypeError, match="too many positional arguments"):
        f(1.0, 2.0, 3.0)


def test_unsupported_argument_kind():
    with pytest.raises(hj.SignatureError, match=r"argument x\['a'\] is a str"):
        hj.jit(lambda x: x)({"a": "text"})


def test_shape_mismatch_names_op_shapes_and_line(backend):
    def f(a, b):
        return a + b  # the-bad-add
    with pytest.raises(hj.ShapeError) as e:
        hj.jit(f, backend=backend)(np.zeros((3, 4), np.float32), np.zeros(5, np.float32))
    message = str(e.value)
    assert isinstance(e.value, ValueError)
    assert message.startswith("add: shapes (3, 4) and (5,) cannot be broadcast together")
    assert message.endswith(f"at {HERE}:{line_of('the-bad-add')}")


def test_matmul_contracting_mismatch_message():
    with pytest.raises(hj.ShapeError) as e:
        hj.jit(lambda a, b: a @ b)(np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32))  # bad-matmul
    assert str(e.value) == f"matmul: contracting dimensions differ: (2, 3) @ (4, 5) at {HERE}:{line_of('bad-matmul')}"


def test_dtype_the_op_does_not_take():
    with pytest.raises(hj.DTypeError) as e:
        hj.jit(lambda x: ~x)(np.zeros(2, np.float32))  # invert-float
    message = str(e.value)
    assert isinstance(e.value, TypeError)
    assert message.startswith("invert: does not take float32 (operand float32[2])")
    assert f"{HERE}:{line_of('invert-float')}" in message
    with pytest.raises(hj.DTypeError, match="subtract: does not take bool"):
        hj.jit(lambda x: x - x)(np.zeros(2, bool))


def test_bool_of_tensor_explains_what_to_do():
    def f(x):
        if x > 0:  # python-if
            return x
        return -x
    with pytest.raises(hj.TracingError) as e:
        hj.jit(f)(np.float32(1))
    message = str(e.value)
    assert "ops.where" in message and "static_argnums" in message
    assert f"{HERE}:{line_of('python-if')}" in message


def test_leaked_tensor_is_an_error():
    leaked = []
    hj.jit(lambda x: leaked.append(x) or x, backend="reference")(np.float32(1))
    with pytest.raises(hj.TracingError, match="belongs to another trace"):
        hj.jit(lambda y: y + leaked[0], backend="reference")(np.float32(1))


def test_locations_point_at_user_lines():
    def f(x):
        y = x * 2  # loc-multiply
        return ops.relu(y)  # loc-relu
    text = hj.jit(f).lower(np.float32(1)).as_text(debug_info=True)
    assert f'{HERE}":{line_of("loc-multiply")}' in text and f'{HERE}":{line_of("loc-relu")}' in text


def test_results_are_arrays_mapped_without_copy():
    f = hj.jit(lambda x: x * 2)
    y = f(np.ones((2, 3), np.float32))
    assert isinstance(y, hj.Array) and y.shape == (2, 3) and y.dtype == np.float32 and y.ndim == 2
    first, second = np.asarray(y), np.asarray(y)
    assert np.shares_memory(first, second) and not first.flags.writeable
    assert "Array([[2., 2., 2.]" in repr(y) and "dtype=float32" in repr(y)
    assert float(f(np.float32(2))) == 4.0


def test_views_of_a_result_outlive_it():
    """`a, b = f(x)` unpacks numpy views of the device buffer; the hj.Array is gone at once, and its memory
    must stay theirs while later calls allocate results of the same size."""
    f = hj.jit(lambda x: x * 3)
    a, b = f(np.arange(4, dtype=np.uint32).reshape(2, 2))
    gc.collect()
    later = [f(np.full((2, 2), i, np.uint32)) for i in range(20)]
    assert a.tolist() == [0, 3] and b.tolist() == [6, 9] and len(later) == 20


def test_arrays_passed_back_are_not_copied_and_numpy_inputs_are():
    identity = hj.jit(lambda x: x)
    a = identity(np.ones(3, np.float32))
    assert np.shares_memory(np.asarray(identity(a)), np.asarray(a))   # the buffer itself went in
    double = hj.jit(lambda x: x * 2)
    x = np.ones(1000, np.float32)
    y = double(x)
    x[:] = 5                                                          # the caller changes its array
    np.testing.assert_array_equal(np.asarray(y), 2)


def test_arrays_cross_backends():
    a = hj.jit(lambda x: x + 1, backend="reference")(np.ones(2, np.float32))
    b = hj.jit(lambda x: x * 3)(a)
    c = hj.jit(lambda x: x - 1, backend="iree:vmvx")(b)
    np.testing.assert_array_equal(np.asarray(c), [5, 5])


def test_scalars_zero_size_and_constants(backend):
    f = hj.jit(lambda x: (x.sum(), x * 2, 7, np.arange(3, dtype=np.int32)), backend=backend)
    total, doubled, seven, const = f(np.zeros((0, 3), np.float32))
    assert float(total) == 0.0 and doubled.shape == (0, 3)
    assert int(seven) == 7 and seven.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(const), [0, 1, 2])


def test_nested_jit_is_inlined(backend):
    inner = hj.jit(lambda x: x + 1, backend=backend)
    outer = hj.jit(lambda x: inner(x) * 2, backend=backend)
    assert float(outer(np.float32(1))) == 4.0
    assert outer.cache_info().misses == 1 and inner.cache_info().misses == 0


def test_methods():
    class Model:
        def __init__(self, scale):
            self.scale = scale

        @hj.jit
        def apply(self, x):
            return x * 2
    assert float(Model(3).apply(np.float32(2))) == 4.0


def test_threads_trace_compile_and_call_safely(backend):
    f = hj.jit(lambda x: ops.tanh(x) * 2 + x.sum(), backend=backend)
    inputs = [np.linspace(-1, 1, n, dtype=np.float32) for n in (3, 5, 3, 5, 7, 3)]
    errors, results = [], {}

    def work(i, x):
        try:
            for _ in range(20):
                results[i] = np.asarray(f(x)).copy()
        except Exception as e:  # pragma: no cover
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i, x)) for i, x in enumerate(inputs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i], np.tanh(x) * 2 + x.sum(), rtol=1e-5, atol=1e-6)
    info = f.cache_info()
    assert info.misses == 3 and info.hits == 6 * 20 - 3


def test_compile_reports_dispatch_count_for_fused_relu():
    g = hj.jit(lambda x: ops.relu(2 * x + 1))
    executable = g.compile(np.zeros(1024, np.float32))
    assert executable.compiled.dispatch_count == 1 and len(executable.vmfb) > 0


def test_no_warnings_from_reference_on_ieee_edge_cases():
    f = hj.jit(lambda x: (ops.log(x), 1 / x, ops.sqrt(x - 1)), backend="reference")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log, inverse, root = f(np.array([0.0, 1.0], np.float32))
    assert np.isneginf(np.asarray(log)[0]) and np.isposinf(np.asarray(inverse)[0]) and np.isnan(np.asarray(root)[0])


def test_a_module_the_default_cpu_flags_cannot_compile_falls_back(monkeypatch, tmp_path):
    """IREE 3.13's inner-tiled matmuls (the cpu target's default) fail on a vector times a matrix. The cpu quirk
    makes such products reductions; without it, the module is compiled again with the plain data-tiling
    flags, and computes the same numbers."""
    from hlojit.backends.iree import IreeBackend
    from hlojit.pipeline import cpu, quirks
    inner_tiled = IreeBackend("iree:cpu", cpu(flag_set="inner-tiled"))
    v, m = np.arange(4, dtype=np.float32), np.arange(12, dtype=np.float32).reshape(4, 3)
    product = lambda v, m: ops.matmul(v[None], m)  # noqa: E731

    def jit(fn):
        run = hj.jit(fn)
        run.backend = inner_tiled
        return run
    quirked = jit(product)
    np.testing.assert_allclose(np.asarray(quirked(v, m)), v[None] @ m)
    assert "--iree-llvmcpu-enable-inner-tiled" in quirked.compile(v, m).compiled.target.flags
    monkeypatch.setitem(quirks.QUIRKS, "cpu", [])
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")        # the patched table is this process's
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path))   # the key does not see the quirk table
    f = jit(product)
    np.testing.assert_allclose(np.asarray(f(v, m)), v[None] @ m)
    used = f.compile(v, m).compiled.target
    assert "--iree-opt-data-tiling" in used.flags and "--iree-llvmcpu-enable-inner-tiled" not in used.flags
    assert "--iree-llvmcpu-enable-inner-tiled" in f.compile(m.T, m).compiled.target.flags   # a matrix: no fallback
    again = jit(product).compile(v, m).compiled
    assert again.cache_hit and again.target == used    # the persistent cache knows which flags made its vmfb


def test_the_fallback_compiles_with_its_own_flags_only():
    """A session's flags cannot be taken back and list flags append: the fallback once compiled with the failed
    flags plus its own (`--iree-hal-target-device=bogus,local`), and failed again."""
    from hlojit.pipeline import compile_program, cpu, targets
    plain = cpu(flag_set="inner-tiled").fallback
    broken = targets.Target("cpu", "local-task", plain.flags + ("--iree-hal-target-device=no-such-device",),
                            fallback=plain)
    program = hj.jit(lambda x: x * 2).lower(np.ones(3, np.float32)).program
    compiled = compile_program(program, broken)
    assert compiled.target == plain
    executable = hj.backends.get("iree:cpu").load(program)
    np.testing.assert_array_equal(np.asarray(executable.call([np.ones(3, np.float32)])[0]), 2 * np.ones(3))


def test_miss_reasons_and_compile_log_of_many_arguments_stay_short(monkeypatch, caplog):
    """A model's 127 parameters made a 10 KB HLOJIT_LOG line: the first 8 arguments and a count of the rest."""
    monkeypatch.setenv("HLOJIT_LOG", "compiles")
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    with caplog.at_level(logging.INFO, logger="hlojit"):
        hj.jit(lambda *xs: sum(xs), backend="iree:vmvx")(*[np.float32(i) for i in range(10)])
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("compile <lambda>("))
    assert line.startswith("compile <lambda>(" + ", ".join(["f32[]"] * 8) + ", ... (2 more, 10 in all)) for vmvx")
    assert line.endswith("traced because first call: " + ", ".join(f"xs[{i}]: f32[]" for i in range(8))
                         + ", ... (2 more, 10 in all)"), line
    f = hj.jit(lambda params: sum(params), backend="reference")
    f([np.float32(i) for i in range(20)])
    f([np.float64(i) for i in range(20)])
    first, changed = f.cache_info().miss_reasons
    assert first == "first call: " + ", ".join(f"params[{i}]: f32[]" for i in range(8)) + ", ... (12 more, 20 in all)"
    assert changed == "; ".join(f"params[{i}]: f32[] before, now f64[]" for i in range(8)) + "; ... (12 more, 20 in all)"
