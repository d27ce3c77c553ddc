"""Eager use: hlojit.ops outside a trace, hj.Array's operators and methods, numpy's protocols on Arrays
and on traced Tensors, the eager program cache."""
import operator

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from conftest import assert_close

EAGER_BACKENDS = ["reference", "iree:cpu"]
RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2.0, (2, 3)).astype(np.float32)
Y = RNG.uniform(0.5, 2.0, (2, 3)).astype(np.float32)
I = np.array([[1, -7, 3], [4, 5, -6]], np.int32)
J = np.array([[2, 3, 1], [3, 2, 4]], np.int32)
M = np.array([[True, False, True], [False, False, True]])
N = np.array([[True, True, False], [False, True, True]])


@pytest.fixture(params=EAGER_BACKENDS)
def eager_backend(request):
    with hj.eager.default_backend(request.param):
        yield request.param


def put(backend, *arrays):
    return [hj.device_put(a, backend) for a in arrays]


# --- every hlojit.ops function runs outside a trace ---------------------------------------------------------

OPS = [  # (id, fn(x, y, i), numpy's result from the numpy inputs, tolerance scale)
    ("sin", lambda x, y, i: ops.sin(x), lambda x, y, i: np.sin(x), 4),
    ("exp", lambda x, y, i: ops.exp(x), lambda x, y, i: np.exp(x), 4),
    ("add-scalar", lambda x, y, i: ops.add(x, 1.5), lambda x, y, i: x + np.float32(1.5), 1),
    ("maximum", lambda x, y, i: ops.maximum(x, y), lambda x, y, i: np.maximum(x, y), 1),
    ("where", lambda x, y, i: ops.where(x > y, x, y), lambda x, y, i: np.where(x > y, x, y), 1),
    ("sum-axis", lambda x, y, i: ops.sum(x, axis=1), lambda x, y, i: x.sum(axis=1), 2),
    ("mean-all", lambda x, y, i: ops.mean(x), lambda x, y, i: np.float32(x.mean()), 2),
    ("matmul", lambda x, y, i: ops.matmul(x, y.T), lambda x, y, i: x @ y.T, 4),
    ("reshape", lambda x, y, i: ops.reshape(x, (3, 2)), lambda x, y, i: x.reshape(3, 2), 1),
    ("concatenate", lambda x, y, i: ops.concatenate([x, y], axis=0), lambda x, y, i: np.concatenate([x, y]), 1),
    ("stack-tuple", lambda x, y, i: ops.stack((x, y), axis=1), lambda x, y, i: np.stack((x, y), axis=1), 1),
    ("cumsum", lambda x, y, i: ops.cumsum(i, axis=1), lambda x, y, i: np.cumsum(i, axis=1, dtype=np.int32), 1),
    ("astype", lambda x, y, i: ops.astype(i, np.float32), lambda x, y, i: i.astype(np.float32), 1),
    ("argmax", lambda x, y, i: ops.argmax(x, axis=0), lambda x, y, i: np.argmax(x, axis=0).astype(np.int32), 1),
    ("zeros", lambda x, y, i: ops.zeros((2, 2)), lambda x, y, i: np.zeros((2, 2), np.float32), 1),
    ("arange", lambda x, y, i: ops.arange(5), lambda x, y, i: np.arange(5, dtype=np.int32), 1),
    ("cond", lambda x, y, i: ops.cond(True, lambda a: a * 2, lambda a: a, x), lambda x, y, i: x * 2, 1),
    ("fori_loop", lambda x, y, i: ops.fori_loop(0, 3, lambda k, a: a + y, x), lambda x, y, i: x + 3 * y, 2),
]


@pytest.mark.parametrize("case", OPS, ids=[c[0] for c in OPS])
def test_eager_ops_against_numpy(eager_backend, case):
    _, fn, reference, scale = case
    result = fn(X, Y, I)            # numpy in, on the default backend
    assert type(result) is hj.Array
    expected = reference(X, Y, I)
    assert_close(result, expected, scale=scale)
    again = fn(*put(eager_backend, X, Y, I))  # hj.Arrays in: on their own backend
    assert_close(again, expected, scale=scale)


def test_eager_results_stay_on_their_backend(eager_backend):
    (x,) = put(eager_backend, X)
    expected_driver = "reference" if eager_backend == "reference" else "local-sync"
    assert ops.sin(x).driver == expected_driver
    with hj.eager.default_backend("iree:cpu" if eager_backend == "reference" else "reference"):
        assert (x + 1).driver == expected_driver   # an hj.Array takes the op to its backend
    assert ops.sin(X).driver == expected_driver      # numpy operands: the default backend


def test_unknown_default_backend_is_a_clear_error():
    with pytest.raises(hj.BackendError, match="unknown backend 'nope'"):
        with hj.eager.default_backend("nope"):
            pass


# --- the operator table: operator, operands (reflected scalars too), numpy's result, dtype -----------------

OPERATORS = [  # (id, fn, operands, expected dtype); expected values: fn on the numpy operands
    ("add", operator.add, (X, Y), np.float32),
    ("add-float", operator.add, (X, 1.5), np.float32),
    ("radd-float", operator.add, (1.5, X), np.float32),
    ("add-int-weak", operator.add, (X, 2), np.float32),
    ("add-int", operator.add, (I, 2), np.int32),
    ("sub", operator.sub, (X, Y), np.float32),
    ("rsub", operator.sub, (3.0, X), np.float32),
    ("mul", operator.mul, (I, J), np.int32),
    ("rmul", operator.mul, (2, X), np.float32),
    ("truediv", operator.truediv, (X, Y), np.float32),
    ("rtruediv", operator.truediv, (1.0, X), np.float32),
    ("floordiv", operator.floordiv, (I, J), np.int32),
    ("rfloordiv", operator.floordiv, (7, J), np.int32),
    ("mod", operator.mod, (I, J), np.int32),
    ("mod-float", operator.mod, (X, Y), np.float32),
    ("rmod", operator.mod, (7, J), np.int32),
    ("pow-int", operator.pow, (X, 3), np.float32),
    ("pow-float", operator.pow, (X, Y), np.float32),
    ("rpow", operator.pow, (2.0, X), np.float32),
    ("matmul", operator.matmul, (X, Y.T), np.float32),
    ("and", operator.and_, (I, J), np.int32),
    ("rand", operator.and_, (6, J), np.int32),
    ("and-bool", operator.and_, (M, N), np.bool_),
    ("or", operator.or_, (I, 8), np.int32),
    ("ror", operator.or_, (8, I), np.int32),
    ("xor", operator.xor, (M, N), np.bool_),
    ("rxor", operator.xor, (5, J), np.int32),
    ("lshift", operator.lshift, (J, 2), np.int32),
    ("rlshift", operator.lshift, (1, J), np.int32),
    ("rshift", operator.rshift, (I, 1), np.int32),
    ("rrshift", operator.rshift, (64, J), np.int32),
    ("neg", operator.neg, (X,), np.float32),
    ("pos", operator.pos, (I,), np.int32),
    ("abs", operator.abs, (I,), np.int32),
    ("invert", operator.invert, (I,), np.int32),
    ("invert-bool", operator.invert, (M,), np.bool_),
    ("eq", operator.eq, (I, J), np.bool_),
    ("ne-scalar", operator.ne, (J, 3), np.bool_),
    ("lt", operator.lt, (X, Y), np.bool_),
    ("rlt", operator.lt, (1.0, X), np.bool_),
    ("le", operator.le, (I, J), np.bool_),
    ("gt", operator.gt, (X, 1.0), np.bool_),
    ("ge", operator.ge, (I, J), np.bool_),
]


# On iree:cpu, one operator of each kind (arithmetic, reflected, with a weak scalar, integer and float quotients,
# powers, matmul, bitwise and shifts, unary, comparisons): each is one op compiled eagerly, which the op tables
# check on every target; what differs between operators (their dunder, their promotion) is the frontend's, which
# the reference backend runs for all of them (the 40 on iree:cpu took ~14 s of the suite, 2026-12-06)
ON_IREE = {"add", "radd-float", "add-int-weak", "rsub", "truediv", "floordiv", "mod-float", "pow-int", "rpow",
           "matmul", "and-bool", "rlshift", "neg", "invert-bool", "rlt", "ge"}


OPERATOR_RUNS = [(b, c) for b in EAGER_BACKENDS for c in OPERATORS if b == "reference" or c[0] in ON_IREE]


@pytest.mark.parametrize("backend, case", OPERATOR_RUNS, ids=[f"{b}-{c[0]}" for b, c in OPERATOR_RUNS])
def test_array_operator_table(backend, case):
    _, fn, operands, dtype = case
    with hj.eager.default_backend(backend):
        arrays = [hj.device_put(x, backend) if isinstance(x, np.ndarray) else x for x in operands]
        result = fn(*arrays)
    assert type(result) is hj.Array
    expected = fn(*operands)
    assert_close(result, np.asarray(expected).astype(dtype), dtype=dtype, scale=4)


def test_numpy_array_on_the_left_defers_to_the_array():
    x, y = put("iree:cpu", X, Y)
    for result, expected in [(X + y, X + Y), (X * y, X * Y), (X < y, X < Y), (X @ y.T, X @ Y.T)]:
        assert type(result) is hj.Array
        assert_close(result, expected, scale=4)


def test_python_scalars_are_weakly_typed():
    half = hj.device_put(np.ones(3, np.float16))
    small = hj.device_put(np.ones(3, np.int8))
    assert (half + 1.0).dtype == np.float16 and (half * 0.1).dtype == np.float16
    assert (small + 1).dtype == np.int8 and (2 * small).dtype == np.int8
    assert (hj.device_put(np.ones(3, np.float64)) + 0.1).numpy()[0] == 1.1  # the f64 value, not an f32 one
    assert ops.sin(2.0).dtype == np.float32
    with pytest.raises(OverflowError):
        small + 300  # does not fit in int8: numpy's error when the program's argument is made


# --- methods, indexing, iteration ---------------------------------------------------------------------------

METHODS = [  # (id, fn on an array, expected dtype or None for numpy's)
    ("T", lambda a: a.T, None), ("reshape", lambda a: a.reshape(3, 2), None),
    ("reshape-tuple", lambda a: a.reshape((6,)), None), ("astype", lambda a: a.astype(np.int32), None),
    ("transpose", lambda a: a.transpose(1, 0), None), ("sum", lambda a: a.sum(axis=0), None),
    ("mean", lambda a: a.mean(axis=1, keepdims=True), None), ("max", lambda a: a.max(), None),
    ("min", lambda a: a.min(axis=0), None), ("argmax", lambda a: a.argmax(axis=1), np.int32),
    ("argmin", lambda a: a.argmin(), np.int32), ("std", lambda a: a.std(axis=0), None),
    ("var", lambda a: a.var(ddof=1), None), ("cumsum", lambda a: a.cumsum(axis=1), None),
    ("ravel", lambda a: a.ravel(), None), ("flatten", lambda a: a.flatten(), None),
    ("squeeze", lambda a: a.reshape(1, 6).squeeze(), None),
    ("basic-index", lambda a: a[1, ::2], None), ("int-index", lambda a: a[-1], None),
    ("int-array-index", lambda a: a[np.array([1, 0, 1])], None), ("list-index", lambda a: a[:, [2, 0]], None),
    ("mask", lambda a: a[M], None), ("newaxis", lambda a: a[None, ..., 1], None),
]


@pytest.mark.parametrize("case", METHODS, ids=[c[0] for c in METHODS])
def test_array_methods(case):
    _, fn, dtype = case
    result = fn(hj.device_put(X))
    assert type(result) is hj.Array
    expected = np.asarray(fn(X))
    assert_close(result, expected.astype(dtype or expected.dtype), scale=4)


def test_array_properties_and_conversions():
    a = hj.device_put(X)
    assert (a.ndim, a.size, len(a)) == (2, 6, 2)
    assert a[1, 2].item() == X[1, 2].item() and a.tolist() == X.tolist()
    rows = list(a)
    assert len(rows) == 2 and all(type(r) is hj.Array for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[1]), X[1])
    assert np.asarray(a).dtype == np.float32 and float(a[0, 0]) == float(X[0, 0])
    copied = a[0].copy()
    assert type(copied) is hj.Array and copied.tolist() == X[0].tolist()
    with pytest.raises(TypeError, match="unhashable"):
        {a}


def test_index_out_of_range_is_an_index_error():
    a = hj.device_put(X)
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        a[2]
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        a[:, np.array([0, 5])]


def test_at_updates():
    a = hj.device_put(X)
    expected = X.copy()
    expected[0, 1] = 9.0
    assert_close(a.at[0, 1].set(9.0), expected)
    added = X.copy()
    np.add.at(added, (np.array([1, 1]), np.array([0, 0])), 1.0)
    assert_close(a.at[np.array([1, 1]), np.array([0, 0])].add(1.0), added)
    assert_close(a.at[M].multiply(2.0), np.where(M, X * 2, X))
    assert_close(a.at[1].get(), X[1])
    np.testing.assert_array_equal(np.asarray(a), X)  # a itself never changes


WRITERS = [  # ops IREE computes in their operand's buffer, an argument's too (iree-org/iree#16168, #24665)
    ("sort", lambda a: ops.sort(a), lambda x: np.sort(x)),
    ("dynamic_update_slice", lambda a: ops.dynamic_update_slice(a, np.full((1, 1), 9, np.float32), (1, 0)),
     lambda x: np.concatenate([x[:1], np.concatenate([[[9.0]], x[1:, 1:]], axis=1)]).astype(np.float32)),
    ("at-set", lambda a: a.at[0, 1].set(9.0), lambda x: np.where(np.arange(6).reshape(2, 3) == 1, 9, x)),
    ("top_k", lambda a: ops.top_k(a, 2)[0], lambda x: -np.sort(-x)[:, :2]),
]


@pytest.mark.parametrize("case", WRITERS, ids=[c[0] for c in WRITERS])
def test_eager_ops_never_change_their_operands(eager_backend, case):
    _, fn, expected = case
    a = hj.device_put(X, eager_backend)
    assert_close(fn(a), expected(X).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(a), X)


# --- numpy's protocols ----------------------------------------------------------------------------------------

def test_numpy_protocols_on_arrays_run_hlojit_ops():
    a, b = put("iree:cpu", X, Y)
    for result, expected in [(np.sin(a), np.sin(X)), (np.maximum(a, 1.0), np.maximum(X, 1.0)),
                             (np.concatenate([a, b]), np.concatenate([X, Y])), (np.sum(a, axis=0), X.sum(0)),
                             (np.mean(a), np.float32(X.mean())), (np.transpose(a), X.T)]:
        assert type(result) is hj.Array
        assert_close(result, expected, scale=4)
    assert np.shape(a) == (2, 3) and np.ndim(a) == 2


def test_numpy_functions_without_an_hlojit_op_fall_back_to_numpy():
    a = hj.device_put(X)
    edges = np.histogram_bin_edges(a, bins=3)   # no ops.histogram_bin_edges: numpy on np.asarray(a)
    assert not isinstance(edges, hj.Array)
    np.testing.assert_array_equal(edges, np.histogram_bin_edges(X, bins=3))
    assert isinstance(np.gradient(a, axis=1), hj.Array)   # one hlojit has: hlojit's
    np.testing.assert_array_equal(np.spacing(a), np.spacing(X))      # a ufunc hlojit lacks
    np.testing.assert_array_equal(np.add.reduce(a, axis=0), X.sum(axis=0))   # ufunc methods: numpy's


def test_numpy_protocols_on_traced_tensors():
    def f(t, u):
        assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6   # from the static shape
        return np.sum(t), np.exp(t), np.concatenate([t, u]), np.mean(t, axis=0), np.maximum(t, u)
    outs = hj.jit(f, backend="reference")(X, Y)
    for result, expected in zip(outs, [X.sum(), np.exp(X), np.concatenate([X, Y]), X.mean(axis=0),
                                       np.maximum(X, Y)]):
        assert_close(result, expected, scale=4)


def test_numpy_function_without_an_hlojit_op_on_a_tensor_names_it():
    with pytest.raises(hj.TracingError, match=r"numpy\.histogram_bin_edges"):
        hj.jit(lambda t: np.histogram_bin_edges(t), backend="reference")(X)
    with pytest.raises(hj.TracingError, match=r"np\.spacing"):
        hj.jit(lambda t: np.spacing(t), backend="reference")(X)
    with pytest.raises(hj.TracingError, match=r"np\.add\.reduce"):
        hj.jit(lambda t: np.add.reduce(t), backend="reference")(X)


# --- the cache and the hand-over to jit -------------------------------------------------------------------------

def test_a_cached_op_compiles_nothing():
    hj.eager.cache_clear()
    a = hj.device_put(np.arange(1000, dtype=np.float32))
    a + 1
    assert hj.eager.cache_info().misses == 1
    for scalar in (1, 2, 3):  # Python scalars are arguments of the program: one program for all ints
        a + scalar
    ops.add(a, 1)
    info = hj.eager.cache_info()
    assert (info.misses, info.hits) == (1, 4)
    a + 1.5
    a + 2.5                                # another for floats
    assert hj.eager.cache_info().misses == 2
    ops.sum(a.reshape(10, 100), axis=0)
    ops.sum(a.reshape(10, 100), axis=1)    # static arguments: one program each
    assert hj.eager.cache_info().misses == 5  # + reshape
    for i in range(3):
        a[i]                               # concrete ints are checked, then arguments: one program
    for row in a.reshape(10, 100):
        pass
    assert hj.eager.cache_info().misses == 7


def test_cached_calls_key_on_static_values_and_index_kinds():
    m = hj.device_put(X)
    for _ in range(2):  # the second round runs from the cache: each call must still find its own program
        assert_close(m.sum(axis=0), X.sum(axis=0), scale=2)
        assert_close(m.sum(axis=1), X.sum(axis=1), scale=2)
        assert_close(m.sum(axis=1, keepdims=True), X.sum(axis=1, keepdims=True), scale=2)
        assert_close(m[1], X[1])
        assert_close(m[-2], X[-2])
        assert_close(m[0, 1:], X[0, 1:])
        assert_close(m[:, ::-1], X[:, ::-1])
        assert_close(m + 1, X + 1)
        assert_close(m + 1.5, X + 1.5)
        assert_close(m + True, X + 1)
        assert_close(m ** 2, X ** 2)
        assert_close(m ** 3, X ** 3)        # power's int exponent is static
    with hj.promotion("strict"):
        with pytest.raises(hj.DTypeError):
            hj.device_put(I) + np.float32(1)


def test_eager_arrays_pass_into_jit_as_they_are():
    a = ops.sin(hj.device_put(X))
    out = hj.jit(lambda v: v)(a)           # IREE returns the argument's buffer itself: it was not copied
    assert out.buffer_view.get_buffer() == a.buffer_view.get_buffer()
    b = ops.sin(hj.device_put(X))
    doubled = hj.jit(lambda v: v * 2, donate_argnums=0)(b)  # donated: only an Array's own buffer can be
    assert b.is_donated
    assert_close(doubled, np.sin(X) * 2)


def test_building_blocks_outside_a_trace_point_at_hlojit_ops():
    from hlojit.frontend.ops import statistics
    with pytest.raises(hj.TracingError, match="call the hlojit.ops function instead"):
        statistics.argmax(X)   # not the public op: that one runs eagerly
    assert_close(ops.argmax(X), np.int32(np.argmax(X)))


def test_a_leaked_tensor_in_an_eager_op_is_an_error():
    leaked = []
    hj.jit(lambda x: leaked.append(x) or x, backend="reference")(X)
    with pytest.raises(hj.TracingError, match="outside its trace"):
        ops.sin(leaked[0])
