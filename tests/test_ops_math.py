"""The math family on every backend against numpy (and math.erf/erfc/lgamma, scipy's digamma): the
elementwise rows it added to elementwise.py's tables (composites in ops/math.py, trig.py, special.py),
clip, nan_to_num, the parameterised activations, bitcast, and ops/statistics.py (var ... top_k).

Compiling costs ~0.4 s per module per IREE backend and grows with the module, so every group below is
ONE jitted function per backend: each elementwise op is applied once to the concatenation of all its
test inputs ("segments"), and each segment is checked on its slice of the result with its own rule:
  - "tol": conftest.assert_close at the dtype's tolerance (f32 1e-6, f64 1e-12, relative plus an absolute
    floor of the same size), NaNs equal;
  - "ulp": relative error only (no floor), in units of the dtype's epsilon: for tails and tiny values,
    where the absolute floor would hide everything (erfc(20) = 5e-176, expm1(1e-300));
  - "exact": bit-for-bit (log2 of powers of two, trunc, relu6, copysign, nextafter, bitcast ...).
Subnormals stay out of the inputs and results: IREE's CPU code flushes them to zero (every op does).
"""
from __future__ import annotations

import dataclasses
import warnings
import zlib
from typing import Callable

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend.ops.elementwise import UNARY

from conftest import BACKENDS, TOLERANCES, assert_close

F16, BF16, F32, F64 = (np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64))
I8, I32, U8, BOOL = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.bool_))
SHORT = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64", I8: "i8", I32: "i32", U8: "u8", BOOL: "bool"}


@dataclasses.dataclass
class Check:
    """One segment of a case's result: rows [start, stop) of the flat output, checked by `rule`."""
    name: str
    start: int
    stop: int
    rule: str = "tol"          # tol | ulp | exact
    bound: float = 1.0         # tol: tolerance scale; ulp: max relative error in epsilons


@dataclasses.dataclass
class Case:
    id: str
    fn: Callable               # traced: fn(*args) -> Tensor or tuple of Tensors
    args: tuple
    expected: object           # numpy array, or tuple of them for tuple results
    dtype: object              # result dtype (tuple for tuple results)
    checks: list = dataclasses.field(default_factory=list)   # elementwise cases: per-segment rules
    rule: str = "tol"
    bound: float = 1.0


def _eps(dtype) -> float:
    return float(ml_dtypes.finfo(dtype).eps)


def check_values(actual, expected, dtype, rule, bound, where):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == dtype, f"{where}: dtype {actual.dtype} != {dtype}"
    assert actual.shape == expected.shape, f"{where}: shape {actual.shape} != {expected.shape}"
    if rule == "exact" or TOLERANCES[np.dtype(dtype).name][0] == 0:
        same = (actual == expected) | (np.isnan(actual.astype(np.float64)) & np.isnan(expected.astype(np.float64)))
        assert same.all(), (f"{where}: differ at {np.argwhere(~same)[:5].tolist()}: {actual[~same][:5]} vs "
                            f"{expected[~same][:5]}")
        if rule == "exact" and actual.dtype.kind == "f":   # signs of zeros too
            assert (np.signbit(actual) == np.signbit(expected)).all(), f"{where}: signs of zero differ"
    elif rule == "ulp":
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        finite = np.isfinite(e) & (e != 0)
        assert ((a == e) | (np.isnan(a) & np.isnan(e)) | finite).all(), f"{where}: non-finite values differ"
        err = np.abs(a[finite] - e[finite]) / np.abs(e[finite]) / _eps(dtype)
        assert err.size == 0 or err.max() <= bound, (
            f"{where}: {err.max():.3g} eps relative error (bound {bound}) at input #{np.argmax(err)}: "
            f"{a[finite][np.argmax(err)]!r} vs {e[finite][np.argmax(err)]!r}")
    else:
        try:
            assert_close(actual, expected, dtype, scale=bound)
        except AssertionError as e:
            raise AssertionError(f"{where}\n{e}") from None


# --- elementwise: every unary row of the family, one case per (op, dtype) -----------------------------

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -7.25, 1e30, -1e30, 1e-30]
DOMAINS = {"arcsin": (-1, 1), "arccos": (-1, 1), "arctanh": (-1, 1), "arccosh": (1, 40), "log2": (0, 50),
           "log10": (0, 50), "lgamma": (-12, 30), "digamma": (-12, 30), "erf": (-6, 6), "erfc": (-6, 12),
           "log1p": (-1, 10), "exp2": (-130, 130), "sinh": (-90, 90), "cosh": (-90, 90)}
MATH_UNARY = [("cbrt",), ("exp2",), ("log2",), ("log10",), ("sin", "cos", "tan"), ("arcsin",), ("arccos",),
              ("arctan",), ("sinh",), ("cosh",), ("arcsinh",), ("arccosh",), ("arctanh",), ("erf",), ("erfc",),
              ("lgamma",), ("digamma",), ("trunc",), ("relu6",), ("silu",), ("log_sigmoid",), ("expm1",),
              ("log1p",)]
EXACT = {"trunc", "relu6"}
# f32 lgamma of negative x near its zeros (-2.457, -3.956 ...) is log(pi/|sin(pi x)|) - lgamma(1-x), a
# difference of numbers near 2-3: f32 arithmetic leaves ~7e-7 absolute error there (the f32 tolerance's
# absolute floor is 1e-6): scale 2 leaves room for the other backends' last bits.
SCALE = {("lgamma", F32): 2.0}


def _tails(name, dtype):
    """(segment name, inputs, relative bound in eps) that the absolute floor would not see."""
    big = 1e300 if dtype == F64 else 1e30
    pio2 = np.array(np.pi / 2, dtype)           # the float nearest pi/2: cos is pi/2's rounding error
    tails = {
        "sin": [("huge", [big, -big, 1e22, 7.5e15, 1e10, 12345.678]), ("near-pi/2", [pio2, 2 * pio2, 3 * pio2])],
        "cos": [("huge", [big, -big, 1e22, 7.5e15, 1e10, 12345.678]), ("near-pi/2", [pio2, 2 * pio2, 3 * pio2])],
        "tan": [("huge", [big, -big, 1e22, 1e10, 12345.678]), ("near-pi/2", [pio2, 2 * pio2, 3 * pio2])],
        "erfc": [("tail", np.linspace(1, 26 if dtype == F64 else 9, 40))],
        "expm1": [("tiny", [1e-300 if dtype == F64 else 1e-30, 1e-20, -1e-10, 3e-8, -0.2, 0.3])],
        "log1p": [("tiny", [1e-300 if dtype == F64 else 1e-30, 1e-20, -1e-10, 3e-8, -0.2, 0.3])],
        "sinh": [("tiny", [1e-200 if dtype == F64 else 1e-30, -1e-10, 3e-5])],
        "arcsinh": [("tiny", [1e-200 if dtype == F64 else 1e-30, -1e-10, 3e-5]),
                    ("huge", [1e300 if dtype == F64 else 1e30])],
        "arctanh": [("tiny", [1e-200 if dtype == F64 else 1e-30, -1e-10, 3e-5])],
        "erf": [("tiny", [1e-200 if dtype == F64 else 1e-30, -1e-10, 3e-5])],
        "cbrt": [("wide", [1e300 if dtype == F64 else 1e30, -8e-30, 27.0, -0.125])],
        "arctan": [("wide", [1e300 if dtype == F64 else 1e30, -1e-30, 1e5])],
        "log_sigmoid": [("large", [30.0, 60.0] if dtype == F32 else [30.0, 600.0])],
    }.get(name, [])
    if name == "lgamma" and dtype == F32:   # relative accuracy at the zeros 1 and 2 (the fitted form)
        tails.append(("near-zeros", [1 + 2.0 ** -20, 1 - 2.0 ** -20, 2 + 2.0 ** -19, 2 - 2.0 ** -19, 1.001, 1.999]))
    if name == "digamma":   # relative accuracy at psi's positive zero (the fitted form)
        zero = 1.4616321449683623
        tails.append(("near-zero", [zero, zero * (1 + 2.0 ** -20), zero * (1 - 2.0 ** -20), 1.0, 1.25, 1.75, 2.0]))
    return [(segment, np.asarray(values, dtype), 8.0) for segment, values in tails]


def _exact_segments(name, dtype):
    if name == "log2":
        return [("powers-of-2", np.asarray([2.0 ** k for k in range(-60, 61, 7)], dtype))]
    if name == "exp2":
        return [("integers", np.asarray([-100, -9, -1, 0, 1, 10, 100], dtype))]
    if name == "log10":
        return [("powers-of-10", np.asarray([10.0 ** k for k in range(0, 23 if dtype == F64 else 11)], dtype))]
    return []


def _reference(name, x, dtype):
    with np.errstate(all="ignore"):
        return np.asarray(UNARY[name].numpy(x.astype(np.float64))).astype(dtype)


def unary_case(names, dtype):
    """One case applying each op of `names` (ops that share inputs: sin, cos and tan share their argument
    reduction, which the compiler then computes once) to the same concatenated segments."""
    name = names[0]
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype.name}".encode()))
    lo, hi = DOMAINS.get(name, (-20, 20))
    scale = SCALE.get((name, dtype), 1.0)
    segments = [("domain", rng.uniform(lo, hi, 60).astype(dtype), "tol", scale),
                ("specials", np.asarray(SPECIALS, dtype), "tol", scale)]
    if name not in EXACT:
        segments.append(("wide", (np.exp(rng.uniform(-20, 60, 20)) * rng.choice([-1, 1], 20)).astype(dtype),
                         "tol", scale))
    segments += [(s, v, "ulp", b) for s, v, b in _tails(name, dtype)]
    segments += [(s, v, "exact", 0) for s, v in _exact_segments(name, dtype)]
    if name in EXACT:
        segments = [(s, v, "exact", 0) for s, v, _, _ in segments]
    x = np.concatenate([v for _, v, _, _ in segments])
    checks, start = [], 0
    for segment, values, rule, bound in segments:
        checks.append(Check(segment, start, start + values.size, rule, bound))
        start += values.size
    return Case(f"{','.join(names)}-{SHORT[dtype]}", lambda x, ns=names: tuple(getattr(ops, n)(x) for n in ns),
                (x,), tuple(_reference(n, x, dtype) for n in names), dtype, checks)


# --- two-argument ops, clip, nan_to_num, activations, bitcast ------------------------------------------

GRID = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e-30, -7.25, 1e30, 3.0]


def binary_cases():
    cases = []
    for dtype in (F32, F64):
        g = np.asarray(GRID, dtype)
        rng = np.random.default_rng(7)
        x = np.concatenate([np.repeat(g, g.size), rng.uniform(-10, 10, 40)]).astype(dtype)
        y = np.concatenate([np.tile(g, g.size), rng.uniform(-10, 10, 40)]).astype(dtype)
        for name in ("arctan2", "hypot", "copysign", "nextafter"):
            with np.errstate(all="ignore"):
                expected = getattr(np, name)(x, y)
            rule = "exact" if name in ("copysign", "nextafter") else "tol"
            cases.append(Case(f"{name}-{SHORT[dtype]}", lambda a, b, n=name: getattr(ops, n)(a, b), (x, y),
                              expected, dtype, rule=rule))
    xi, yi = np.array([3, -4, 0, 7], np.int32), np.array([4, 3, -5, 0], np.int32)
    for name in ("arctan2", "hypot", "copysign"):   # integers compute in the default float, f32
        cases.append(Case(f"{name}-i32", lambda a, b, n=name: getattr(ops, n)(a, b), (xi, yi),
                          getattr(np, name)(xi.astype(F64), yi.astype(F64)).astype(F32), F32))
    cases.append(Case("arctan2-python-scalar", lambda a: ops.arctan2(a, -1.0), (y[:20],),  # y: the f64 inputs
                      np.arctan2(y[:20], -1.0), F64))
    return cases


def misc_cases():
    rng = np.random.default_rng(3)
    x = np.array([np.nan, np.inf, -np.inf, -3.5, -0.0, 0.0, 0.7, 2.0, 9.0], np.float32)
    xd = x.astype(F64)
    xi = np.array([-7, -1, 0, 3, 100], np.int32)
    lo, hi = rng.uniform(-1, 0, (3, 1)).astype(np.float32), np.float32(1.5)
    a = rng.uniform(-4, 4, (3, 9)).astype(np.float32)
    with np.errstate(all="ignore"):
        from math import erf
        gelu = 0.5 * xd * (1 + np.vectorize(erf)(xd / np.sqrt(2)))
        gelu_tanh = 0.5 * xd * (1 + np.tanh(np.sqrt(2 / np.pi) * (xd + 0.044715 * xd ** 3)))
        specs = [
            ("clip-f32", lambda v: ops.clip(v, -1.0, 2.0), (x,), np.clip(x, -1, 2), F32, "exact"),
            ("clip-broadcast-bounds", lambda v, l: ops.clip(v, l, hi), (a, lo), np.clip(a, lo, hi), F32, "exact"),
            ("clip-min-only-i32", lambda v: ops.clip(v, 0), (xi,), np.clip(xi, 0, None), I32, "exact"),
            ("clip-i32-float-bound", lambda v: ops.clip(v, -0.5, 5), (xi,), np.clip(xi.astype(F32), -0.5, 5), F32,
             "exact"),
            ("clip-method-max-only", lambda v: v.clip(max=0.5), (xd,), np.clip(xd, None, 0.5), F64, "exact"),
            ("nan_to_num-f32", lambda v: ops.nan_to_num(v), (x,), np.nan_to_num(x), F32, "exact"),
            ("nan_to_num-f64-values", lambda v: ops.nan_to_num(v, nan=-1.0, posinf=9.0, neginf=-9.0), (xd,),
             np.nan_to_num(xd, nan=-1.0, posinf=9.0, neginf=-9.0), F64, "exact"),
            ("nan_to_num-i32", lambda v: ops.nan_to_num(v), (xi,), xi, I32, "exact"),
            ("gelu-f64", lambda v: ops.gelu(v), (xd,), gelu, F64, "tol"),
            ("gelu-f32", lambda v: ops.gelu(v), (x,), gelu.astype(F32), F32, "tol"),
            ("gelu-tanh-f32", lambda v: ops.gelu(v, approximate=True), (x,), gelu_tanh.astype(F32), F32, "tol"),
            ("elu-f32", lambda v: ops.elu(v, alpha=0.5), (x,), np.where(x > 0, x, 0.5 * np.expm1(xd)).astype(F32),
             F32, "tol"),
            ("elu-i32", lambda v: ops.elu(v), (xi,), np.where(xi > 0, xi, np.expm1(xi.astype(F64))).astype(F32),
             F32, "tol"),
            ("leaky_relu-f64", lambda v: ops.leaky_relu(v, 0.1), (xd,), np.where(xd >= 0, xd, 0.1 * xd), F64, "exact"),
            ("signbit-f32", lambda v: ops.signbit(v), (x,), np.signbit(x), BOOL, "exact"),
            ("bitcast-f32-i32", lambda v: ops.bitcast(v, np.int32), (x,), x.view(np.int32), I32, "exact"),
            ("bitcast-f64-u32-pairs", lambda v: ops.bitcast(v, np.uint32), (xd,), xd.view(np.uint32).reshape(9, 2),
             np.dtype(np.uint32), "exact"),
            ("bitcast-i8-quads-f32", lambda v: ops.bitcast(v, np.float32), (x.view(np.int8).reshape(9, 4),), x, F32,
             "exact"),
            ("bitcast-i32-u32", lambda v: ops.bitcast(v, np.uint32), (xi,), xi.view(np.uint32), np.dtype(np.uint32),
             "exact"),
        ]
    return [Case(cid, fn, args, np.asarray(expected), dt, rule=rule) for cid, fn, args, expected, dt, rule in specs]


# --- statistics --------------------------------------------------------------------------------------

def _stat_inputs():
    rng = np.random.default_rng(11)
    f = rng.integers(-4, 5, (4, 6)).astype(np.float32)   # ties on purpose
    f[0, 2], f[0, 4], f[1, 3], f[2, :] = np.nan, np.nan, np.inf, -np.inf
    d = rng.uniform(-3, 3, (3, 5, 4))
    i = rng.integers(-3, 4, (5, 6)).astype(np.int32)
    b = rng.random((3, 7)) < 0.5
    s = rng.integers(-100, 100, (2, 40)).astype(np.int8)
    return f, d, i, b, s


def _log_softmax(x, axis):
    """JAX's log_softmax, in f64: x - max - log(sum(exp(x - max))), so an inf makes its slice NaN
    (inf - inf), as jax.nn.log_softmax gives (JAX 0.10.2: [inf, 1, 2] -> [nan, nan, nan])."""
    x = x.astype(np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _softmax(x, axis):
    """JAX's softmax, in f64: exp(x - max) / sum (jax.nn.softmax([inf, 1, 2]) is [nan, nan, nan])."""
    e = np.exp(x.astype(np.float64) - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def statistics_cases():
    f, d, i, b, s = _stat_inputs()
    fin = np.nan_to_num(f, nan=1.0, posinf=2.0, neginf=-3.0)
    long = np.random.default_rng(5).uniform(0.5, 1.5, (2, 64))
    longi = np.random.default_rng(6).integers(-1000, 1000, (130, 2)).astype(np.int32)
    infs = np.array([[-np.inf, 0.0, 1.0], [np.inf, 1.0, 2.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0.0, 1.0]],
                    np.float32)
    with np.errstate(all="ignore"):
        specs = [
            ("var-f64-ddof1-keepdims", lambda x: ops.var(x, axis=(0, 2), ddof=1, keepdims=True), (d,),
             np.var(d, axis=(0, 2), ddof=1, keepdims=True), F64),
            ("var-nan-inf", lambda x: ops.var(x, axis=1), (f,), np.var(f.astype(F64), axis=1), F32),
            ("var-i32-all", lambda x: ops.var(x), (i,), np.var(i.astype(F64)), F32),
            ("var-ddof-equals-n", lambda x: ops.var(x, axis=0, ddof=5), (i,), np.var(i.astype(F64), axis=0, ddof=5),
             F32),
            ("std-method-ddof", lambda x: x.std(ddof=1), (d,), np.std(d, ddof=1), F64),
            ("argmax-nan-first", lambda x: ops.argmax(x, axis=1), (f,), np.argmax(f, axis=1), I32),
            ("argmin-nan-first", lambda x: ops.argmin(x, axis=1), (f,), np.argmin(f, axis=1), I32),
            ("argmax-ties-i32", lambda x: ops.argmax(x, axis=-1), (i,), np.argmax(i, axis=-1), I32),
            ("argmin-ties-i32-all", lambda x: ops.argmin(x), (i,), np.argmin(i), I32),
            ("argmax-all-keepdims", lambda x: ops.argmax(x, keepdims=True), (d,), np.argmax(d, keepdims=True), I32),
            ("argmin-bool-method", lambda x: x.argmin(axis=0), (b,), np.argmin(b, axis=0), I32),
            ("logsumexp-f32", lambda x: ops.logsumexp(x, axis=1), (f,),
             np.log(np.sum(np.exp(f.astype(F64)), axis=1)), F32),
            ("logsumexp-f64-large", lambda x: ops.logsumexp(x * 300, axis=0), (d,),
             np.log(np.sum(np.exp(d * 300 - (d * 300).max(0)), axis=0)) + (d * 300).max(0), F64),
            ("logsumexp-i32-keepdims", lambda x: ops.logsumexp(x, keepdims=True), (i,),
             np.log(np.sum(np.exp(i.astype(F64)), keepdims=True)), F32),
            ("logsumexp-empty", lambda x: ops.logsumexp(x, axis=0), (np.zeros((0, 3), np.float32),),
             np.full((3,), -np.inf), F32),
            ("softmax-f32", lambda x: ops.softmax(x), (fin,), np.exp(fin - fin.max(-1, keepdims=True)) /
             np.exp(fin - fin.max(-1, keepdims=True)).sum(-1, keepdims=True), F32),
            ("softmax-f64-axis0", lambda x: ops.softmax(x * 200, axis=0), (d,), np.exp(d * 200 - (d * 200).max(0)) /
             np.exp(d * 200 - (d * 200).max(0)).sum(0), F64),
            ("log_softmax-f32-infs", lambda x: ops.log_softmax(x, axis=1), (infs,), _log_softmax(infs, 1), F32),
            ("softmax-f32-infs", lambda x: ops.softmax(x, axis=1), (infs,), _softmax(infs, 1), F32),
            ("logsumexp-f32-infs", lambda x: ops.logsumexp(x, axis=1), (infs,),
             [1.0 + np.log1p(np.e ** -1), np.inf, -np.inf, np.nan], F32),
            ("log_softmax-f64", lambda x: ops.log_softmax(x, axis=(1, 2)), (d,),
             d - np.log(np.sum(np.exp(d), axis=(1, 2), keepdims=True)), F64),
            ("cumsum-all", lambda x: ops.cumsum(x), (i,), np.cumsum(i).astype(I32), I32),
            ("cumsum-i8-to-i32", lambda x: ops.cumsum(x, axis=1), (s,), np.cumsum(s.astype(I32), axis=1), I32),
            ("cumsum-bool", lambda x: ops.cumsum(x, axis=1), (b,), np.cumsum(b, axis=1).astype(I32), I32),
            ("cumsum-f64-64", lambda x: ops.cumsum(x, axis=1), (long,), np.cumsum(long, axis=1), F64),
            ("cumsum-i32-log-step", lambda x: ops.cumsum(x, axis=0), (longi,), np.cumsum(longi, 0), I32),  # > 128
            ("cumsum-dtype-f64", lambda x: ops.cumsum(x, axis=0, dtype=np.float64), (i,),
             np.cumsum(i, axis=0, dtype=F64), F64),
            ("cumsum-method-nan", lambda x: x.cumsum(axis=1), (f,), np.cumsum(f, axis=1), F32),
            ("cumprod-i32-axis0", lambda x: ops.cumprod(x, axis=0), (i,), np.cumprod(i, axis=0), I32),
            ("cumprod-f64", lambda x: ops.cumprod(x, axis=-1), (d,), np.cumprod(d, axis=-1), F64),
            ("cummax-nan", lambda x: ops.cummax(x, axis=1), (f,), np.maximum.accumulate(f, axis=1), F32),
            ("cummin-i32", lambda x: ops.cummin(x, axis=0), (i,), np.minimum.accumulate(i, axis=0), I32),
            ("cummax-bool", lambda x: ops.cummax(x, axis=1), (b,), np.maximum.accumulate(b, axis=1), BOOL),
        ]
    return [Case(cid, fn, args, np.asarray(expected).astype(dt), dt, bound=4.0)
            for cid, fn, args, expected, dt in specs]


def _top_k(x, k):
    """numpy's answer for top_k: largest first, NaN largest, equal values by position."""
    idx = np.array([np.lexsort((np.arange(r.size), -np.where(np.isnan(r), 0, r.astype(np.float64)), ~np.isnan(r)))[:k]
                    for r in x.reshape(-1, x.shape[-1])]).reshape(x.shape[:-1] + (k,))
    return np.take_along_axis(x, idx, -1), idx.astype(np.int32)


def sort_cases():
    f, d, i, b, s = _stat_inputs()
    z = np.array([[0.0, -0.0, 1.0, -0.0, np.nan, -np.inf, 0.0, np.inf, -1.0, np.nan]], np.float32)
    u = np.random.default_rng(2).integers(0, 4, (3, 2, 9)).astype(np.uint8)
    specs = [
        ("sort-f32-nan-last", lambda x: ops.sort(x), (f,), np.sort(f), F32),
        ("sort-f64-3d-axis1", lambda x: ops.sort(x, axis=1), (d,), np.sort(d, axis=1), F64),
        ("sort-flattened", lambda x: ops.sort(x, axis=None), (i,), np.sort(i, axis=None), I32),
        ("sort-bool", lambda x: ops.sort(x), (b,), np.sort(b), BOOL),
        ("argsort-f32-stable-nan", lambda x: ops.argsort(x), (f,), np.argsort(f, kind="stable"), I32),
        ("argsort-signed-zeros", lambda x: ops.argsort(x), (z,), np.argsort(z, kind="stable"), I32),
        ("argsort-i32-axis0", lambda x: ops.argsort(x, axis=0), (i,), np.argsort(i, axis=0, kind="stable"), I32),
        ("argsort-i8-flattened", lambda x: ops.argsort(x, axis=None), (s,), np.argsort(s, axis=None, kind="stable"),
         I32),
    ]
    cases = [Case(cid, fn, args, np.asarray(e).astype(dt), dt, rule="exact") for cid, fn, args, e, dt in specs]
    for cid, x, k in (("top_k-f32-nan", f, 3), ("top_k-f32-zeros", z, 10), ("top_k-i32-ties", i, 4),
                      ("top_k-f64-3d", d, 2), ("top_k-u8-all", u, 9), ("top_k-zero", i, 0)):
        values, indices = _top_k(x, k)
        cases.append(Case(cid, lambda x, k=k: ops.top_k(x, k), (x,), (values, indices), (x.dtype, I32), rule="exact"))
    return cases


# --- f16 / bf16: computed in f32 and rounded once ------------------------------------------------------

def half_cases():
    cases = []
    for dtype in (F16, BF16):
        x = np.array([-3.0, -0.75, 0.0, 0.3, 1.0, 2.5, 6.0, np.nan, np.inf], dtype)
        p = np.array([0.01, 0.3, 1.0, 2.5, 9.0], dtype)
        if dtype == F16:
            ops_here = (("sin", x), ("erfc", x), ("lgamma", p))
        else:
            ops_here = (("cbrt", x), ("log2", p), ("arctan", x))
        for name, v in ops_here:
            cases.append(Case(f"{name}-{SHORT[dtype]}", lambda a, n=name: getattr(ops, n)(a), (v,),
                              _reference(name, v, dtype), dtype))
        cases.append(Case(f"arctan2-{SHORT[dtype]}", lambda a, b: ops.arctan2(a, b), (x, x[::-1].copy()),
                          np.arctan2(x.astype(F64), x[::-1].astype(F64)).astype(dtype), dtype))
        cases.append(Case(f"copysign-{SHORT[dtype]}", lambda a, b: ops.copysign(a, b), (x, -x),
                          np.copysign(x.astype(F64), -x.astype(F64)).astype(dtype), dtype, rule="exact"))
    return cases


def accumulation_cases():
    """16-bit floats accumulate in f32 and round once (as JAX): a float16 accumulator stops counting at
    2048 (sum(ones(4096)) was 2048 on iree:cpu, its mean 0.5), a bfloat16 one at 256 (on the reference
    backend too). Closed forms: sums of ones, products near 1, a variance of 1 around a large mean."""
    return [case for dtype in (F16, BF16) for case in _accumulation_cases(dtype)]


def _accumulation_cases(dtype):
    """One dtype's cases (a function of its own: the lambdas close over this dtype's n)."""
    dt = SHORT[dtype]
    n = 4096 if dtype == F16 else 1024
    ones = np.ones(n, dtype)
    tiny = 2.0 ** (-10 if dtype == F16 else -7)      # 1 + tiny: the next number after 1
    near_one = np.full(int(1 / tiny), 1 + tiny, dtype)
    spread = np.tile(np.array([199, 201], dtype), 2048)   # mean 200, variance 1; sum 819200
    img, kernel = np.ones((1, 1, 64, 64), dtype), np.ones((1, 1, 64, 64), dtype)
    wide_img, wide_kernel = np.ones((1, 8, 8, 128), dtype), np.ones((8, 8, 128, 2), dtype)  # im2col
    cumsum = np.cumsum(ones.astype(F64)).astype(dtype)
    specs = [
        ("sum-ones", ops.sum, (ones,), n, "exact"),
        ("sum-ones-axis1", lambda x: ops.sum(ops.broadcast_to(x, (3, n)), axis=1), (ones,), [n] * 3, "exact"),
        ("mean-ones", ops.mean, (ones,), 1.0, "exact"),
        ("prod-near-one", ops.prod, (near_one,), np.prod(near_one.astype(F64)), "tol"),
        ("var-around-200", ops.var, (spread,), 1.0, "exact"),
        ("std-around-200", ops.std, (spread,), 1.0, "exact"),
        ("matmul-ones", lambda x: ops.matmul(ops.broadcast_to(x, (2, n)), ops.broadcast_to(x[:, None], (n, 3))),
         (ones,), np.full((2, 3), n), "exact"),
        ("matmul-vector-matrix", lambda x: ops.matmul(x, ops.broadcast_to(x[:, None], (n, 3))), (ones,),
         [n] * 3, "exact"),
        ("dot-vectors", ops.dot, (ones, ones), n, "exact"),
        ("dot_general-batch", lambda x: ops.dot_general(ops.broadcast_to(x, (2, n)), ops.broadcast_to(x, (2, n)),
                                                       ((1,), (1,)), ((0,), (0,))), (ones,), [n] * 2, "exact"),
        ("cumsum-ones", ops.cumsum, (ones,), cumsum, "exact"),
        ("logsumexp-zeros", lambda x: ops.logsumexp(x - 1), (ones,), np.log(n), "tol"),
        ("softmax-zeros", lambda x: ops.softmax(x - 1), (ones,), np.full(n, 1 / n), "exact"),
        ("log_softmax-zeros", lambda x: ops.log_softmax(x - 1), (ones,), np.full(n, -np.log(n)), "tol"),
        ("avg_pool-64x64", lambda x: ops.avg_pool(x, (64, 64)), (img,), np.ones((1, 1, 1, 1)), "exact"),
        ("conv-64x64", lambda x, w: ops.conv(x, w), (img, kernel), np.full((1, 1, 1, 1), 4096), "exact"),
        ("conv-im2col-8x8x128", lambda x, w: ops.conv(x, w, layout="NHWC"), (wide_img, wide_kernel),
         np.full((1, 1, 1, 2), 8192), "exact"),
    ]
    return [Case(f"{name}-{dt}", fn, args, np.asarray(expected, F64).astype(dtype), dtype, rule=rule)
            for name, fn, args, expected, rule in specs]


# --- groups: one compiled module per (backend, group) -----------------------------------------------

def _groups():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return {
            "unary-f32": [unary_case(n, F32) for n in MATH_UNARY],
            "unary-f64": [unary_case(n, F64) for n in MATH_UNARY],
            "binary-misc": binary_cases() + misc_cases(),
            "statistics": statistics_cases(),
            "sort": sort_cases(),
            "half": half_cases(),
            "accumulate": accumulation_cases(),
        }


GROUPS = _groups()
# IREE 3.13's vmvx compiles no f16 arithmetic, not even f16 <-> f32 converts: the pipeline computes f16 in f32
# (pipeline/vmvx_rewrites.py), but not every accumulating form yet
VMVX_HALF = ("IREE vmvx extends f16 operands inside a dispatch of the accumulating forms (arith.extf f16 -> f32 "
             "illegal) that pipeline/vmvx_rewrites.py does not compute in f32")
_RESULTS: dict = {}


def _results(backend, group):
    if (backend, group) not in _RESULTS:
        cases = GROUPS[group]
        fn = hj.jit(lambda inputs: [c.fn(*args) for c, args in zip(cases, inputs)], backend=backend)
        try:
            outs = fn([c.args for c in cases])
            _RESULTS[backend, group] = {c.id: o for c, o in zip(cases, outs)}
        except Exception as e:
            _RESULTS[backend, group] = {c.id: e for c in cases}
    return _RESULTS[backend, group]


def _params():
    for backend in BACKENDS:
        for group, cases in GROUPS.items():
            marks = []
            if group == "accumulate" and backend == "iree:vmvx":
                marks.append(pytest.mark.xfail(reason=VMVX_HALF, raises=hj.CompileError, strict=True))
            for case in cases:
                yield pytest.param(backend, group, case, id=f"{backend}-{case.id}", marks=marks)


@pytest.mark.parametrize("backend, group, case", list(_params()))
def test_op(backend, group, case):
    out = _results(backend, group)[case.id]
    if isinstance(out, Exception):
        raise out.with_traceback(None)   # shared by the group's cases: not the traceback the last grew
    where = f"{case.id} on {backend}"
    if case.checks:
        for name, actual, expected in zip(case.id.rsplit("-", 1)[0].split(","), out, case.expected):
            actual = np.asarray(actual)
            for c in case.checks:
                check_values(actual[c.start:c.stop], expected[c.start:c.stop], case.dtype, c.rule, c.bound,
                             f"{name} on {backend}, {c.name} inputs {case.args[0][c.start:c.stop][:8]}")
    elif isinstance(case.expected, tuple):
        for a, e, d in zip(out, case.expected, case.dtype):
            check_values(np.asarray(a), e, d, case.rule, case.bound, where)
    else:
        check_values(np.asarray(out), case.expected, case.dtype, case.rule, case.bound, where)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_cuda_argsort_of_64_bit_values_along_a_long_axis(dtype):
    """64-bit values sort beside their positions (no room to pack both in one key), and argsort reads the positions
    alone: IREE 3.13's cuda failed to bufferize that sort until sort_rewrites.sorts_on_their_own_buffers."""
    from hlojit.pipeline import compile_program, cuda
    compile_program(hj.jit(lambda x: ops.argsort(x)).lower(np.zeros(64, dtype)).program, cuda())


def test_cuda_compiles_every_op():
    """iree:cuda has no GPU here: every op must at least compile for it (sm_80), each code path once."""
    from hlojit.pipeline import compile_program, cuda
    x32, x64 = np.linspace(-3, 3, 8, dtype=np.float32), np.linspace(-3, 3, 8)
    m32, i32 = x32.reshape(2, 4), np.arange(8, dtype=np.int32).reshape(2, 4)
    long = np.zeros((2, 200), np.float32)

    def everything(x32, x64, m32, i32, long):
        out = [getattr(ops, n)(x32) for names in MATH_UNARY for n in names]
        out += [getattr(ops, n)(x64) for n in ("sin", "lgamma", "expm1", "log1p")]   # f64's own algorithms
        out += [getattr(ops, n)(x32, x32[::-1]) for n in ("arctan2", "hypot", "copysign", "nextafter")]
        out += [ops.clip(x32, -1, 1), ops.nan_to_num(x64), ops.gelu(x32), ops.gelu(x32, approximate=True),
                ops.elu(x32), ops.leaky_relu(x32), ops.bitcast(x64, np.uint32), ops.signbit(x32)]
        out += [ops.var(m32, axis=1), ops.std(x64), ops.argmax(m32, axis=1), ops.argmin(x64), ops.logsumexp(m32),
                ops.softmax(m32), ops.log_softmax(x64), ops.cumsum(i32, axis=1), ops.cumprod(x64),
                ops.cummax(long, axis=1), ops.sort(m32), ops.argsort(m32), ops.argsort(x64),
                *ops.top_k(long, 3), *ops.top_k(x64, 2)]
        return out
    compile_program(hj.jit(everything).lower(x32, x64, m32, i32, long).program, cuda())


# --- dtype rules and trace-time errors --------------------------------------------------------------

def _lower(fn, *args):
    return hj.jit(fn, backend="reference").lower(*args)


def test_result_dtypes():
    def dtypes_of(x8, xi, xb, xu):
        return {"erf-i32": ops.erf(xi), "lgamma-bool": ops.lgamma(xb), "trunc-i8": ops.trunc(x8),
                "argmax": ops.argmax(x8), "cumsum-i8": ops.cumsum(x8), "cumprod-u8": ops.cumprod(xu),
                "cummax-u8": ops.cummax(xu), "clip-i8-weak": ops.clip(x8, 0, 5), "sort-u8": ops.sort(xu),
                "hypot-i32": ops.hypot(xi, xi), "std-i32": ops.std(xi), "softmax-i32": ops.softmax(xi)}
    out = hj.jit(dtypes_of, backend="reference")(np.zeros(3, np.int8), np.zeros(3, np.int32), np.zeros(3, bool),
                                                  np.zeros(3, np.uint8))
    got = {k: np.asarray(v).dtype for k, v in out.items()}
    assert got == {"erf-i32": F32, "lgamma-bool": F32, "trunc-i8": I8, "argmax": I32, "cumsum-i8": I32,
                   "cumprod-u8": np.dtype(np.uint32), "cummax-u8": U8, "clip-i8-weak": I8, "sort-u8": U8,
                   "hypot-i32": F32, "std-i32": F32, "softmax-i32": F32}


ERRORS = [  # (fn, inputs, error, message pattern)
    (lambda x: ops.bitcast(x, np.float64), [np.zeros(3, np.float32)], hj.ShapeError,
     r"bitcast: float32\[3\] to float64 needs a last dimension of 2 elements"),
    (lambda x: ops.bitcast(x, np.int8), [np.zeros(3, bool)], hj.DTypeError, r"bitcast: cannot bitcast bool\[3\]"),
    (lambda x: ops.argmax(x, axis=1), [np.zeros((2, 0), np.float32)], hj.ShapeError,
     r"argmax: attempt to get argmax of an empty sequence \(float32\[2, 0\], axis 1\)"),
    (lambda x: ops.argmin(x, axis=2), [np.zeros((2, 3))], hj.ShapeError, r"argmin: axis 2 is out of range"),
    (lambda x: ops.top_k(x, 4), [np.zeros((2, 3))], hj.ShapeError,
     r"top_k: k=4 is out of range for the last axis of float64\[2, 3\] \(size 3\)"),
    (lambda x: ops.top_k(x, 1), [np.float32(1)], hj.ShapeError, r"top_k: needs an array with at least one"),
    (lambda x: ops.top_k(x, 1.5), [np.zeros(3)], TypeError, r"top_k: k must be a Python int, not float"),
    (lambda x: ops.sort(x, axis=0), [np.float32(1)], hj.ShapeError, r"sort: cannot sort a 0-d array"),
    (lambda x: ops.argsort(x, axis=-3), [np.zeros((2, 2))], hj.ShapeError, r"argsort: axis -3 is out of range"),
    (lambda x: ops.cumsum(x, axis=1), [np.zeros(3)], hj.ShapeError, r"cumsum: axis 1 is out of range"),
    (lambda x: ops.softmax(x, axis=(0, 0)), [np.zeros((2, 2))], hj.ShapeError, r"softmax: repeated axis"),
    (lambda x: ops.var(x, ddof="1"), [np.zeros(3)], TypeError, r"var: ddof must be a number, not str"),
    (lambda x: ops.nan_to_num(x, nan=x), [np.zeros(3)], TypeError, r"nan_to_num: nan must be a Python number"),
    (lambda x: ops.relu6(x), [np.zeros(3, bool)], hj.DTypeError, r"relu6: does not take bool"),
    (lambda x, y: ops.arctan2(x, y), [np.zeros((2, 3)), np.zeros(4)], hj.ShapeError,
     r"arctan2: shapes \(2, 3\) and \(4,\) cannot be broadcast"),
    (lambda x, y: ops.clip(x, y, 1.0), [np.zeros((2, 3)), np.zeros(4)], hj.ShapeError,
     r"clip: shapes \(2, 3\) and \(4,\) cannot be broadcast"),
]


@pytest.mark.parametrize("fn, inputs, error, pattern", ERRORS,
                         ids=[e[3].split(":")[0] + f"-{i}" for i, e in enumerate(ERRORS)])
def test_errors_name_the_op_and_the_users_line(fn, inputs, error, pattern):
    with pytest.raises(error, match=pattern) as info:
        _lower(fn, *inputs)
    assert "test_ops_math.py:" in str(info.value)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "iree:vmvx"])   # vmvx: no f16 at all
def test_half_gradients_accumulate_in_f32(backend):
    """The VJP rules of the f32-accumulating forms (dot_general f16 x f16 -> f32, reduce in f32): the
    kernel's cotangent sums 4096 rows, which a float16 accumulator stops counting at 2048."""
    def loss(x, w):
        return ops.sum(ops.matmul(x, w)) + ops.mean(x) * 8192
    x, w = np.ones((4096, 2), np.float16), np.ones((2, 3), np.float16)
    value, (gx, gw) = hj.jit(hj.value_and_grad(loss, argnums=(0, 1)), backend=backend)(x, w)
    assert np.asarray(value).dtype == np.float16 and float(value) == 4096 * 2 * 3 + 8192
    np.testing.assert_array_equal(np.asarray(gw), np.full((2, 3), 4096, np.float16))
    np.testing.assert_array_equal(np.asarray(gx), np.full((4096, 2), 3 + 1, np.float16))


def test_each_row_without_a_stablehlo_op_has_one_composite_registered_at_its_definition():
    """elementwise.composite registers each (math.py, trig.py and special.py once patched elementwise's tables at
    import); a second registration, or one for a row with its own StableHLO op, is refused."""
    from hlojit.frontend.ops import elementwise as ew
    for rows, table in ((ew.UNARY, ew._COMPOSITE_UNARY), (ew.BINARY, ew._COMPOSITE_BINARY)):
        assert set(table) == {name for name, row in rows.items() if row.hlo is None}
    for name in ("exp2", "exp", "hypot"):
        with pytest.raises(ValueError, match="registered once"):
            ew.composite(name)
