"""The op library users call, with numpy's names: `from hlojit import ops; ops.exp(x)`.

Elementwise ops and reductions are generated from the tables in `elementwise.py` and `reductions.py`;
everything else is a plain function. Each op checks shapes and dtypes at trace time and builds StableHLO
located at the caller's line.
"""
from __future__ import annotations

from . import elementwise as _elementwise
from .elementwise import BINARY, COMPARISONS, UNARY, astype
from .matmul import dot, dot_general, matmul
from .nn import avg_pool, conv, conv_transpose, max_pool
from .reductions import REDUCTIONS, all, any, max, mean, min, prod, sum
from .shape import (arange, broadcast_to, expand_dims, full, full_like, iota, ones, ones_like, reshape, squeeze,
                    transpose, zeros, zeros_like)
from .shape import (diagonal, eye, flip, fliplr, flipud, linspace, moveaxis, ravel, swapaxes, tri, tril, triu)
from .joining import array_split, concat, concatenate, pad, repeat, roll, split, stack, tile
from . import updates  # x.at[index].set(v) ...: Tensor.at
from .indexing import dynamic_slice, dynamic_update_slice, getitem, one_hot, take, take_along_axis
from . import math as _math  # noqa: F401  (registers the composites of the math family's table rows)
from .math import bitcast, clip, elu, gelu, leaky_relu, nan_to_num, signbit
from .statistics import (argmax, argmin, argsort, cummax, cummin, cumprod, cumsum, log_softmax, logsumexp,
                         softmax, sort, std, top_k, var)
from ..control import cond, fori_loop, scan, switch, while_loop  # lax-style control flow
from .contraction import einsum, einsum_path
from .products import cross, diag, diagflat, inner, kron, outer, tensordot, trace, vdot
from .building import (append, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, column_stack, delete,
                       diag_indices, dstack, geomspace, hstack, identity, indices, insert, logspace, meshgrid, resize,
                       rot90, row_stack, tril_indices, triu_indices, vstack)
from .numeric import (allclose, array_equal, array_equiv, conj, conjugate, convolve, correlate, count_nonzero,
                      deg2rad, degrees, diff, divmod, ediff1d, float_power, fmax, fmin, fmod, gcd, heaviside, imag,
                      interp, isclose, lcm, ldexp, logaddexp, logaddexp2, modf, polyval, positive, ptp, rad2deg,
                      radians, real, sinc, trapezoid)


def _op(family, name, doc):
    def op(*operands):
        return family(name, *operands)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


for _name in UNARY:
    globals()[_name] = _op(_elementwise.unary, _name, f"Elementwise `{_name}` as numpy computes it.")
for _name in BINARY:
    globals()[_name] = _op(_elementwise.binary, _name, f"Elementwise `{_name}` with numpy broadcasting and "
                                                       "hlojit's promotion (Python scalars are weakly typed).")
for _name in COMPARISONS:
    globals()[_name] = _op(_elementwise.compare, _name, f"Elementwise comparison `{_name}`; gives bool.")

# numpy aliases and activations
true_divide = divide  # noqa: F821 (generated above)
mod = remainder  # noqa: F821
pow = power  # noqa: F821
bitwise_not = invert  # noqa: F821
absolute = abs  # noqa: F821
permute_dims = transpose
logistic = sigmoid  # noqa: F821
# the array API's names for the inverse functions (numpy 2 has both)
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2  # noqa: F821
asinh, acosh, atanh = arcsinh, arccosh, arctanh  # noqa: F821
from .searching import (argpartition, argwhere, bincount, compress, digitize, extract, flatnonzero, histogram, isin,
                        lexsort, nonzero, partition, piecewise, searchsorted, select, unique)
from .searching import numpy_where as where
from .quantiles import (average, corrcoef, cov, median, nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean,
                        nanmedian, nanmin, nanpercentile, nanprod, nanquantile, nanstd, nansum, nanvar, percentile,
                        quantile)
from . import linalg  # numpy.linalg and scipy.linalg names: ops.linalg.solve, cholesky, eigh ...
