"""numpy.linalg's names, plus scipy.linalg's solve_triangular, cho_factor/cho_solve, lu/lu_factor/lu_solve
and expm, on stacks of matrices (..., m, n), built from StableHLO ops IREE compiles well (no LAPACK).
Each also runs eagerly outside a trace (frontend/eager.py)."""
from ... import eager as _eager
from .cholesky import cho_factor, cho_solve, cholesky
from .triangular import solve_triangular
from .lu import det, inv, lu, lu_factor, lu_solve, slogdet, solve
from .qr import qr
from .spectral import eigh, eigvalsh, svd, svdvals
from .eig import eig, eigvals
from .norms import matrix_norm, norm, vector_norm
from .derived import cond, lstsq, matrix_power, matrix_rank, multi_dot, pinv
from .expm import expm
from . import empty as _empty

__all__ = ["cho_factor", "cho_solve", "cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "expm", "inv",
           "lstsq", "lu", "lu_factor", "lu_solve", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vector_norm"]

_empty.wrap_namespace(globals())            # empty matrices and stacks: numpy's results (empty.py)
_eager.wrap_namespace(globals(), __all__)   # last: outside a trace each runs at once, giving hj.Arrays
