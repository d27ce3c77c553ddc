"""The op library users call, with numpy's names: `from hlojit import ops; ops.exp(x)`.

Elementwise ops and reductions are generated from the tables in `elementwise.py` and `reductions.py`;
everything else is a plain function. Each op checks shapes and dtypes at trace time and builds StableHLO
located at the caller's line. Called outside a trace, every op here runs at once on its arrays as a cached
one-op program and returns an hj.Array (frontend/eager.py).
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
from . import math as _math, special as _special, trig as _trig  # noqa: F401  (their @composite rows)
from . import fft  # numpy.fft's namespace: ops.fft.fft, ops.fft.rfft2 ...
from .complex_math import angle, complex, iscomplex, iscomplexobj, isreal, isrealobj  # complex operands' composites
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
                      deg2rad, degrees, diff, divmod, ediff1d, float_power, fmax, fmin, fmod, frexp, gcd, heaviside, i0,
                      imag,
                      interp, isclose, lcm, ldexp, logaddexp, logaddexp2, modf, polyval, positive, ptp, rad2deg,
                      radians, real, sinc, trapezoid)
from .. import eager as _eager
from .functional import apply_along_axis, vectorize  # on hj.vmap: numpy's apply_along_axis, vectorize(signature=)


def _op(family, name, doc, arity):
    if arity == 1:
        def op(x):
            return family(name, x)
    else:
        def op(x, y):
            return family(name, x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    # eager: Python scalars are arguments of the program (except power's exponent, whose ints trace to
    # multiplications)
    return _eager.dispatching(op, scalars_are_arguments=name != "power")


for _name in UNARY:
    globals()[_name] = _op(_elementwise.unary, _name, f"Elementwise `{_name}` as numpy computes it.", 1)
for _name in BINARY:
    globals()[_name] = _op(_elementwise.binary, _name, f"Elementwise `{_name}` with numpy broadcasting and "
                                                       "hlojit's promotion (Python scalars are weakly typed).", 2)
for _name in COMPARISONS:
    globals()[_name] = _op(_elementwise.compare, _name, f"Elementwise comparison `{_name}`; gives bool.", 2)

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
from .polynomial import (poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, roots,  # on linalg
                         vander)
from .creation import array, asarray, copy, empty, empty_like, fromfunction
from .index_tricks import diag_indices_from, ix_, ravel_multi_index, tril_indices_from, triu_indices_from, unravel_index
from .windows import bartlett, blackman, hamming, hanning, kaiser
from .sets import intersect1d, setdiff1d, setxor1d, union1d, unique_all, unique_counts, unique_inverse, unique_values
from .dtype_functions import (broadcast_shapes, can_cast, isdtype, isscalar, issubdtype, ndim, promote_types,
                              result_type, shape, size)   # shape: numpy's function, over the submodule's name
from .finite_differences import gradient, unwrap
from .products import matrix_transpose, matvec, vecdot, vecmat
from .joining import dsplit, hsplit, unstack, vsplit
from .statistics import cumulative_prod, cumulative_sum
from .numeric import fabs, isneginf, isposinf, rint, round_ as round
around = round
amax, amin = max, min
bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift  # noqa: F821 numpy 2's

# Last, after every import and alias above: every other op runs eagerly outside a trace too (getitem's
# concrete index is checked and passed as arguments; a function's own `prepare_eager` hook rewrites its
# arguments first: ix_'s masks, ravel_multi_index's checks, the sizes of data-dependent results). Not the
# plain Python helpers, which build no graph (einsum_path computes an order from shapes and subscripts;
# vectorize returns a function, eager itself; the dtype and shape questions answer from the static types)
# or read values before they build one (roots strips zeros, then runs its own eager op)
_PYTHON_HELPERS = frozenset({"einsum_path", "vectorize", "roots", "broadcast_shapes", "can_cast", "isdtype",
                             "isscalar", "issubdtype", "ndim", "promote_types", "result_type", "shape", "size"})
for _name, _fn in list(globals().items()):
    if not _name.startswith("_") and callable(_fn) and not isinstance(_fn, type) and _name not in _PYTHON_HELPERS \
            and not hasattr(_fn, "eager_fn") and _fn.__module__.startswith("hlojit."):
        globals()[_name] = _eager.dispatching(_fn, prepare=_eager.prepare_index if _name == "getitem" else
                                              getattr(_fn, "prepare_eager", None))
