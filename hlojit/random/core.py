"""Random numbers from stateless, counter-based keys, as `jax.random` has them.

    key = hj.random.key(0)                   # a uint32[2] array
    key, sub = hj.random.split(key)
    x = hj.random.normal(sub, (3, 4))

A key is two uint32 words. Every function is pure: the same key gives the same numbers, so split a key
(or fold data into it) for each new stream instead of reusing it. The numbers come from the Threefry-2x32
hash (20 rounds; Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011) of each
element's index under the key, written with uint32 add/xor/shift/or in the frontend, so the reference
interpreter and every IREE target compute the same bits. (stablehlo.rng_bit_generator is
implementation-defined: each compiler may produce other numbers, so it is not used.)

`key`, `split`, `fold_in`, `bits`, `uniform` on [0, 1), `randint`, `bernoulli` and `permutation` give
exactly `jax.random`'s numbers for the same key with JAX's default threefry implementation
(jax_threefry_partitionable=True, JAX's default since 0.5). `uniform` with other bounds rounds
u * (max - min) before adding min on every target (JAX's CPU code fuses them into an fma: an ulp apart);
`normal` uses JAX's recipe, sqrt(2) * erfinv(u), with its own float32 erfinv (a few ulps apart; float64
is refused). IREE's vmvx target cannot compile the 16-bit float types at all.

Each function works inside `hj.jit` (it traces into the caller's program) and outside it (it runs as a
small compiled program on the default backend, cached per shape; `key` needs no program at all).
"""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from ..backends import Array
from ..dialects import stablehlo as hlo
from ..errors import DTypeError, ShapeError
from ..frontend import dtypes, ops, trace
from ..frontend.jit import Exec
from ..frontend.ops._core import as_tensor, barrier, broadcast_shapes, constant, convert, describe, emit, fail, wrap
from ..frontend.tensor import Tensor

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli", "permutation",
           "threefry2x32", "erfinv_f32"]

_U32 = dtypes.uint32
_MASK = 0xFFFFFFFF


# --- running outside hj.jit ------------------------------------------------------------------------

def _shape(op: str, shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        fail(TypeError, op, f"shape must be a tuple of ints, not {shape!r}")
    if any(d < 0 for d in shape):
        fail(ShapeError, op, f"shape {shape} has a negative dimension")
    return shape


def _public(*static: str, wide=()):
    """Trace `fn` inline inside hj.jit; outside, run it as a compiled program, one hj.jit per function
    with `static` (shapes, dtypes, counts) as compile-time constants. Python ints for the arguments in
    `wide` are passed as int64 arrays (traced, so one program serves every value, and exact)."""
    def decorate(fn):
        signature = inspect.signature(fn)
        compiled: dict = {}

        @functools.wraps(fn)
        def public(*args, **kwargs):
            if trace.current() is not None:
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            names = []
            for name in static:
                value = bound.arguments.get(name)
                if name == "shape" and value is not None:
                    bound.arguments[name] = _shape(fn.__name__, value)
                if not isinstance(value, (np.ndarray, np.generic, Array, Tensor)):   # permutation(key, n): an int n
                    names.append(name)                            # is static, an array n is traced
            for name in wide:
                value = bound.arguments.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    bound.arguments[name] = np.int64(value) if -2 ** 63 <= value < 2 ** 63 else value
            names = tuple(names)
            if names not in compiled:
                compiled[names] = Exec(fn, static_argnames=names)
            return compiled[names](**bound.arguments)
        return public
    return decorate


# --- the hash --------------------------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA   # Threefish's key-schedule constant


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 with 20 rounds of the uint32 words (x0, x1) under the key (k0, k1) (all broadcast
    together); returns the two hashed words. Works on Tensors inside hj.jit and on numpy uint32 arrays."""
    if not any(isinstance(v, Tensor) for v in (k0, k1, x0, x1)):
        with np.errstate(over="ignore"):   # uint32 arithmetic wraps, as it should
            return _threefry(*(np.asarray(v, _U32) for v in (k0, k1, x0, x1)))
    words = [ops.astype(as_tensor(v, "threefry2x32"), _U32) for v in (k0, k1, x0, x1)]
    pair = _hash_map(*words, pair=True)
    return _word(pair, 0), _word(pair, 1)


def _threefry(k0, k1, x0, x1):
    """The hash, unrolled: on numpy uint32 arrays, or on 0-d Tensors inside a stablehlo.map body."""
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for r in range(5):
        for rot in _ROTATIONS[r % 2]:
            x0 = x0 + x1
            x1 = (x1 << rot) | (x1 >> (32 - rot))
            x1 = x1 ^ x0
        x0 = x0 + ks[(r + 1) % 3]
        x1 = x1 + ks[(r + 2) % 3] + (r + 1)
    return x0, x1


def _hash_map(k0, k1, x0, x1, pair: bool) -> Tensor:
    """The hash of uint32 Tensors (broadcast together) as the scalar body of ONE stablehlo.map: the words
    xor-ed (JAX's 32-bit bits), or with `pair` both words side by side in a new last axis.

    Why a map: as ~120 elementwise ops per hash, IREE spends ~0.4 s compiling each, and when both words
    are used it cuts the hash into a dozen dispatches; one map is one small dispatch. The key words
    enter the map as operands behind an optimization barrier, so every hash of one shape is the same
    executable and IREE compiles it once."""
    shape = broadcast_shapes("threefry2x32", k0.shape, k1.shape, x0.shape, x1.shape)
    out = (*shape, 2) if pair else shape
    operands = [k0, k1, x0, x1]
    small = [i for i, t in enumerate(operands) if t.ndim == 0]
    for i, v in zip(small, emit(hlo.optimization_barrier, [operands[i].value for i in small])):
        operands[i] = wrap(v, (), _U32)
    inputs = [emit(hlo.broadcast_in_dim, t.value, list(out), list(range(len(shape) - t.ndim, len(shape))))
              for t in operands]
    if pair:
        inputs.append(ops.iota(_U32, out, len(out) - 1).value)

    def body(*args):
        words = [wrap(v, (), _U32) for v in args]
        y0, y1 = _threefry(*words[:4])
        return (ops.where(words[4] == 0, y0, y1) if pair else y0 ^ y1).value
    return wrap(emit(hlo.map, inputs, body), out, _U32)


def _word(pair: Tensor, i: int) -> Tensor:
    """Word i of a [..., 2] pair."""
    shape, n = pair.shape[:-1], pair.ndim
    part = emit(hlo.slice, pair.value, [0] * (n - 1) + [i], [*shape, i + 1])
    return wrap(emit(hlo.reshape, part, list(shape)), shape, pair.dtype)


def _check_key(op: str, key) -> Tensor:
    k = as_tensor(key, op)
    if k.dtype != _U32 or k.shape != (2,):
        fail(DTypeError if k.dtype != _U32 else ShapeError, op,
             f"key must be a uint32[2] key from hj.random.key(seed), not {describe(k)}"
             + ("; take one key of a batch first (keys[i])" if k.dtype == _U32 and k.shape[-1:] == (2,) else ""))
    return k


def _words(key: Tensor) -> tuple[Tensor, Tensor]:
    """The key's two words as uint32 scalars."""
    return tuple(wrap(emit(hlo.reshape, emit(hlo.slice, key.value, [i], [i + 1]), []), (), _U32)
                 for i in (0, 1))


def _counts(op: str, shape) -> Tensor:
    """0, 1, 2 ... over the elements of `shape` in row-major order (the low word of each element's
    64-bit counter; the high word is 0 below 2**32 elements)."""
    n = math.prod(shape)
    if n >= 2 ** 32:
        fail(ShapeError, op, f"shape {shape} has {n} elements; at most 2**32 - 1 are supported")
    return ops.reshape(ops.iota(_U32, (n,)), shape)


def _hash(op: str, key: Tensor, shape, pair: bool = False) -> Tensor:
    """The hash of each element's counter (0, row-major index) under `key` (see _hash_map)."""
    k0, k1 = _words(key)
    return _hash_map(k0, k1, constant(0, _U32), _counts(op, shape), pair)


# --- keys ------------------------------------------------------------------------------------------

def _seed_words(seed: int) -> tuple[int, int]:
    if not -2 ** 63 <= seed < 2 ** 64:
        fail(ValueError, "key", f"seed {seed} does not fit in 64 bits")
    high = 0 if -2 ** 31 <= seed < 2 ** 32 else (seed >> 32) & _MASK   # 32-bit seeds: JAX's [0, seed]
    return high, seed & _MASK


def key(seed) -> Array | Tensor:
    """A key from an integer seed: [high word, low word] of the seed as a 64-bit integer (a 32-bit seed,
    including a negative one, gives [0, seed mod 2**32]), as jax.random.PRNGKey(seed) has it."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        words = np.array(_seed_words(int(seed)), _U32)
        return Array.from_numpy(words) if trace.current() is None else constant(words, _U32)
    if trace.current() is None:
        seed = np.asarray(seed)
        if seed.shape != () or seed.dtype.kind not in "iu":
            fail(DTypeError, "key", f"seed must be an integer scalar, not {seed.dtype}{list(seed.shape)}")
        return key(int(seed))
    s = as_tensor(seed, "key")
    if not dtypes.is_int(s.dtype) or s.shape != ():
        fail(DTypeError if s.shape == () else ShapeError, "key", f"seed must be an integer scalar, not {describe(s)}")
    low = ops.astype(s, _U32)
    high = ops.astype(ops.right_shift(ops.astype(s, dtypes.uint64), 32), _U32) if s.dtype.itemsize == 8 \
        else constant(0, _U32)
    words = [emit(hlo.reshape, w.value, [1]) for w in (high, low)]
    return wrap(emit(hlo.concatenate, words, 0), (2,), _U32)


@_public("num")
def split(key, num: int = 2):
    """`num` new keys (uint32[num, 2]) from `key`: key i is the hash of the counter (0, i)."""
    key = _check_key("split", key)
    if not isinstance(num, (int, np.integer)) or num < 0:
        fail(ValueError, "split", f"num must be a non-negative int, not {num!r}")
    return _hash("split", key, (int(num),), pair=True)


def fold_in(key, data):
    """A new key from `key` and an integer `data` (mod 2**32): the hash of the counter (0, data)."""
    if trace.current() is None and isinstance(data, (int, np.integer)):
        data = np.uint32(int(data) & _MASK)   # traced, not static: one program for every value
    return _fold_in(key, data)


@_public()
def _fold_in(key, data):
    key = _check_key("fold_in", key)
    d = as_tensor(data, "fold_in")
    if not dtypes.is_int(d.dtype) or d.shape != ():
        fail(DTypeError if d.shape == () else ShapeError, "fold_in",
             f"data must be an integer scalar, not {describe(d)}")
    k0, k1 = _words(key)
    return _hash_map(k0, k1, constant(0, _U32), ops.astype(d, _U32), pair=True)


# --- bits and uniform floats -----------------------------------------------------------------------

_UNSIGNED = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def _bits(op: str, key, width: int, shape) -> Tensor:
    """Random unsigned ints of `width` bits (JAX's partitionable threefry bits: the two words xor-ed,
    or for 64 bits the first word above the second)."""
    if width < 64:
        x = _hash(op, key, shape)
        return x if width == 32 else ops.astype(x, _UNSIGNED[width])
    pair = ops.astype(_hash(op, key, shape, pair=True), dtypes.uint64)
    return ops.left_shift(_word(pair, 0), 32) | _word(pair, 1)


@_public("shape", "dtype")
def bits(key, shape=(), dtype=dtypes.uint32):
    """Uniformly random bits as an unsigned integer array of `shape` (jax.random.bits)."""
    key, shape, dtype = _check_key("bits", key), _shape("bits", shape), dtypes.canonical(dtype)
    if dtype.kind != "u":
        fail(DTypeError, "bits", f"dtype must be an unsigned integer type, not {dtype}")
    return _bits("bits", key, dtype.itemsize * 8, shape)


_MANTISSA = {dtypes.float16: 10, dtypes.bfloat16: 7, dtypes.float32: 23, dtypes.float64: 52}


def _unit(op: str, key, shape, dtype) -> Tensor:
    """Floats m * 2**-nmant in [0, 1) from random mantissas m: exactly JAX's bitcast of 1.m minus 1
    (as float32 values for the 16-bit float types)."""
    nmant = _MANTISSA[dtype]
    if dtype == dtypes.float64:   # JAX's bit cast: vmvx cannot convert integers to float64
        mantissa = ops.right_shift(_bits(op, key, 64, shape), 12)
        ones = ops.bitwise_or(mantissa, np.uint64(0x3FF0000000000000))   # 1.m
        return wrap(emit(hlo.bitcast_convert, ones.value, dtype), shape, dtype) - 1.0
    width = 8 if nmant < 8 else dtype.itemsize * 8
    m = ops.right_shift(_bits(op, key, width, shape), width - nmant)
    compute = dtypes.float32 if dtype.itemsize == 2 else dtype   # (16-bit floats: exact in float32)
    return ops.astype(m, compute) * 2.0 ** -nmant


def _float_dtype(op: str, dtype) -> np.dtype:
    dtype = dtypes.canonical(dtype)
    if not dtypes.is_float(dtype):
        fail(DTypeError, op, f"dtype must be a float type, not {dtype}")
    return dtype


def _bound(op: str, value, dtype, shape, name: str) -> Tensor:
    t = as_tensor(value, op)
    _fits(op, t, shape, name)
    return convert(t, dtype)


@_public("shape", "dtype")
def uniform(key, shape=(), dtype=dtypes.float32, minval=0.0, maxval=1.0):
    """Floats uniform in [minval, maxval) (jax.random.uniform)."""
    key, shape, dtype = _check_key("uniform", key), _shape("uniform", shape), _float_dtype("uniform", dtype)
    if isinstance(minval, float) and isinstance(maxval, float) and (minval, maxval) == (0.0, 1.0):
        return _unit("uniform", key, shape, dtype) if dtype.itemsize != 2 else \
            ops.astype(_unit("uniform", key, shape, dtype), dtype)   # u * 1 + 0, exactly
    if isinstance(minval, Tensor) or isinstance(maxval, Tensor):
        lo, hi = _bound("uniform", minval, dtype, shape, "minval"), _bound("uniform", maxval, dtype, shape, "maxval")
        span = hi - lo if dtype.itemsize != 2 else \
            ops.astype(ops.astype(hi, dtypes.float32) - ops.astype(lo, dtypes.float32), dtype)
    else:   # constants: max - min in numpy, so IREE has no constant expression to evaluate at compile time
        lo, hi = (_host_bound("uniform", v, dtype, shape, name) for v, name in ((minval, "minval"), (maxval, "maxval")))
        lo, span = constant(lo, dtype), constant(hi - lo, dtype)
    if dtype.itemsize == 2:
        # vmvx has no f16 arithmetic: each op runs in float32 and is rounded to the 16-bit type, which
        # gives exactly the 16-bit op's result (float32 has more than 2p + 2 bits, so rounding twice is safe)
        def rounded(t):
            return ops.astype(ops.astype(t, dtype), dtypes.float32)
        u = _unit("uniform", key, shape, dtype)
        lo, span = ops.astype(lo, dtypes.float32), ops.astype(span, dtypes.float32)
        return ops.astype(ops.maximum(lo, rounded(rounded(u * span) + lo)), dtype)
    u = _unit("uniform", key, shape, dtype)
    return ops.maximum(lo, barrier(u * span) + lo)


def _host_bound(op: str, value, dtype, shape, name: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "biuf" and array.dtype != dtypes.bfloat16:
        fail(DTypeError, op, f"{name} must be a number, not {array.dtype}")
    if array.ndim > len(shape) or any(d not in (1, s) for d, s in zip(array.shape[::-1], shape[::-1])):
        fail(ShapeError, op, f"{name} {array.dtype}{list(array.shape)} does not broadcast to the shape {shape}")
    return array.astype(dtype)


# --- normal ----------------------------------------------------------------------------------------

# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): single precision, in w = -log(1-x^2)
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)          # w < 5, in w - 2.5
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)               # w >= 5, in sqrt(w) - 3


def erfinv_f32(x: Tensor) -> Tensor:
    """erfinv of float32 x in (-1, 1), to a few ulps (+-inf at +-1)."""
    w = -ops.log1p(-x * x)
    central = w < 5.0
    t = ops.where(central, w - 2.5, ops.sqrt(w) - 3.0)
    p = ops.where(central, _ERFINV_CENTRAL[0], _ERFINV_TAIL[0])
    for a, b in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        p = ops.where(central, a, b) + p * t
    return ops.where(ops.abs(x) == 1.0, x * float("inf"), p * x)


@_public("shape", "dtype")
def normal(key, shape=(), dtype=dtypes.float32):
    """Standard normal floats: sqrt(2) * erfinv(u) for u uniform in (-1, 1), as JAX computes them.
    float16 and bfloat16 are computed in float32; float64 is not supported (the erfinv here is float32's)."""
    key, shape, dtype = _check_key("normal", key), _shape("normal", shape), _float_dtype("normal", dtype)
    if dtype == dtypes.float64:
        fail(DTypeError, "normal", "float64 is not supported: its erfinv approximation has float32 accuracy; "
                                   "sample float32 and convert")
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform(key, shape, dtype, lo, 1.0)
    z = erfinv_f32(ops.astype(u, dtypes.float32)) * float(np.float32(np.sqrt(2)))
    return ops.astype(z, dtype)


# --- integers, booleans, permutations ---------------------------------------------------------------

def _row(keys: Tensor, i: int) -> Tensor:
    """Key i of a uint32[n, 2] batch."""
    return wrap(emit(hlo.reshape, emit(hlo.slice, keys.value, [i, 0], [i + 1, 2]), [2]), (2,), _U32)


def _fits(op: str, t: Tensor, shape, name: str):
    if len(t.shape) > len(shape) or any(d not in (1, s) for d, s in zip(t.shape[::-1], shape[::-1])):
        fail(ShapeError, op, f"{name} {describe(t)} does not broadcast to the shape {shape}")


def _int_bound(value, sample, low: int, high: int, name: str) -> tuple[Tensor, Tensor]:
    """`value` clipped to [low, high] and to `sample`'s range, in `sample`; and whether it was above
    `sample`'s range (maxval = 2**32 for uint32 means "up to the top")."""
    info = np.iinfo(sample)
    low, high = max(low, int(info.min)), min(high, int(info.max))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        v = int(value)
        return constant(min(max(v, low), high), sample), constant(v > info.max, dtypes.bool_)
    t = as_tensor(value, "randint")
    if not dtypes.is_int(t.dtype):
        fail(DTypeError, "randint", f"{name} must be an integer, not {describe(t)}")
    wide = ops.astype(t, dtypes.int64)
    return ops.astype(ops.minimum(ops.maximum(wide, low), high), sample), wide > int(info.max)


def _urem(a: Tensor, b: Tensor) -> Tensor:
    """a mod b for uint32 with XLA's a mod 0 = a (a span of 2**32 has wrapped to 0)."""
    return ops.where(b == 0, a, ops.remainder(a, b))


@_public("shape", "dtype", wide=("minval", "maxval"))
def randint(key, shape, minval, maxval, dtype=dtypes.int32):
    """Integers uniform in [minval, maxval) (jax.random.randint: 64 random bits per value, so the modulo
    bias is tiny; maxval <= minval gives minval). 8- and 16-bit types are sampled as int32."""
    key, shape, dtype = _check_key("randint", key), _shape("randint", shape), dtypes.canonical(dtype)
    if not dtypes.is_int(dtype) or dtype.itemsize == 8:
        fail(DTypeError, "randint", f"dtype must be an 8-, 16- or 32-bit integer type, not {dtype}")
    sample = dtype if dtype.itemsize == 4 else dtypes.int32
    info = np.iinfo(dtype)
    keys = split(key)
    higher, lower = _bits("randint", _row(keys, 0), 32, shape), _bits("randint", _row(keys, 1), 32, shape)
    if not isinstance(minval, Tensor) and not isinstance(maxval, Tensor):
        lo, span, multiplier = _host_span(minval, maxval, sample, info, shape)
        if (span == 0).all():      # the full 2**32 range: no remainders at all
            offset = higher * constant(multiplier, _U32) + lower
        else:
            s = constant(span, _U32)
            rem = (lambda x: ops.remainder(x, s)) if span.all() else (lambda x: _urem(x, s))
            offset = rem(rem(higher) * constant(multiplier, _U32) + rem(lower))
        return ops.astype(constant(lo, sample) + ops.astype(offset, sample), dtype)
    lo, _ = _int_bound(minval, sample, int(info.min), int(info.max), "minval")
    hi, above = _int_bound(maxval, sample, int(info.min), int(info.max) + 1, "maxval")
    _fits("randint", lo, shape, "minval")
    _fits("randint", hi, shape, "maxval")
    span = ops.where(hi <= lo, 1, ops.astype(hi - lo, _U32))
    span = ops.where(above & (hi > lo), span + 1, span)   # maxval above the type: one more (2**32 wraps to 0)
    multiplier = _urem(constant(2 ** 16, _U32), span)    # 2**32 mod span, without overflowing
    multiplier = _urem(multiplier * multiplier, span)
    offset = _urem(_urem(higher, span) * multiplier + _urem(lower, span), span)
    return ops.astype(lo + ops.astype(offset, sample), dtype)


def _host_span(minval, maxval, sample, info, shape):
    """randint's clipped minval, span and 2**32 mod span for constant bounds, computed here rather than
    left to IREE's compile-time evaluation (which compiles and runs a program for each)."""
    bounds = []
    for value, name in ((minval, "minval"), (maxval, "maxval")):
        array = np.asarray(value)
        if array.dtype.kind not in "iu":
            fail(DTypeError, "randint", f"{name} must be an integer, not {array.dtype}{list(array.shape)}")
        if array.ndim > len(shape) or any(d not in (1, s) for d, s in zip(array.shape[::-1], shape[::-1])):
            fail(ShapeError, "randint",
                 f"{name} {array.dtype}{list(array.shape)} does not broadcast to the shape {shape}")
        bounds.append(np.asarray(value, dtype=object))
    smin, smax = int(np.iinfo(sample).min), int(np.iinfo(sample).max)
    clip = np.vectorize(lambda v, low, high: min(max(int(v), low), high), otypes=[object])
    lo = clip(bounds[0], max(int(info.min), smin), min(int(info.max), smax))
    hi = clip(bounds[1], max(int(info.min), smin), min(int(info.max) + 1, smax))
    above = np.vectorize(lambda v: int(v) > smax, otypes=[bool])(bounds[1])
    span = np.where(hi <= lo, 1, (hi - lo) % 2 ** 32)
    span = np.where(above & (hi > lo), (span + 1) % 2 ** 32, span)
    rem = np.vectorize(lambda a, b: a % b if b else a, otypes=[object])      # a mod 0 = a, as XLA has it
    multiplier = rem((rem(2 ** 16, span) ** 2) % 2 ** 32, span)
    return (lo.astype(np.int64).astype(sample), span.astype(np.uint64).astype(_U32),
            multiplier.astype(np.uint64).astype(_U32))


@_public("shape")
def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability p (uniform < p, in p's float type)."""
    key = _check_key("bernoulli", key)
    p = as_tensor(p, "bernoulli")
    if not dtypes.is_float(p.dtype):
        fail(DTypeError, "bernoulli", f"p must be a float, not {describe(p)}")
    shape = p.shape if shape is None else _shape("bernoulli", shape)
    _fits("bernoulli", p, shape, "p")
    return uniform(key, shape, p.dtype) < p


@_public("x")
def permutation(key, x):
    """A random permutation of range(x) for an int x, else of x's rows (its leading axis), as
    jax.random.permutation does it: a stable sort by random 32-bit keys, repeated when collisions matter."""
    key = _check_key("permutation", key)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            fail(ValueError, "permutation", f"x must be a non-negative int or an array, not {x}")
        values = ops.arange(int(x))
    else:
        values = as_tensor(x, "permutation")
        if values.ndim == 0:
            fail(ShapeError, "permutation", f"x must be an int or an array with at least one axis, not "
                                            f"{describe(values)}")
    n = values.shape[0]
    rounds = math.ceil(3 * math.log(max(1, n)) / math.log(2 ** 32 - 1))
    for _ in range(rounds):
        keys = split(key)
        key, sub = _row(keys, 0), _row(keys, 1)
        order = ops.broadcast_to(ops.reshape(_bits("permutation", sub, 32, (n,)), (n,) + (1,) * (values.ndim - 1)),
                                 values.shape)   # every column sorted by the same keys: rows move together
        _, shuffled = emit(hlo.sort, [order.value, values.value], 0,
                           lambda a, b, *_: hlo.compare(a, b, "LT"), is_stable=True)
        values = wrap(shuffled, values.shape, values.dtype, values.weak)
    return values
