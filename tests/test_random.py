"""hj.random: Threefry's known answers, the same bits on every backend, JAX's numbers, honest statistics.

Every stream is drawn in ONE jitted program per backend (`streams`; the 16-bit floats in `half_streams`,
which vmvx cannot compile); the backends must agree bit for bit with the reference, except `normal`,
whose erfinv goes through log1p/sqrt and IREE's fused multiply-adds (a few ulps). The statistics run on
the reference backend: the other backends give the same bits.
"""
from __future__ import annotations

import functools
import math
import re

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit import random as hr

from conftest import line_in
from hlojit.dialects import stablehlo as _hlo

if not (hasattr(_hlo, "sort") and hasattr(_hlo, "bitcast_convert")):
    # permutation and float64 uniform need the math family's sort and bitcast_convert, not yet on main
    pytest.skip("hj.random needs stablehlo.sort and bitcast_convert builders (math family, not yet landed)",
                allow_module_level=True)

U32, F16, BF16 = np.uint32, np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)

# Random123's kat_vectors for threefry2x32_20: (key, counter) -> the hashed counter
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
    ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
    ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0)),
]
KAT_INPUTS = [np.array([row[i][j] for row in KNOWN_ANSWERS], U32) for i in (0, 1) for j in (0, 1)]
KAT_OUTPUTS = [np.array([row[2][j] for row in KNOWN_ANSWERS], U32) for j in (0, 1)]


def test_threefry_known_answers_in_numpy():
    got = hr.threefry2x32(*KAT_INPUTS)
    for g, w in zip(got, KAT_OUTPUTS):
        np.testing.assert_array_equal(g, w)


def streams(k0, k1, x0, x1, seed, seed64, data, rows):
    """Each draw gets a key of its own (a draw that reuses a key shares its hash with the other draw, and
    IREE then cuts that hash into a dozen dispatches) and most share one shape: IREE compiles ~0.5 s of
    CPU per draw, so this program holds one draw per code path."""
    key = hr.key(seed)
    a, b = hr.split(key)                                   # unpacking a traced [2, 2] batch of keys
    folded = hr.fold_in(key, data)
    k = hr.split(folded, 8)
    s = (4, 5)
    return {
        "kat": hr.threefry2x32(k0, k1, x0, x1),
        "key": key, "key64": hr.key(seed64), "key_const": hr.key(2 ** 40 + 5), "split": (a, b), "fold": folded,
        "keys": k,
        "bits8": hr.bits(k[0], s, np.uint8), "bits64": hr.bits(k[1], s, np.uint64),
        "uniform_bounds": hr.uniform(k[2], s, np.float32, -2.5, 3.0),
        "uniform64": hr.uniform(k[3], s, np.float64, np.arange(5.0) / 4 - 1, 2.0),
        "normal": hr.normal(hr.key(seed64), s),
        "randint_u32_top": hr.randint(k[4], s, 3, 2 ** 32, np.uint32),
        "randint_traced": hr.randint(k[5], s, ops.astype(data % 7, np.int8), np.array([5, 10, 100, 127, 200]),
                                     np.int8),
        "bernoulli_p": hr.bernoulli(k[6], np.array([0.1, 0.3, 0.5, 0.7, 0.9], np.float32), s),
        "perm_rows": hr.permutation(k[7], rows),
    }


def jax_streams(seed, rows):
    """The other code paths, run on the reference backend only (no compiling) and compared with JAX."""
    key = hr.key(seed)
    a, b = hr.split(key)
    return {
        "bits16": hr.bits(a, (2, 3), np.uint16), "bits32": hr.bits(a, (4, 5)), "uniform": hr.uniform(b, (4, 5)),
        "uniform_f16": hr.uniform(b, (4, 5), F16, -1.0, 3.0), "randint_i8": hr.randint(a, (5,), -3, 4, np.int8),
        "randint_array_bounds": hr.randint(a, (2, 3), np.array([0, 10, -4]), np.array([[5], [100]])),
        "bernoulli": hr.bernoulli(a, 0.3, (16,)), "perm": hr.permutation(b, 10), "perm_rows": hr.permutation(b, rows),
        "normal": hr.normal(b, (64,)), "uniform_bounds": hr.uniform(b, (50,), np.float32, -2.5, 3.0),
    }


def half_streams(seed):
    k = hr.split(hr.key(seed), 4)
    return {"uniform_f16": hr.uniform(k[0], (40,), F16, -1.0, 3.0), "uniform_bf16": hr.uniform(k[1], (40,), BF16),
            "normal_f16": hr.normal(k[2], (40,), F16), "normal_bf16": hr.normal(k[3], (40,), BF16)}


ARGS = (*KAT_INPUTS, np.int32(42), np.int64(2 ** 40 + 3), np.uint32(2 ** 32 - 9),
        np.arange(12, dtype=np.float32).reshape(6, 2))
NOT_BIT_EXACT = {"normal", "normal_f16", "normal_bf16"}   # transcendental functions: a few ulps apart
_RESULTS: dict = {}


def results(backend, half=False):
    if (backend, half) not in _RESULTS:
        fn, args = (half_streams, (np.int32(7),)) if half else (streams, ARGS)
        out = hj.jit(fn, backend=backend)(*args)
        _RESULTS[backend, half] = {k: tuple(np.asarray(x) for x in v) if isinstance(v, tuple) else np.asarray(v)
                                   for k, v in out.items()}
    return _RESULTS[backend, half]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def test_known_answers_traced(backend):
    got = results(backend)["kat"]
    for g, w in zip(got, KAT_OUTPUTS):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("half", [False, pytest.param(True, id="f16-bf16")])
def test_every_backend_gives_the_reference_bits(backend, half):
    got, want = results(backend, half), results("reference", half)
    assert set(got) == set(want)
    for name in want:
        if name in NOT_BIT_EXACT:
            np.testing.assert_allclose(got[name].astype(np.float64), want[name].astype(np.float64),
                                       rtol=4 * ml_dtypes.finfo(want[name].dtype).eps, atol=4 * ml_dtypes.finfo(want[name].dtype).eps,
                                       err_msg=name)
            assert got[name].dtype == want[name].dtype
        elif isinstance(want[name], tuple):
            assert all(same_bits(g, w) for g, w in zip(got[name], want[name])), name
        else:
            assert same_bits(got[name], want[name]), f"{name}: {got[name]} != {want[name]}"


def test_streams_compile_for_cuda():
    from hlojit.pipeline import compile_program, cuda
    compile_program(hj.jit(streams).lower(*ARGS).program, cuda())


def test_values_are_what_they_claim():
    r = results("reference")
    assert r["key"].tolist() == [0, 42] and r["key64"].tolist() == [256, 3] and r["key_const"].tolist() == [256, 5]
    assert r["keys"].shape == (8, 2) and r["keys"].dtype == U32 and len({tuple(k) for k in r["keys"]}) == 8
    assert r["bits8"].dtype == np.uint8 and r["bits64"].dtype == np.uint64 and r["bits64"].max() >= 2 ** 32
    assert ((r["uniform_bounds"] >= -2.5) & (r["uniform_bounds"] < 3)).all()
    assert r["uniform64"].dtype == np.float64 and (r["uniform64"] >= np.arange(5.0) / 4 - 1).all() and \
        (r["uniform64"] < 2).all()
    assert r["randint_u32_top"].dtype == U32 and (r["randint_u32_top"] >= 3).all() and \
        r["randint_u32_top"].max() > 2 ** 31
    low = int(ARGS[6]) % 7
    assert r["randint_traced"].dtype == np.int8 and (r["randint_traced"] >= low).all() and \
        (r["randint_traced"] < [5, 10, 100, 127, 127]).all()     # 200 is clipped to int8's 127 + 1
    assert r["bernoulli_p"].dtype == np.bool_ and r["normal"].dtype == np.float32
    rows = ARGS[-1]
    assert sorted(map(tuple, r["perm_rows"].tolist())) == sorted(map(tuple, rows.tolist()))
    assert r["perm_rows"].tolist() != rows.tolist()


def test_half_precision_values():
    r = results("reference", half=True)
    assert r["uniform_f16"].dtype == F16 and ((r["uniform_f16"] >= -1) & (r["uniform_f16"] < 3)).all()
    assert r["uniform_bf16"].dtype == BF16 and ((r["uniform_bf16"] >= 0) & (r["uniform_bf16"] < 1)).all()
    assert r["normal_bf16"].dtype == BF16 and np.isfinite(r["normal_f16"]).all()


# --- JAX's numbers ---------------------------------------------------------------------------------

def test_the_same_numbers_as_jax():
    """jax.random with its default (partitionable) threefry: the same key gives the same bits."""
    jax = pytest.importorskip("jax")
    if not jax.config.jax_threefry_partitionable:
        pytest.skip("this JAX does not use the partitionable threefry by default")
    jr = jax.random
    rows = ARGS[-1]
    r = {k: np.asarray(v) for k, v in hj.jit(jax_streams, backend="reference")(np.int32(42), rows).items()}

    @jax.jit   # one JAX program for all of them: compiling each call on its own takes ~1 s apiece
    def draws(key, rows):
        a, b = jr.split(key)
        exact = {
            "bits16": jr.bits(a, (2, 3), np.uint16), "bits32": jr.bits(a, (4, 5)), "uniform": jr.uniform(b, (4, 5)),
            "uniform_f16": jr.uniform(b, (4, 5), F16, -1.0, 3.0), "randint_i8": jr.randint(a, (5,), -3, 4, np.int8),
            "randint_array_bounds": jr.randint(a, (2, 3), np.array([0, 10, -4]), np.array([[5], [100]])),
            "bernoulli": jr.bernoulli(a, 0.3, (16,)), "perm": jr.permutation(b, 10),
            "perm_rows": jr.permutation(b, rows),
        }
        close = {"uniform_bounds": jr.uniform(b, (50,), np.float32, -2.5, 3.0), "normal": jr.normal(b, (64,))}
        keys = {"key": key, "fold": jr.fold_in(key, ARGS[6]), "split": jr.split(key)}
        return exact, close, keys
    exact, close, keys = draws(jr.PRNGKey(42), rows)
    for name, want in exact.items():
        assert same_bits(r[name], np.asarray(want)), f"{name}: {r[name]} != {np.asarray(want)}"
    # JAX's CPU code fuses u * (max - min) + min into an fma; hlojit rounds the product (on every target)
    np.testing.assert_allclose(r["uniform_bounds"], close["uniform_bounds"], rtol=0, atol=5e-7)
    np.testing.assert_allclose(r["normal"], close["normal"], rtol=2e-6, atol=2e-6)
    streams_ = results("reference")   # the keys of the main program
    assert same_bits(streams_["key"], np.asarray(keys["key"])) and same_bits(streams_["fold"], np.asarray(keys["fold"]))
    assert same_bits(np.stack(streams_["split"]), np.asarray(keys["split"]))


# --- statistics (fixed keys: these either hold or not, no retries) ------------------------------------

N = 100_000


def sampled(key):
    k = hr.split(key, 6)
    return {"u": hr.uniform(k[0], (N,)), "u2": hr.uniform(k[1], (N,)), "n": hr.normal(k[2], (N,)),
            "i": hr.randint(k[3], (N,), -5, 17), "b": hr.bernoulli(k[4], 0.3, (N,)),
            "p": hr.permutation(k[5], 1000), "keys": hr.split(k[5], 1000)}


def test_statistics():
    s = {k: np.asarray(v).astype(np.float64) if k in ("u", "u2", "n") else np.asarray(v)
         for k, v in hj.jit(sampled, backend="reference")(hr.key(2024)).items()}
    z = 5.0   # every bound is five standard errors wide
    u, n = s["u"], s["n"]
    assert abs(u.mean() - 0.5) < z * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < z * math.sqrt(1 / 180 / N)                  # var of U(0,1)^2 terms: 1/180
    assert abs(np.corrcoef(u, s["u2"])[0, 1]) < z / math.sqrt(N)                # split keys: independent streams
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < z / math.sqrt(N)             # neighbours: independent
    counts = np.histogram(u, bins=20, range=(0, 1))[0]
    assert chi2_p(counts, np.full(20, N / 20)) > 1e-4
    assert abs(n.mean()) < z / math.sqrt(N)
    assert abs(n.std() - 1) < z * math.sqrt(1 / (2 * N))
    assert abs(np.mean(n ** 3)) < z * math.sqrt(15 / N)                         # skewness 0
    assert abs(np.mean(n ** 4) - 3) < z * math.sqrt(96 / N)                     # kurtosis 3
    assert abs(np.mean(np.abs(n) > 2) - 0.0455003) < z * math.sqrt(0.0455 * 0.9545 / N)
    edges = np.array([-np.inf, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, np.inf])
    cdf = np.array([0.5 * math.erfc(-e / math.sqrt(2)) if np.isfinite(e) else float(e > 0) for e in edges])
    assert chi2_p(np.histogram(n, bins=edges)[0], N * np.diff(cdf)) > 1e-4
    i = s["i"]
    assert i.min() == -5 and i.max() == 16
    assert chi2_p(np.bincount(i + 5, minlength=22), np.full(22, N / 22)) > 1e-4
    assert abs(s["b"].mean() - 0.3) < z * math.sqrt(0.21 / N)
    assert sorted(s["p"].tolist()) == list(range(1000))
    assert abs(np.corrcoef(s["p"], np.arange(1000))[0, 1]) < z / math.sqrt(1000)
    assert len({tuple(k) for k in s["keys"].tolist()}) == 1000


def chi2_p(observed, expected) -> float:
    """P(chi-square >= the statistic) with len - 1 degrees of freedom (Wilson-Hilferty)."""
    stat = float(((observed - expected) ** 2 / expected).sum())
    k = len(observed) - 1
    zscore = ((stat / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(zscore / math.sqrt(2))


# --- outside hj.jit ----------------------------------------------------------------------------------

def test_outside_jit_gives_what_jit_gives():
    """Outside hj.jit each function runs as a small program on the default backend (key needs none)."""
    key = hr.key(42)
    assert isinstance(key, hj.Array) and key.dtype == U32 and np.asarray(key).tolist() == [0, 42]
    assert np.asarray(hr.key(-1)).tolist() == [0, 2 ** 32 - 1]
    assert np.asarray(hr.key(-2 ** 40)).tolist() == [2 ** 32 - 256, 0]
    a, b = hr.split(key)                                   # an hj.Array of keys unpacks
    r = results("reference")
    assert same_bits(np.asarray(a), r["split"][0]) and same_bits(np.asarray(b), r["split"][1])
    folded = hr.fold_in(key, int(ARGS[6]))                 # a Python int: traced, not a compile per value
    assert same_bits(np.asarray(folded), r["fold"])
    assert not same_bits(np.asarray(hr.fold_in(key, 1)), np.asarray(hr.fold_in(key, 2)))
    draw = hj.jit(lambda k: hr.uniform(k, (4, 5), np.float32, -2.5, 3.0), backend="reference")
    assert same_bits(np.asarray(hr.uniform(a, (4, 5), np.float32, -2.5, 3.0)), np.asarray(draw(a)))


# --- errors ------------------------------------------------------------------------------------------

line_of = functools.partial(line_in, __file__)   # the line of this file holding a fragment


K = np.array([0, 42], U32)


@pytest.mark.parametrize("fn, error, message, fragment", [
    (lambda k: hr.uniform(k.astype(np.float32), (2,)), hj.DTypeError,
     r"^uniform: key must be a uint32\[2\] key from hj.random.key\(seed\), not float32\[2\]$", "k.astype(np.float32), (2,)"),
    (lambda k: hr.normal(hr.split(k, 3)), hj.ShapeError, r"^normal: key must be .* not uint32\[3, 2\]; take one key of a "
     r"batch first \(keys\[i\]\)$", "hr.normal(hr.split(k, 3))"),
    (lambda k: hr.uniform(k, (2,), np.int32), hj.DTypeError, r"^uniform: dtype must be a float type, not int32$",
     "hr.uniform(k, (2,), np.int32)"),
    (lambda k: hr.uniform(k, (2, 3), np.float32, np.zeros(4, np.float32)), hj.ShapeError,
     r"^uniform: minval float32\[4\] does not broadcast to the shape \(2, 3\)$", "np.zeros(4, np.float32))"),
    (lambda k: hr.uniform(k, (2, -1)), hj.ShapeError, r"^uniform: shape \(2, -1\) has a negative dimension$",
     "hr.uniform(k, (2, -1))"),
    (lambda k: hr.normal(k, (2,), np.float64), hj.DTypeError, r"^normal: float64 is not supported", "hr.normal(k, (2,), np.float64)"),
    (lambda k: hr.randint(k, (2,), 0, 5, np.float32), hj.DTypeError,
     r"^randint: dtype must be an 8-, 16- or 32-bit integer type, not float32$", "hr.randint(k, (2,), 0, 5, np.float32)"),
    (lambda k: hr.randint(k, (2,), 0, 1.5), hj.DTypeError, r"^randint: maxval must be an integer, not float64\[\]$",
     "hr.randint(k, (2,), 0, 1.5)"),
    (lambda k: hr.bits(k, (2,), np.int32), hj.DTypeError, r"^bits: dtype must be an unsigned integer type, not int32$",
     "hr.bits(k, (2,), np.int32)"),
    (lambda k: hr.bernoulli(k, 1), hj.DTypeError, r"^bernoulli: p must be a float, not int32\[\]$", "hr.bernoulli(k, 1)"),
    (lambda k: hr.permutation(k, ops.sum(k)), hj.ShapeError,
     r"^permutation: x must be an int or an array with at least one axis, not uint32\[\]$", "hr.permutation(k, ops.sum(k))"),
    (lambda k: hr.fold_in(k, 1.5), hj.DTypeError, r"^fold_in: data must be an integer scalar, not float32\[\]$",
     "hr.fold_in(k, 1.5)"),
    (lambda k: hr.key(ops.sum(k).astype(np.float32)), hj.DTypeError, r"^key: seed must be an integer scalar, not float32\[\]$",
     "hr.key(ops.sum(k).astype(np.float32))"),
    (lambda k: hr.split(k, -1), ValueError, r"^split: num must be a non-negative int, not -1$", "hr.split(k, -1)"),
], ids=["key-dtype", "key-batch", "uniform-int", "minval-shape", "negative-shape", "normal-f64", "randint-float",
        "randint-float-bound", "bits-signed", "bernoulli-int", "permutation-scalar", "fold-in-float", "key-float",
        "split-negative"])
def test_errors_name_the_op_and_the_line(fn, error, message, fragment):
    with pytest.raises(error) as info:
        hj.jit(fn, backend="reference").lower(K)
    text = str(info.value)
    site = f" at test_random.py:{line_of(fragment)}"
    assert text.endswith(site), text
    assert re.search(message, text[:-len(site)]), text
