"""Complex elementary functions against numpy (glibc's C99 Annex G values) on every target: a grid of special
parts (0, -0, +-1, +-inf, NaN, a large finite value, a subnormal on the reference ...) where the class of each part
must be numpy's exactly (NaN, +-inf, +-0, finite of a sign; a NaN's sign is not compared, numpy's is arbitrary), and
random operands of magnitude 1e-6 .. 1e6 where the inverse functions must be within a few ulps. One compiled
module per backend and dtype holds every case (the grid and the random operands are one array). The complex
inverse functions' branch cuts and gradients (d/dz arcsin = 1 / sqrt(1 - z**2) ..., JAX's convention) follow on
the reference backend.

Before 12-03 the grid's NaN parts appeared where numpy has inf or 0 (exp(inf + i inf), sqrt(x + i inf),
sinh(0 + i inf) ...), exp(800 + 1e-310i) overflowed its imaginary part, power took no whole-exponent path
((inf + 0j) ** 2 is inf + i NaN in numpy), and arcsin ... arctanh refused complex operands. Before 12-04 sign was NaN at every infinite part (stablehlo.sign's
z / |z|; numpy's sign(inf + 2j) is 1), IREE's expm1(inf + 0j) was inf + 0j (numpy's inf + nan j), its quotient by an
infinite divisor NaN (1 / (inf + 0j) is 0; logistic(-inf) with it), its log1p(inf + nan j) NaN (numpy's inf + nan j),
and reciprocal numpy's quotient, not numpy's own reciprocal (1 / 0j: inf + nan j against nan + nan j). Before 12-05
arctanh(NaN + 1e300j) was NaN + i pi/2 (numpy's NaN + i NaN), arctan(1e300 + i NaN) alike: the grid had no part
past the formulas' "far" bound."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

SPECIAL = ["sin", "cos", "sinh", "cosh", "tan", "tanh", "exp", "exp2", "expm1", "log", "log1p", "sqrt", "sign",
           "reciprocal"]
INVERSE = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]
EXPONENTS = [0, 1, 2, 3, -1, -2, 5, 0.5, 2.5 + 1j, 1j, -0.5, np.inf, np.nan, 150]
RANDOM_COUNT = 400
# finite results: the grid's and the random operands' relative tolerance (inverse functions: "a few ulps")
GRID_RTOL = {np.complex64: 2e-6, np.complex128: 1e-13}
POWER_RTOL = {np.complex64: 1e-5, np.complex128: 1e-13}
ULPS = 6


def _parts(re, im, dtype):
    z = np.empty(np.broadcast(re, im).shape, dtype)
    z.real, z.imag = re, im
    return z


def _grid(dtype, backend, huge=True):
    """Every pair of special parts. A subnormal one only on the reference backend: IREE's CPU code flushes
    subnormal operands and results of every float op to zero (even a real x * 1.0001), complex or not. A huge
    part (past the inverse functions' "far" formulas' bound) only where a result does not overflow from it: the
    parts of an infinite power (1e300 + 1e300j)**2 are numpy's repeated products' (nan + inf j), its sign from a
    phase rounded to nothing ((-1 + 1e36j)**150 in complex64)."""
    big, tiny = (800.0, 1e-310) if dtype == np.complex128 else (100.0, 1e-40)
    values = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, big, -big, 2.5, -0.5] + [tiny] * (backend == "reference")
    if huge:
        values += [1e300, -1e300] if dtype == np.complex128 else [1e36, -1e36]
    re, im = np.meshgrid(values, values, indexing="ij")
    return _parts(re.ravel(), im.ravel(), dtype)


def _random(dtype):
    rng = np.random.default_rng(1203)
    magnitude = 10.0 ** rng.uniform(-6, 6, RANDOM_COUNT)
    angle = rng.uniform(-np.pi, np.pi, RANDOM_COUNT)
    return (magnitude * np.exp(1j * angle)).astype(dtype)


def _power_operands(dtype, backend):
    grid = _grid(dtype, backend, huge=False)
    exponents = np.array(EXPONENTS, dtype)
    return np.repeat(grid, len(exponents)), np.tile(exponents, len(grid))


def _classes(x):
    """Each part's class: NaN (any sign), +-inf, +-0, finite positive, finite negative."""
    return np.where(np.isnan(x), 9, np.where(np.isinf(x), 3 * np.sign(x),
                                             np.where(x == 0, np.where(np.signbit(x), -0.5, 0.5), np.sign(x))))


def _flushed(x):
    """x with subnormal parts made zeros of their sign, as IREE's CPU code leaves them."""
    tiny = np.finfo(np.real(x).dtype).tiny

    def flush(part):
        return np.where(np.abs(part) < tiny, np.copysign(0, part), part).astype(part.dtype)
    return _parts(flush(np.real(x)), flush(np.imag(x)), x.dtype)


def _mismatches(operands, actual, expected, rtol, flush=False, normwise=False):
    """Descriptions of the elements whose parts differ from numpy's in class, or (finite nonzero) by more than
    rtol relative (of the part, or with `normwise` of |expected|) or 4 subnormal steps. `flush`: numpy's subnormal
    parts count as zeros of their sign (IREE's CPU code flushes them)."""
    expected = _flushed(expected) if flush else expected
    bad = np.zeros(operands.shape, bool)
    for part in (np.real, np.imag):
        a, e = part(actual), part(expected)
        wrong_class = _classes(a) != _classes(e)
        scale = np.abs(expected) if normwise else np.abs(e)
        with np.errstate(all="ignore"):
            far = np.abs(a - e) > np.maximum(rtol * scale, 4 * np.finfo(e.dtype).smallest_subnormal)
        bad |= wrong_class | (np.isfinite(e) & (e != 0) & far)
    return [f"{operands[i]} -> {actual[i]}, numpy {expected[i]}" for i in np.flatnonzero(bad)[:6]]


def _subnormal(z):
    """Whether a part of z is subnormal (the reference backend's grid has such parts)."""
    tiny = np.finfo(np.real(z).dtype).tiny
    return np.any([(part != 0) & (np.abs(part) < tiny) for part in (z.real, z.imag)], axis=0)


def _quotient_operands(dtype, backend):
    """Every pair of grid values, as numerator and divisor."""
    grid = _grid(dtype, backend)
    return np.repeat(grid, len(grid)), np.tile(grid, len(grid))


def _traced(z, a, b, n, d):
    return [getattr(ops, name)(z) for name in SPECIAL + INVERSE] + [n / d, ops.power(a, b)]


_RESULTS = {}


# iree:vmvx runs complex64 only: its complex128 module is the same rewrites (complex_pairs, complex_math_pairs) on
# f64 parts, which iree:cpu's complex128 module checks, and vmvx's f64 arithmetic is test_ops' f64 groups' (the
# vmvx complex128 module took ~18 s of the suite's 15 CI minutes on the 2-vCPU VM, 2026-12-05)
ONE_DTYPE_ON_VMVX = "vmvx runs complex64 only here (the complex128 module's rewrites are checked on iree:cpu)"


def _results(backend, dtype):
    if backend == "iree:vmvx" and dtype == np.complex128:
        pytest.skip(ONE_DTYPE_ON_VMVX)
    key = (backend, dtype)
    if key not in _RESULTS:
        z = np.concatenate([_grid(dtype, backend), _random(dtype)])
        outputs = hj.jit(_traced, backend=backend)(z, *_power_operands(dtype, backend),
                                                   *_quotient_operands(dtype, backend))
        _RESULTS[key] = z, [np.asarray(r) for r in outputs]
    return _RESULTS[key]


# both tests read one compiled module per (backend, dtype): under xdist, one worker per backend
pytestmark = pytest.mark.shares_compiles


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_special_values_are_numpys(backend, dtype):
    z, results = _results(backend, dtype)
    n = len(_grid(dtype, backend))
    grid = z[:n]
    flush = backend != "reference"
    failures = []
    with np.errstate(all="ignore"):
        for name, actual in zip(SPECIAL + INVERSE, results):
            # numpy's log1p of a subnormal z is 0 (the reference's is z, to the last bit)
            kept = ~_subnormal(grid) if name == "log1p" else np.ones(n, bool)
            failures += [f"{name}: {m}" for m in _mismatches(grid[kept], actual[:n][kept],
                                                            getattr(np, name)(grid[kept]), GRID_RTOL[dtype], flush)]
        n, d = _quotient_operands(dtype, backend)
        labels = np.array([f"({x}) / ({y})" for x, y in zip(n, d)])
        # numpy's quotient by a subnormal divisor overflows (1e-310 / 1e-310 is inf + nan j; the reference's is 1),
        # and its subnormal quotients keep fewer bits: pairs with a subnormal part are the reference's own tests'
        kept = ~(_subnormal(n) | _subnormal(d))
        failures += [f"divide: {m}" for m in _mismatches(labels[kept], results[-2][kept], (n / d)[kept],
                                                          GRID_RTOL[dtype], flush)]
        # e^(b log a) is only norm-wise accurate: a part far smaller than |a**b| keeps the other's absolute error
        a, b = _power_operands(dtype, backend)
        labels = np.array([f"({x})**({y})" for x, y in zip(a, b)])
        failures += [f"power: {m}" for m in _mismatches(labels, results[-1], np.power(a, b), POWER_RTOL[dtype],
                                                         flush, normwise=True)]
    assert not failures, f"{backend} {np.dtype(dtype).name}:\n" + "\n".join(failures)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_inverse_functions_are_accurate_to_a_few_ulps(backend, dtype):
    z, results = _results(backend, dtype)
    n = len(_grid(dtype, backend))
    operands = z[n:]
    rtol = ULPS * np.finfo(np.real(operands).dtype).eps
    failures = []
    for name, actual in zip(SPECIAL + INVERSE, results):
        if name in INVERSE:
            expected = getattr(np, name)(operands.astype(np.complex128)).astype(dtype)
            failures += [f"{name}: {m}" for m in _mismatches(operands, actual[n:], expected, rtol)]
    assert not failures, f"{backend} {np.dtype(dtype).name}:\n" + "\n".join(failures)


def test_branch_cuts_follow_the_sign_of_zero():
    """arcsin(2 +- 0j) is pi/2 +- 1.317i, arccos(2 +- 0j) 0 -+ 1.317i, arctanh(2 +- 0j) 0.549 +- pi/2 i,
    arcsinh(+-0 + 2i) +-1.317 + pi/2 i, arccosh(-2 +- 0j) 1.317 +- pi i, arctan(+-0 + 2i) +-pi/2 + 0.549i: numpy's side
    of each cut."""
    z = np.array([2 + 0j, complex(2, -0.0), -2 + 0j, complex(-2, -0.0), 2j, complex(-0.0, 2), -2j,
                  complex(-0.0, -2)])
    out = hj.jit(lambda z: [getattr(ops, name)(z) for name in INVERSE], backend="reference")(z)
    for name, actual in zip(INVERSE, out):
        assert not _mismatches(z, np.asarray(actual), getattr(np, name)(z), 1e-15), name


DERIVATIVES = {  # d/dz of each inverse function, by numpy
    "arcsin": lambda z: 1 / np.sqrt(1 - z * z), "arccos": lambda z: -1 / np.sqrt(1 - z * z),
    "arctan": lambda z: 1 / (1 + z * z), "arcsinh": lambda z: 1 / np.sqrt(z * z + 1),
    "arccosh": lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1)), "arctanh": lambda z: 1 / (1 - z * z),
}


@pytest.mark.parametrize("name", INVERSE)
def test_inverse_function_gradients(name):
    """grad of L = Re(c f(z)) is c f'(z) in JAX's convention (dL/dx - i dL/dy), for the holomorphic f; and the
    same by central differences."""
    z = np.array([0.3 + 0.4j, -1.5 + 0.2j, 2 - 1j, 0.1 + 0.5j, -0.7 - 0.6j, 3 + 3j])
    c = 1.5 - 0.5j
    grad = np.asarray(hj.jit(hj.grad(lambda z: ops.sum(ops.real(getattr(ops, name)(z) * c))), backend="reference")(z))
    np.testing.assert_allclose(grad, c * DERIVATIVES[name](z), rtol=1e-12)
    f = getattr(np, name)
    eps = 1e-6
    numeric = (np.real(c * f(z + eps)) - np.real(c * f(z - eps))) / (2 * eps) \
        - 1j * (np.real(c * f(z + 1j * eps)) - np.real(c * f(z - 1j * eps))) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-7)
