"""eigh / eigvalsh / svd / svdvals: eigh by divide and conquer (divide_conquer.py) above JACOBI_UP_TO, by
the Jacobi iterations of jacobi.py up to it; svd by the polar decomposition (polar.py) and eigh above
JACOBI_SVD_UP_TO, by one-sided Jacobi up to it.

The iterations run while_loops whose trip counts depend on the data, which reverse mode cannot walk:
eigh's, eigvalsh's and svd's derivatives are JAX's closed forms (custom_vjps), for real and complex
matrices alike (in JAX's convention, grad = dL/dRe - i dL/dIm: the real rules' conjugates, with conjugate
transposes); svd's not with full_matrices=True for m != n, as JAX's.

Hermitian (complex) eigh / eigvalsh reduce to the real case: eig.py's complex Householder reduction gives
h = q^H a q, Hermitian tridiagonal; the unitary diagonal d (d_0 = 1, d_k+1 = d_k phase(h_k+1,k)) makes
t = d^H h d real symmetric tridiagonal with the same eigenvalues, so a's eigenvectors are q d times t's.
Repeated eigenvalues are no trouble (the real embedding [[Re, -Im], [Im, Re]] would double every one and
leave the pairing of its eigenvectors to be untangled).

Complex svd takes the same two paths: one-sided Jacobi with complex (unitary) plane rotations (jacobi.py),
or the polar decomposition with conjugate transposes (polar.py) and the Hermitian eigh of its factor h;
s is real.
"""
from __future__ import annotations

from .... import errors
from ... import dtypes, ops
from ...autodiff import custom_vjp
from ...composites import composite
from ...control import cond
from .. import _core
from . import _util
from ._util import conj, mH, mm, mT
from . import divide_conquer, jacobi, polar
from .eig import _hessenberg
from .jacobi import column_rotations, sort_by
from .qr import form_q, householder, unblocked_qr

# eigh's n up to which cyclic Jacobi is used: it compiles faster there though it runs slower (12-02, load ~3,
# interleaved, compile / run: n = 64 Jacobi 2.3 s / 12.7 ms, divide and conquer 6.1 s / 3.8 ms; n = 128 7.6 s /
# 67.6 ms against 10.4 s / 12.9 ms; n = 256 2.2 s / 461 ms against 10.2 s / 39.7 ms at load ~2).
JACOBI_UP_TO = 64

# svd's n (the shorter side) up to which one-sided Jacobi is used rather than the polar decomposition: Jacobi's
# first call is far shorter there and its runs stay within 0.2 s (12-02, f32 square, full_matrices=False,
# iree:cpu, no compile cache, interleaved in one process, load ~2, compile / run: n = 64 Jacobi 4.6 s /
# 13.2 ms, QDWH not compiled (IREE 3.13's cpu fails on it with its eigh by Jacobi: "'scf.while' op ... region
# branch point has 8 operands, but region successor needs 10 inputs"); n = 96 3.9 s / 101 ms against 34.3 s /
# 34.1 ms; n = 128 7.2 s / 206 ms against 27.9 s / 60.8 ms; n = 256 6.0 s / 389 ms against 42.4 s / 67.1 ms;
# Jacobi's runs grow as n^2 per round, n rounds per sweep, and its sweep count).
JACOBI_SVD_UP_TO = 128


def symmetric_eigen(a, vectors: bool = True):
    """(w ascending, v or None) of symmetric a (..., n, n) by the algorithm that suits n: for a real a the
    composite hlojit.eigh (a target may run a kernel of its own: pipeline/kernels.py)."""
    if dtypes.is_complex(a.dtype):
        return _symmetric_eigen(a, vectors=vectors)
    out = _real_symmetric_eigen(a, vectors=int(vectors))
    return out if vectors else (out, None)


def _symmetric_eigen(a, *, vectors):
    """symmetric_eigen's StableHLO: Jacobi sweeps up to JACOBI_UP_TO, divide and conquer above."""
    if a.shape[-1] <= JACOBI_UP_TO:
        return jacobi.symmetric_eigen(a, vectors)
    return divide_conquer.symmetric_eigen(a, vectors)


def _real_decomposition(a, *, vectors: int):
    """hlojit.eigh's meaning: (w, v), or w alone (an int attribute says which)."""
    w, v = _symmetric_eigen(a, vectors=bool(vectors))
    return (w, v) if vectors else w


_real_symmetric_eigen = composite("hlojit.eigh")(_real_decomposition)


def _self_adjoint_eigen(a, vectors: bool = True):
    """symmetric_eigen of a real a, the Hermitian eigen of a complex one (real w in both)."""
    if dtypes.is_complex(a.dtype):
        return _hermitian_eigen(a, vectors)
    return symmetric_eigen(a, vectors)


def _from_triangle(op: str, a, uplo: str):
    """The symmetric (Hermitian) matrix whose lower or upper triangle a holds; a complex one's diagonal is
    taken real, as LAPACK's zheevd does."""
    if uplo not in ("L", "U"):
        _core.fail(ValueError, op, f"UPLO must be 'L' or 'U', not {uplo!r}")
    a = _util.matrix(op, a, square=True, complex_ok=True)
    if dtypes.is_complex(a.dtype):
        lower = ops.tril(a) if uplo == "L" else mH(ops.triu(a))
        full = lower + mH(ops.tril(lower, -1))
        return (full + mH(full)) / 2          # only the diagonal changes: its imaginary parts go
    lower = ops.tril(a) if uplo == "L" else mT(ops.triu(a))
    return lower + mT(ops.tril(lower, -1))


def _hermitian_eigen(a, vectors: bool):
    """(w ascending (real), v or None) of Hermitian a (..., n, n) through the real tridiagonal t (see the
    module's docstring)."""
    h, q = _hessenberg(a, vectors)
    n = a.shape[-1]
    row, col = _util.index((n, 1), 0), _util.index((1, n), 1)
    below = ops.abs(ops.where(row == col + 1, h, 0))                 # |h_k+1,k|, real
    t = ops.where(row == col, ops.real(h), 0) + below + mT(below)
    w, v = symmetric_eigen(t, vectors)
    if not vectors:
        return w, None
    sub = ops.diagonal(h, -1, -2, -1)                                # (..., n - 1)
    size = ops.abs(sub)
    phase = ops.where(size == 0, 1, sub / ops.where(size == 0, 1, size).astype(a.dtype))
    d = _running_product(ops.concatenate([ops.ones(phase.shape[:-1] + (1,), a.dtype), phase], axis=-1))
    return w, mm(q * d[..., None, :], v.astype(a.dtype))


def _running_product(x):
    """cumprod along the last axis by log2(n) shifted products (elementwise, fused), not ops.cumprod's
    reduce_window: IREE 3.13's vmvx fails on a complex128 one ("'util.buffer.store' op operand #0 must be
    index or integer or floating-point, but got 'complex<f64>'")."""
    n, shift = x.shape[-1], 1
    while shift < n:
        x = x * ops.concatenate([ops.ones(x.shape[:-1] + (shift,), x.dtype), x[..., :n - shift]], axis=-1)
        shift *= 2
    return x


def _refusing_gradient(op: str, fn, matrices: str):
    """fn as a custom_vjp whose reverse mode raises a DifferentiationError naming the op (no derivative exists),
    not autodiff's about the while_loops inside."""
    def bwd(residuals, g):
        _core.fail(errors.DifferentiationError, op, f"has no gradient for {matrices}")
    wrapped = custom_vjp(fn)
    wrapped.defvjp(lambda a: (fn(a), ()), bwd)
    return wrapped


@custom_vjp
def _eigh(a):
    return _self_adjoint_eigen(a)


def _eigh_fwd(a):
    w, v = _self_adjoint_eigen(a)
    return (w, v), (w, v)


def _eigh_bwd(residuals, g):
    """JAX's rule: conj(v) (diag(gw) + F * (v^T gv)) v^T with F_ij = 1 / (w_j - w_i) off the diagonal (conj
    is the identity on real v), the transpose of JAX's jvp dw = Re diag(v^H da v), dv = v (F * (v^H da v)).
    The loss must not depend on the eigenvectors' phases (signs), as in JAX: dv has no part along v's own
    columns."""
    (w, v), (gw, gv) = residuals, g
    n = w.shape[-1]
    gap = w[..., None, :] - w[..., :, None]
    off = ops.logical_not(_util.eye(n, dtypes.bool_))
    f = ops.where(off, 1 / ops.where(off, gap, 1), 0)
    inner = f.astype(v.dtype) * mm(mT(v), gv)
    if gw is not None:
        inner = inner + gw.astype(v.dtype)[..., None] * _util.eye(n, v.dtype)
    return (mm(mm(conj(v), inner), mT(v)),)


_eigh.defvjp(_eigh_fwd, _eigh_bwd)


def _eigenvalues_fwd(a):
    """w alone, as without derivatives (the custom_vjp's fwd is what runs); bwd takes v from a second
    decomposition."""
    return _self_adjoint_eigen(a, vectors=False)[0], (a,)


@custom_vjp
def _eigenvalues(a):
    return _eigenvalues_fwd(a)[0]


def _eigenvalues_bwd(residuals, gw):
    """conj(v) diag(gw) v^T: dw_i = Re(v_i^H da v_i)."""
    _, v = _self_adjoint_eigen(residuals[0])
    return (mm(conj(v) * gw.astype(v.dtype)[..., None, :], mT(v)),)


_eigenvalues.defvjp(_eigenvalues_fwd, _eigenvalues_bwd)


def eigh(a, UPLO: str = "L"):
    """numpy.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of the symmetric matrix whose lower
    (UPLO='L') or upper triangle a (..., n, n) holds: Householder tridiagonalization and divide and conquer,
    cyclic Jacobi for n <= JACOBI_UP_TO. Eigenvector signs are arbitrary. Complex (Hermitian) a: real
    eigenvalues and complex eigenvectors of arbitrary phase, through a real tridiagonal matrix."""
    return _eigh(_from_triangle("eigh", a, UPLO))


def eigvalsh(a, UPLO: str = "L"):
    """numpy.linalg.eigvalsh: the eigenvalues of eigh, ascending (real, for complex Hermitian a too)."""
    return _eigenvalues(_from_triangle("eigvalsh", a, UPLO))


def _orthonormal_basis(u, columns: int):
    """`columns` orthonormal columns whose first ones are u's nonzero (orthonormal) columns, the rest an
    orthonormal completion (an unblocked Householder QR of u, which compiles fast; Q's columns carry the signs
    of R's diagonal)."""
    k = u.shape[-1]
    q, r = unblocked_qr(u, columns)
    diagonal = ops.diagonal(r, 0, -2, -1)[..., :k]
    if dtypes.is_complex(u.dtype):          # real (zgeqrf's beta), of dtype complex
        signs = ops.where(ops.real(diagonal) < 0, -1, 1).astype(u.dtype)
    else:
        signs = ops.sign(diagonal)
        signs = ops.where(signs == 0, 1, signs)
    if columns > k:
        signs = ops.concatenate([signs, ops.ones(signs.shape[:-1] + (columns - k,), u.dtype)], axis=-1)
    return q * signs[..., None, :]


def _zero_below(sigma, rows: int, dtype):
    """The singular values that count as zero: at most eps * rows * the largest (LAPACK's rank test)."""
    return sigma <= sigma[..., :1] * (_util.eps(dtype) * rows)


def _sorted_columns(sigma, scaled, v, rows: int):
    """(u, sigma descending, v) from unsorted singular values and a v = scaled (columns of norms sigma);
    u's columns of zero singular values are zero."""
    order = ops.argsort(-sigma, axis=-1)
    sigma = sort_by(sigma, order)
    by_order = lambda x: ops.take_along_axis(x, ops.broadcast_to(order[..., None, :], x.shape), axis=-1)  # noqa: E731
    scaled, v = by_order(scaled), by_order(v)
    nonzero = ops.logical_not(_zero_below(sigma, rows, scaled.dtype))
    u = ops.where(nonzero[..., None, :], scaled / ops.where(nonzero, sigma, 1)[..., None, :], 0)
    return u, sigma, v


def _sorted_rotations(a):
    """(u, s descending, v) of a (..., m, n), m >= n, by one-sided Jacobi; u's columns of zero singular
    values are zero."""
    sigma, scaled, v = column_rotations(a)
    return _sorted_columns(sigma, scaled, v, a.shape[-2])


def _reduced_to_square(a, columns: int):
    """(q (..., m, columns), r (..., n, n)) with a = q[..., :n] r, for a (..., m, n) with m > n (Householder
    QR: svd of the tall a is svd of r, u = q[..., :n] u_r)."""
    n = a.shape[-1]
    r, reflectors, tau = householder(a)
    return form_q(reflectors, tau, columns), ops.triu(r[..., :n, :])


def _sorted_polar(a, columns: int | None):
    """(u, s descending, v) of a (..., m, n), m >= n, by the polar decomposition a = u_p h (of the QR's r when
    m > n) and eigh(h) = v diag(w) v^H: a v = u_p v diag(w), s = |w|. columns None: u (..., m, n) with zero
    columns at zero singular values (what the derivative takes); else u (..., m, columns) with those columns
    and the ones past n an orthonormal completion, made only when some singular value is zero (a cond: the
    completion is an unblocked Householder QR, a loop of n column steps over the whole of u)."""
    m, n = a.shape[-2:]
    q = None
    if m > n:
        q, a = _reduced_to_square(a, columns or n)
    u_p, h = polar.polar(a)
    w, v = _self_adjoint_eigen(h)
    u, s, v = _sorted_columns(ops.abs(w), mm(u_p, v) * w[..., None, :], v, m)
    if columns is not None:
        deficient = ops.any(_zero_below(s, m, s.dtype)[..., -1])
        u = cond(deficient, lambda u: _orthonormal_basis(u, n), lambda u: u, u)
    if q is None:
        return u, s, v
    u = mm(q[..., :n], u)
    if q.shape[-1] > n:
        u = ops.concatenate([u, q[..., n:]], axis=-1)
    return u, s, v


def _sorted_svd(a):
    """(u, s descending, v) of a (..., m, n), m >= n, u's columns of zero singular values zero, by the
    algorithm that suits n."""
    if a.shape[-1] <= JACOBI_SVD_UP_TO:
        return _sorted_rotations(a)
    return _sorted_polar(a, None)


def _svd_complete(a, columns: int):
    """(u (..., m, columns), s descending, vh (..., n, n)) of a (..., m, n), m >= n: u's columns of zero
    singular values (and those past n) an orthonormal completion. For a real a the composite hlojit.svd (a
    target may run a kernel of its own: pipeline/kernels.py)."""
    if dtypes.is_complex(a.dtype):
        return _complete_decomposition(a, columns)
    return _real_svd(a, columns=columns, vectors=1)


def _complete_decomposition(a, columns: int):
    """_svd_complete's StableHLO: one-sided Jacobi up to JACOBI_SVD_UP_TO columns, QDWH and eigh above."""
    if a.shape[-1] <= JACOBI_SVD_UP_TO:
        u, sigma, v = _sorted_rotations(a)
        return _orthonormal_basis(u, columns), sigma, mH(v)
    u, sigma, v = _sorted_polar(a, columns)
    return u, sigma, mH(v)


@custom_vjp
def _svd_reduced(a):
    return _svd_complete(a, a.shape[-1])


def _svd_reduced_fwd(a):
    u, s, vh = _svd_complete(a, a.shape[-1])
    return (u, s, vh), (u, s, vh)


def _svd_reduced_bwd(residuals, g):
    """JAX's rule (Townsend, "Differentiating the singular value decomposition") for a = u diag(s) vh with
    m >= n and vh square, the transpose of JAX's jvp (a real loss's gradient G has dL = Re sum(G * da)):
    G = conj(u (J s + diag(gs) + s K + D) vh + (I - u u^H) conj(gu) diag(1/s) vh), where P = u^H conj(gu),
    J = F * (P - P^H), Q = vh gvh^T, K = F * (Q - Q^H), F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, and
    D = diag(i Im(P_ii) / s_i), complex only (JAX's (dS - dS^H) / 2s term: the phases' change, given to u).
    On real matrices conj is the identity and ^H is ^T: the real rule. Singular values must be distinct (and
    nonzero where u's cotangent is), as JAX's; the loss must not depend on the singular vectors' phases."""
    (u, s, vh), (gu, gs, gvh) = residuals, g
    n = s.shape[-1]
    v = mH(vh)
    off = ops.logical_not(_util.eye(n, dtypes.bool_))
    s2 = s * s
    gap = s2[..., None, :] - s2[..., :, None]
    f = ops.where(off, 1 / ops.where(off, gap, 1), 0).astype(u.dtype)
    inner = ops.zeros(s.shape + (n,), u.dtype)
    if gs is not None:
        inner = inner + gs.astype(u.dtype)[..., None] * _util.eye(n, u.dtype)
    if gu is not None:
        gu = conj(gu)
        uhgu = mm(mH(u), gu)
        inner = inner + (f * (uhgu - mH(uhgu))) * s[..., None, :].astype(u.dtype)
        if dtypes.is_complex(u.dtype):
            phase = ops.imag(ops.diagonal(uhgu, 0, -2, -1)) / ops.where(s == 0, 1, s)
            inner = inner + ops.complex(ops.zeros_like(phase), phase)[..., None] * _util.eye(n, u.dtype)
    if gvh is not None:
        gv = mT(gvh)
        vhgv = mm(mH(v), gv)
        inner = inner + s[..., :, None].astype(u.dtype) * (f * (vhgv - mH(vhgv)))
    ga = mm(mm(u, inner), vh)
    if gu is not None and u.shape[-2] > n:
        ga = ga + mm((gu - mm(u, mm(mH(u), gu))) / s[..., None, :].astype(u.dtype), vh)
    return (conj(ga),)


_svd_reduced.defvjp(_svd_reduced_fwd, _svd_reduced_bwd)


def _sorted_singular_values(a):
    """s descending of a (..., m, n), m >= n, alone: Jacobi's column norms, or the eigenvalues of the polar
    factor h."""
    m, n = a.shape[-2:]
    if n <= JACOBI_SVD_UP_TO:
        sigma = column_rotations(a)[0]
    else:
        square = ops.triu(householder(a)[0][..., :n, :]) if m > n else a
        sigma = ops.abs(_self_adjoint_eigen(polar.polar(square)[1], vectors=False)[0])
    return sort_by(sigma, ops.argsort(-sigma, axis=-1))


def _svd_decomposition(a, *, columns: int, vectors: int):
    """hlojit.svd's meaning for a real a (..., m, n), m >= n: (u (..., m, columns), s, vh), or s alone (an int
    attribute says which)."""
    return _complete_decomposition(a, columns) if vectors else _sorted_singular_values(a)


_real_svd = composite("hlojit.svd")(_svd_decomposition)


def _singular_values_fwd(a):
    """s alone, as without derivatives (the custom_vjp's fwd is what runs); the derivative u diag(gs) vh takes
    u and vh from a second decomposition in bwd (u not completed: the derivative of a zero singular value is
    not defined)."""
    if dtypes.is_complex(a.dtype):
        return _sorted_singular_values(a), (a,)
    return _real_svd(a, columns=a.shape[-1], vectors=0), (a,)


@custom_vjp
def _singular_values(a):
    return _singular_values_fwd(a)[0]


def _singular_values_bwd(residuals, gs):
    """conj(u diag(gs) v^H) (u diag(gs) v^T for real a): ds_i = Re(u_i^H da v_i)."""
    u, s, v = _sorted_svd(residuals[0])
    return _svd_reduced_bwd((u, s, mH(v)), (None, gs, None))


_singular_values.defvjp(_singular_values_fwd, _singular_values_bwd)


def _svd_tall(a, full_matrices: bool, compute_uv: bool):
    """svd of a (..., m, n) with m >= n: (u, s, vh) or s, s descending; differentiable unless full_matrices
    with m > n."""
    if not compute_uv:
        return _singular_values(a)
    if full_matrices and a.shape[-2] > a.shape[-1]:   # u's completion is any orthonormal one: no derivative
        return _refusing_gradient("svd", lambda a: _svd_complete(a, a.shape[-2]),
                                  "non-square matrices with full_matrices=True (JAX has none either)")(a)
    return _svd_reduced(a)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False):
    """numpy.linalg.svd of a (..., m, n): (u, s, vh) with a = u diag(s) vh, s descending, by one-sided
    Jacobi when min(m, n) <= JACOBI_SVD_UP_TO, by the polar decomposition (QDWH) and eigh above; u (..., m, m)
    and vh (..., n, n) with full_matrices, else (..., m, k), (..., k, n), k = min(m, n).
    Singular vectors are unique only up to sign (complex: phase); u's columns of zero singular values are any
    orthonormal completion. Complex a: real s, unitary u and vh."""
    a = _util.matrix("svd", a, complex_ok=True)
    m, n = a.shape[-2:]
    if m >= n:
        return _svd_tall(a, full_matrices, compute_uv)
    result = _svd_tall(mT(a), full_matrices, compute_uv)
    if not compute_uv:
        return result
    u, s, vh = result
    return mT(vh), s, mT(u)


def svdvals(a):
    """numpy.linalg.svdvals: the singular values of a (..., m, n), descending."""
    return svd(a, compute_uv=False)
