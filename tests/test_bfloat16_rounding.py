"""dialects.types.astype: a real number becomes bfloat16 rounded once (StableHLO's convert), whichever ml_dtypes
converts it otherwise (before 0.7: through f32, rounding twice). Checked against exact rational arithmetic."""
import math
from fractions import Fraction

import ml_dtypes
import numpy as np

from hlojit.dialects.types import astype

BF16 = np.dtype(ml_dtypes.bfloat16)


def bf16_rounded_once(values) -> np.ndarray:
    """Each value (a float or an int, held exactly) rounded once to the nearest bfloat16, ties to even, by exact
    rational arithmetic: bfloat16 has 8 significant bits, f32's exponent range, subnormals down to 2**-133."""
    def one(v):
        if isinstance(v, float) and not math.isfinite(v):
            return v
        exact = Fraction(v)
        if exact == 0:
            return math.copysign(0.0, v) if isinstance(v, float) else 0.0
        exponent = max(math.floor(math.log2(abs(exact))), -126)
        if Fraction(2) ** exponent > abs(exact):           # log2's rounding, either way
            exponent -= 1
        elif Fraction(2) ** (exponent + 1) <= abs(exact):
            exponent += 1
        exponent = max(exponent, -126)
        ulp = Fraction(2) ** (exponent - 7)
        rounded = round(abs(exact) / ulp) * ulp              # Fraction's round: half to even
        if rounded >= Fraction(2) ** 128 - Fraction(2) ** 119:   # past the largest (2**128 - 2**120) by half an ulp
            return math.copysign(math.inf, exact)
        return math.copysign(float(rounded), exact)
    return np.array([one(v) for v in values], np.float32).astype(BF16)   # exact in f32, so exact in bf16


def _same_bits(a, b):
    np.testing.assert_array_equal(np.asarray(a).view(np.uint16), np.asarray(b).view(np.uint16))


def test_f64_to_bfloat16_rounds_once():
    # 2**24 + 2**16 + 1: f32 rounds it to 2**24 + 2**16, a bf16 tie that goes to even (2**24); once: 2**24 + 2**17.
    # Also the largest finite (rounding to inf past half an ulp above it), subnormals and what rounds to zero
    edges = [2.0**24 + 2**16 + 1, -(2.0**24 + 2**16 + 1), 1 + 2.0**-8 + 2.0**-40, 1 + 2.0**-8, 1 + 3 * 2.0**-8,
             3.3895313892515355e38, 3.3961e38, 3.4e38, 1e39, -1e300, 2.0**-133, 1.5 * 2.0**-133, 2.0**-134,
             2.0**-134 * (1 + 2.0**-30), 2.0**-135, -1e-50, 0.1, -0.0, 0.0, 1.0, 3.0]
    rng = np.random.default_rng(7)
    rough = rng.standard_normal(2000) * np.exp(rng.uniform(-95, 95, 2000))
    values = np.concatenate([edges, rough])
    _same_bits(astype(values, BF16), bf16_rounded_once(values.tolist()))
    special = np.array([np.nan, np.inf, -np.inf])
    got = astype(special, BF16).astype(np.float64)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf


def test_integers_to_bfloat16_round_once():
    rng = np.random.default_rng(8)
    cases = {
        np.int32: [2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 2**31 - 1, -2**31, 7, 0],
        np.int64: [2**63 - 1, -2**63, 2**53 + 1, (2**24 + 2**16) * 2**38 + 1, -((2**24 + 2**16) * 2**38 + 1),
                   (2**24 + 2**16) * 2**38],
        np.uint32: [2**32 - 1, 2**24 + 2**16 + 1],
        np.uint64: [2**64 - 1, 2**63, (2**24 + 2**16) * 2**39 + 1, (2**24 + 2**16) * 2**39],
    }
    for dtype, edges in cases.items():
        info = np.iinfo(dtype)
        values = np.concatenate([np.array(edges, dtype), rng.integers(info.min, info.max, 500, dtype, endpoint=True)])
        _same_bits(astype(values, BF16), bf16_rounded_once([int(v) for v in values]))


def test_narrow_sources_and_other_targets_are_numpys():
    """Sources that f32 holds exactly (f16, f32, 8- and 16-bit ints, bool) round once through numpy's own path;
    other targets are numpy's conversion, a Python int that does not fit refused as numpy refuses it."""
    for dtype in (np.float16, np.float32, np.int8, np.uint16, np.bool_):
        x = np.array([1, 0, 3, 100], dtype)
        _same_bits(astype(x, BF16), x.astype(BF16))
    x = np.array([1.5, -2.5, 1e10])
    np.testing.assert_array_equal(astype(x, np.float32), x.astype(np.float32))
    assert astype(2.5, BF16).shape == () and float(astype(2.5, BF16)) == 2.5
    try:
        astype(300, np.int8)
    except OverflowError:
        pass
    else:
        raise AssertionError("300 as int8 was not refused")


def test_scalars_and_zeros_convert_without_warnings():
    """0-d inputs compute in numpy scalars, whose integer arithmetic warns on wrapping (the suite makes a
    RuntimeWarning an error): a zero's bits once went below 0 in a branch np.where did not take."""
    for value in (0, 0.0, -0.0, np.int64(0), np.uint64(0), np.int32(0), 1e-50, -1e-50, 7, 2**62):
        got = astype(value, BF16)
        assert got.shape == () and float(got) == float(bf16_rounded_once([value])[0]), value
        assert str(float(got)) == str(float(bf16_rounded_once([value])[0])), value    # the sign of a zero
