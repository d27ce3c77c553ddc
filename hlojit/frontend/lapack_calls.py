"""JAX's LAPACK, cuSOLVER and cuSPARSE custom calls, as hlojit's own linalg: what `jax.jit(f).lower(...)` of
jnp.linalg and jax.scipy.linalg writes for the CPU (`stablehlo.custom_call @lapack_spotrf_ffi` and the like, with
their `mhlo.backend_config` of LAPACK's character arguments), or a `jax.export` for cuda (`@cusolver_potrf_ffi`
..., booleans for the characters), means a LAPACK or cuSOLVER routine, which no backend here has. Each
call becomes the StableHLO of the hlojit function that computes the same (ops/linalg/: traced for the call's
operand types, its ops inlined where the call stood, its composites kept with their decompositions, so the cpu
target's kernels take them as in a traced program), so such a module runs on every backend, and vmap and grad
of it (inline.py inlines the composites there) see ordinary ops. What each routine gives, as LAPACK gives it
(JAX reads these):

- potrf (uplo L/U): the factor in its triangle, the other triangle as a had it; info 0, or 1 where the matrix
  is not positive definite (LAPACK's info is the order of the failing minor; JAX tests info == 0 only).
- getrf: LU in one matrix, 1-based pivots (int32), info the first zero pivot (1-based) or 0.
- trsm (side, uplo, trans_x N/T/C, diag U/N): x with op(a) x = b (side L) or x op(a) = b (side R).
- geqrf: R on and above the diagonal, the Householder vectors below it (unit diagonal implied), tau;
  orgqr / ungqr: the first n columns of Q = H_0 ... H_{k-1} from them.
- syevd / heevd (mode V/N, uplo): eigenvectors (mode V) in a's place, eigenvalues ascending, info 0.
- gesdd (mode A/S/N: full, reduced, no vectors): a's place (zeros), s descending, u, vt, info 0.
- geev (compute_left, compute_right V/N; JAX's eig): the eigenvalues (real and imaginary parts for real a,
  complex for complex a), the left and right eigenvectors as complex columns of unit 2-norm whose largest
  component is real (zeros where not asked for), info 0. The left ones are the columns of inv(vr)^H (vl^H a =
  w vl^H), normalised as LAPACK's.
- sytrd (uplo; JAX's tridiagonal): a holding T (d, e) and the reflectors below e (above it for U), the other
  triangle as given; d, e, tau, info 0. Real matrices only (a complex one, LAPACK's hetrd, is refused by name).
- gtsv (JAX's tridiagonal_solve: dl, d, du, b): LAPACK's elimination with partial pivoting itself, as two
  scans of n steps: U in dl (its second superdiagonal, from dl[1]), d and du, x in b, info the first zero pivot.
  IREE 3.13 copies a scan's stacked outputs each iteration, so on IREE its time grows as n² (README); past 64
  rows the scans take 8 steps an iteration.

cuSOLVER's (JAX's cuda lowerings, jax 0.10; hipSOLVER's names alike) give what LAPACK's of the same name give,
with `lower` for uplo, but:
- syevd: `lower`, `algorithm` (QR or Jacobi: the same eigenpairs); mode V always.
- gesvdj / gesvdp (Jacobi, polar: JAX's default up to 1024 x 1024): u and V itself (not V^H), full (m x m,
  n x n) unless `full_matrices` is false (then m x k, n x k); zeros where `compute_uv` is false.
- gesvd / gesdd: u and vt as LAPACK's, in each other's place where `transposed` (JAX's m < n: the call sees the
  transpose); none where `compute_uv` is false (scalars).
- cusparse_gtsv2 (hipsparse_gtsv2): gtsv's x alone.
- cu_lu_pivots_to_permutation: the row order (permutation_size long, the result's length) that 0-based pivots
  make, as lu_factor's row order.

hlojit's factorizations report no failure of their own beyond NaN, so info is 0 where the result is finite.
"""
from __future__ import annotations

import re

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of, shape_of
from ..errors import BackendError
from ..pipeline.legalize import walk
from . import control, dtypes, ops, trace
from .inline import inline_function
from .jit import jit
from .ops.linalg import _util
from .ops.linalg.eig import normalised_columns
from .ops.linalg.lu import factor, permutation
from .ops.linalg.qr import form_q, householder
from .ops.linalg.tridiagonal import PANEL, tridiagonalize

_LAPACK = re.compile(r"lapack_[sdcz](\w+)_ffi$")
_GPU = re.compile(r"(?:cu|hip)(?:solver|sparse)_(\w+)_ffi$|(?:cu|hip)_(lu_pivots_to_permutation)$")


def _triangle(shape, lower: bool):
    """The mask of a matrix of `shape`'s lower (or upper) triangle, diagonal included."""
    rows, columns = _util.index(shape[-2:], 0), _util.index(shape[-2:], 1)
    return rows >= columns if lower else rows <= columns


def _info(failed, shape):
    """int32 info of `shape`: 1 where `failed` (a bool per matrix), else 0."""
    return ops.reshape(failed.astype(dtypes.int32), shape)


def _potrf(config, results, a):
    lower = config.get("uplo", ord("L")) == ord("L")
    factor_ = ops.linalg.cholesky(a, upper=not lower)
    kept = _triangle(a.shape, lower)
    diagonal = ops.diagonal(factor_, 0, -2, -1)
    failed = ops.any(ops.logical_not(ops.isfinite(diagonal)), axis=-1)
    return ops.where(kept, factor_, a), _info(failed, results[1][0])


def _getrf(config, results, a):
    m, n = a.shape[-2:]
    lu, pivots, _, _ = factor(_util.pad_rectangular(a, max(m, n)))   # zero rows or columns pivot on themselves
    lu, pivots = lu[..., :m, :n], pivots[..., :min(m, n)]
    zero = ops.diagonal(lu, 0, -2, -1) == 0
    first = ops.argmax(zero, axis=-1).astype(dtypes.int32) + 1
    info = ops.where(ops.any(zero, axis=-1), first, 0).astype(dtypes.int32)
    return lu, (pivots + 1).astype(dtypes.int32), ops.reshape(info, results[2][0])


def _trsm(config, results, a, b):
    left = config.get("side", ord("L")) == ord("L")
    lower = config.get("uplo", ord("L")) == ord("L")
    trans = {ord("N"): 0, ord("T"): 1, ord("C"): 2}[config.get("trans_x", ord("N"))]
    unit = config.get("diag", ord("N")) == ord("U")
    solve = ops.linalg.solve_triangular
    if left:
        return (solve(a, b, trans=trans, lower=lower, unit_diagonal=unit),)
    # x op(a) = b  <=>  op(a)^T x^T = b^T, and op(a)^T is a (trans T), a^T (N) or conj(a) (C)
    if trans == 2:
        a, trans = ops.conjugate(a), 0
    else:
        trans = 1 - trans
    return (_util.mT(solve(a, _util.mT(b), trans=trans, lower=lower, unit_diagonal=unit)),)


def _geqrf(config, results, a):
    r, v, tau = householder(a)
    n, k = a.shape[-1], v.shape[-1]
    below = ops.concatenate([v, ops.zeros(v.shape[:-1] + (n - k,), v.dtype)], axis=-1) if n > k else v
    return ops.where(_triangle(a.shape, lower=False), r, below), tau[..., 0, :]


def _orgqr(config, results, a, tau):
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    below = _util.index((m, k), 0) > _util.index((m, k), 1)
    reflectors = ops.where(below, a[..., :, :k], _util.eye(m, a.dtype, k))      # unit diagonal, zeros above
    return (form_q(reflectors, tau[..., None, :], n),)


def _syevd(config, results, a):
    uplo = "L" if config.get("uplo", ord("L")) == ord("L") else "U"
    if config.get("mode", ord("V")) == ord("N"):
        w = ops.linalg.eigvalsh(a, UPLO=uplo)
        vectors = a
    else:
        w, vectors = ops.linalg.eigh(a, UPLO=uplo)
    return vectors, w, ops.zeros(results[2][0], dtypes.int32)


def _gesdd(config, results, a):
    mode = config.get("mode", ord("A"))
    (_, _), (s_shape, _), (u_shape, u_dtype), (vt_shape, vt_dtype), (info_shape, _) = results
    if mode == ord("N"):
        s = ops.linalg.svdvals(a)
        u, vt = ops.zeros(u_shape, u_dtype), ops.zeros(vt_shape, vt_dtype)
    else:
        u, s, vt = ops.linalg.svd(a, full_matrices=mode == ord("A"))
    return ops.zeros(a.shape, a.dtype), s, u, vt, ops.zeros(info_shape, dtypes.int32)


def _geev(config, results, a):
    left = config.get("compute_left", ord("N")) == ord("V")
    right = config.get("compute_right", ord("V")) == ord("V")
    vl_shape, vr_shape = (shape for shape, _ in results[-3:-1])
    vector_dtype = results[-2][1]
    if left or right:
        w, vr = ops.linalg.eig(a)
        vl = normalised_columns(_util.mH(ops.linalg.inv(vr))) if left else ops.zeros(vl_shape, vector_dtype)
        vr = vr if right else ops.zeros(vr_shape, vector_dtype)
    else:
        w = ops.linalg.eigvals(a)
        vl, vr = ops.zeros(vl_shape, vector_dtype), ops.zeros(vr_shape, vector_dtype)
    info = ops.zeros(results[-1][0], dtypes.int32)
    if dtypes.is_complex(a.dtype):
        return w, vl, vr, info
    return ops.real(w), ops.imag(w), vl, vr, info


def _with_uplo(routine):
    """A LAPACK routine's builder taking cuSOLVER's `lower` for its uplo character."""
    return lambda config, results, *args: routine({"uplo": ord("L") if config.get("lower", 1) else ord("U")},
                                                  results, *args)


def _gesvd(config, results, a):
    (_, _), _, first, second, (info_shape, _) = results
    if config.get("compute_uv", 1):
        u, s, vt = ops.linalg.svd(a, full_matrices=bool(config.get("full_matrices", 1)))
    else:
        s, u, vt = ops.linalg.svdvals(a), ops.zeros(*first), ops.zeros(*second)
    u, vt = (vt, u) if config.get("transposed", 0) else (u, vt)
    return ops.zeros(a.shape, a.dtype), s, u, vt, ops.zeros(info_shape, dtypes.int32)


def _gesvdj(config, results, a):
    """gesvd's, but V itself in vt's place."""
    a_out, s, u, vt, info = _gesvd({**config, "transposed": 0}, results, a)
    return a_out, s, u, _util.mH(vt) if config.get("compute_uv", 1) else vt, info


def _pivots_to_permutation(config, results, pivots):
    (shape, _), = results
    k, size = pivots.shape[-1], shape[-1]
    if size > k:    # the rows past the pivots stay where they are
        own = ops.broadcast_to(_util.index((size,), 0)[k:], pivots.shape[:-1] + (size - k,))
        pivots = ops.concatenate([pivots, own.astype(pivots.dtype)], axis=-1)
    return (permutation(pivots)[..., :size].astype(dtypes.int32),)


def _sytrd(config, results, a):
    """LAPACK's dsytrd (uplo L or U; JAX's lax.linalg.tridiagonal): a = Q T Q^T from a's uplo triangle alone, by
    ops/linalg/tridiagonal.py's reduction, which is dsytrd's (dlarfg's reflectors, the same signs). U reduces
    the reversed matrix (rows and columns): LAPACK's upper form is the lower one mirrored. Results: a with d on
    its diagonal, e beside it and each reflector's vector (its 1 implied) past e in its column (in its row's
    place for U), the other triangle as given; d, e, tau, info 0."""
    if a.dtype.kind == "c":
        raise BackendError("the Hermitian reduction of complex matrices (LAPACK's hetrd) is not built")
    lower = config.get("uplo", ord("L")) == ord("L")
    n = a.shape[-1]
    if n == 1:
        empty = ops.zeros(a.shape[:-2] + (0,), a.dtype)
        return a, a[..., 0], empty, empty, ops.zeros(results[4][0], dtypes.int32)
    mirrored = a if lower else a[..., ::-1, ::-1]
    triangle = _triangle(a.shape, lower=True)
    symmetric = ops.where(triangle, mirrored, _util.mT(mirrored))
    d, e, (vs, ts) = tridiagonalize(symmetric)
    panels = ops.reshape(ts, ts.shape[:-2] + (-1, PANEL, PANEL))      # each panel's compact-WY T: tau on its diagonal
    tau = ops.reshape(ops.diagonal(panels, 0, -2, -1), ts.shape[:-2] + (-1,))[..., :n - 1]
    rows, columns = _util.index((n, n), 0), _util.index((n, n), 1)
    e_padded = ops.concatenate([e, ops.zeros(e.shape[:-1] + (1,), e.dtype)], axis=-1)
    out = ops.where(rows > columns + 1, vs[..., :n, :n],
                    ops.where(rows == columns + 1, e_padded[..., None, :],
                              ops.where(rows == columns, d[..., None, :], mirrored)))
    if not lower:
        out, d, e, tau = out[..., ::-1, ::-1], d[..., ::-1], e[..., ::-1], tau[..., ::-1]
    return out, d, e, tau, ops.zeros(results[4][0], dtypes.int32)


def _gtsv(config, results, dl, d, du, b):
    """LAPACK's gtsv as JAX calls it (lax.linalg.tridiagonal_solve): dl, d, du (..., n), dl[0] and du[-1] not
    read, b (..., n, k). LAPACK's own algorithm, O(n) as two scans: Gaussian elimination with partial pivoting
    (rows i and i+1 swapped where |dl_i| > |d_i|; |re| + |im| for complex, as LAPACK's CABS1), then back
    substitution with the second superdiagonal the swaps make. So the results are LAPACK's to rounding: U's
    diagonal in d, its superdiagonals in du and dl (from dl[1]; dl[-1] as given), x in b, info the first zero
    pivot (1-based) or 0."""
    n = d.shape[-1]
    if n == 1:
        info = ops.reshape((d[..., 0] == 0).astype(dtypes.int32), results[4][0])
        return dl, d, du, b / d[..., None], info
    rows = lambda x: ops.moveaxis(x, -1, 0)    # noqa: E731   the scans' steps lead
    size = (lambda x: ops.abs(ops.real(x)) + ops.abs(ops.imag(x))) if d.dtype.kind == "c" else ops.abs
    zero = ops.zeros(d.shape[:-1], d.dtype)
    b_rows = ops.moveaxis(b, -2, 0)

    def eliminate(row, x):
        """row i (its d, du, b as steps before left them) and row i+1: U's row i, and row i+1 to carry on."""
        d_i, du_i, b_i = row
        dl_i, d_next, du_next, b_next, is_last = x
        swap = size(d_i) < size(dl_i)
        fact = ops.where(swap, d_i / dl_i, dl_i / d_i)
        pick = lambda yes, no: ops.where(swap, yes, no)                            # noqa: E731
        pick_rows = lambda yes, no: ops.where(swap[..., None], yes, no)            # noqa: E731
        second = ops.where(is_last, zero, pick(du_next, zero))        # U's second superdiagonal (none past n)
        u_row = (pick(dl_i, d_i), pick(d_next, du_i), ops.where(is_last, dl_i, second), second,
                 pick_rows(b_next, b_i))
        carried = (pick(du_i - fact * d_next, d_next - fact * du_i), pick(-fact * du_next, du_next),
                   pick_rows(b_i - fact[..., None] * b_next, b_next - fact[..., None] * b_i))
        return carried, u_row

    last_step = ops.arange(n - 1) == n - 2          # LAPACK's last step writes no DL, DU past the matrix
    steps = (rows(dl)[1:], rows(d)[1:], rows(du)[1:], b_rows[1:], last_step)
    # IREE 3.13 copies a loop's stacked outputs every iteration (n^2 time): 8 steps an iteration past 64 rows
    # (iree:cpu, Zen 3: n = 1,000 16-29 -> 6-9 ms a call, 100,000 18 -> 2.4 s; its compile 0.9 -> ~3.5 s)
    unroll = 8 if n > 64 else 1
    (d_n, _, b_n), (u_d, u_du, dl_out, u_du2, u_b) = control.scan(eliminate, (rows(d)[0], rows(du)[0], b_rows[0]),
                                                                  steps, unroll=unroll)
    x_n = b_n / d_n[..., None]

    def substitute(after, row):
        x_1, x_2 = after                            # x of rows i+1 and i+2
        d_i, du_i, du2_i, b_i = row
        x_i = (b_i - du_i[..., None] * x_1 - du2_i[..., None] * x_2) / d_i[..., None]
        return (x_i, x_1), x_i

    _, xs = control.scan(substitute, (x_n, ops.zeros_like(x_n)), (u_d, u_du, u_du2, u_b), reverse=True,
                         unroll=unroll)
    pivots = ops.moveaxis(ops.concatenate([u_d, d_n[None]], axis=0), 0, -1)
    singular = pivots == 0
    info = ops.where(ops.any(singular, axis=-1), ops.argmax(singular, axis=-1) + 1, 0).astype(dtypes.int32)
    return (ops.concatenate([dl[..., :1], ops.moveaxis(dl_out, 0, -1)], axis=-1), pivots,
            ops.concatenate([ops.moveaxis(u_du, 0, -1), du[..., -1:]], axis=-1),
            ops.moveaxis(ops.concatenate([xs, x_n[None]], axis=0), 0, -2), ops.reshape(info, results[4][0]))


def _gtsv2(config, results, dl, d, du, b):
    """cuSPARSE's gtsv2 (JAX's cuda tridiagonal_solve): dl[0] and du[-1] zero by its convention; x alone."""
    return (_gtsv(config, [None] * 4 + [(d.shape[:-1], dtypes.int32)], dl, d, du, b)[3],)


_ROUTINES = {"potrf": _potrf, "getrf": _getrf, "trsm": _trsm, "geqrf": _geqrf, "orgqr": _orgqr, "ungqr": _orgqr,
             "syevd": _syevd, "heevd": _syevd, "gesdd": _gesdd, "geev": _geev, "gtsv": _gtsv,
             "sytrd": _sytrd}
_GPU_ROUTINES = {"potrf": _with_uplo(_potrf), "getrf": _getrf,
                 "geqrf": _geqrf, "orgqr": _orgqr, "syevd": _with_uplo(_syevd), "gesvdj": _gesvdj, "gesvdp": _gesvdj,
                 "gesvd": _gesvd, "gesdd": _gesvd, "lu_pivots_to_permutation": _pivots_to_permutation,
                 "gtsv2": _gtsv2, "sytrd": _with_uplo(_sytrd)}


def _config(op) -> dict:
    """mhlo.backend_config's entries as ints (LAPACK's character arguments: uplo = 76 is 'L')."""
    if "mhlo.backend_config" not in op.attributes:
        return {}
    config = ir.DictAttr(op.attributes["mhlo.backend_config"])
    entries = {}
    for i in range(len(config)):
        if isinstance(config[i].attr, ir.BoolAttr):          # cuSOLVER's lower, full_matrices ...
            entries[config[i].name] = int(ir.BoolAttr(config[i].attr).value)
        elif isinstance(config[i].attr, ir.IntegerAttr):
            entries[config[i].name] = ir.IntegerAttr(config[i].attr).value
    return entries


def _routine(op):
    """The builder of the LAPACK or cuSOLVER routine a custom call stands for, or None."""
    if op.name != "stablehlo.custom_call":
        return None
    name = ir.StringAttr(op.attributes["call_target_name"]).value
    if (match := _LAPACK.match(name)) is not None:
        return _ROUTINES.get(match.group(1))
    match = _GPU.match(name)
    return _GPU_ROUTINES.get(match.group(1) or match.group(2)) if match else None


def replace_lapack_calls(module: ir.Module, source: str) -> int:
    """Each LAPACK or cuSOLVER custom call of `module` replaced by hlojit's StableHLO for it; the number replaced."""
    calls = [op for op in walk(module.operation) if _routine(op) is not None]
    for op in calls:
        routine = _routine(op)
        operands = [(shape_of(v.type), dtype_of(v.type)) for v in op.operands]
        results = [(shape_of(r.type), dtype_of(r.type)) for r in op.results]
        config = _config(op)
        name = ir.StringAttr(op.attributes["call_target_name"]).value
        try:
            with trace.set_aside():
                text = jit(lambda *args: routine(config, results, *args), backend="reference").lower(
                    *[np.zeros(shape, dtype) for shape, dtype in operands]).mlir
        except Exception as e:
            raise BackendError(f"{source}: {name} at {op.location} could not be built from hlojit's linalg: "
                               f"{e}") from e
        with module.context:
            callee = ir.Module.parse(text)
        with module.context, ir.InsertionPoint(op), op.location:
            values = inline_function(callee, list(op.operands), name, into=module)
        for result, value in zip(op.results, values):
            if result.type != value.type:
                raise BackendError(f"{source}: {name} at {op.location} gives {result.type}, hlojit's linalg "
                                   f"{value.type}")
            result.replace_all_uses_with(value)
        op.erase()
    return len(calls)
