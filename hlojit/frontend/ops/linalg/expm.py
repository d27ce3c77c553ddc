"""scipy.linalg.expm by scaling and squaring with Pade approximants (Higham 2005), JAX's choice of
degrees: f32 and complex64 use degree 3, 5 or 7, f64 and complex128 3, 5, 7, 9 or 13 by the 1-norm, scaled
by 2^-s so that the norm is under the largest degree's bound, then squared s times (at most 16, JAX's
max_squarings)."""
from __future__ import annotations

import numpy as np

from ... import dtypes, ops
from ...control import fori_loop
from . import _util
from ._util import mm
from .lu import solve
from .norms import matrix_norm

MAX_SQUARINGS = 16
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
         10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.),
}
# (largest norm, degrees, norm bounds between the degrees) per dtype
_CHOICES = {
    np.dtype(np.float32): (3.925724783138660, (3, 5, 7), (4.258730016922831e-001, 1.880152677804762e+000)),
    np.dtype(np.float64): (5.371920351148152, (3, 5, 7, 9, 13),
                           (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                            2.097847961257068e+000)),
}


def _pade(a, degree: int, powers: dict):
    """(u, v): the odd and even parts of the degree's numerator, p = u + v, q = v - u."""
    b = _PADE[degree]
    identity = _util.eye(a.shape[-1], a.dtype)
    if degree == 13:
        a2, a4, a6 = powers[2], powers[4], powers[6]
        u = mm(a, mm(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity)
        v = mm(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
        return u, v
    odd = b[1] * identity + sum(b[k + 1] * powers[k] for k in range(2, degree, 2))
    even = b[0] * identity + sum(b[k] * powers[k] for k in range(2, degree, 2))
    return mm(a, odd), even


def expm(A, *, upper_triangular: bool = False, max_squarings: int = MAX_SQUARINGS):
    """scipy.linalg.expm of square A (..., n, n) (real or complex, as scipy and JAX); NaN where more than
    max_squarings squarings would be needed, as JAX."""
    a = _util.matrix("expm", A, square=True, complex_ok=True)
    largest, degrees, bounds = _CHOICES.get(np.dtype(dtypes.real_dtype(a.dtype)), _CHOICES[np.dtype(np.float32)])
    norm1 = matrix_norm(a, ord=1, keepdims=True)
    squarings = ops.maximum(0, ops.floor(ops.log2(norm1 / largest)))
    a = a / 2 ** squarings
    powers = {2: mm(a, a)}
    for k in range(4, max(d for d in degrees if d < 13), 2):   # a^4 ... a^(degree-1)
        powers[k] = mm(powers[k - 2], powers[2])
    u, v = _pade(a, degrees[0], powers)
    for degree, bound in zip(degrees[1:], bounds):
        ud, vd = _pade(a, degree, powers)
        bigger = norm1 >= bound
        u, v = ops.where(bigger, ud, u), ops.where(bigger, vd, v)
    r = solve(v - u, u + v)

    def square(i, r):
        return ops.where(i < squarings, mm(r, r), r)
    r = fori_loop(0, max_squarings, square, r)
    return ops.where(squarings > max_squarings, float("nan"), r)
