"""eig / eigvals of general square matrices (jax.numpy.linalg's: results always complex), in three phases,
each one loop body that compiles once whatever n:

1. Householder reduction to upper Hessenberg form, h = q^H a q: a loop over columns with a traced column
   index, every matrix of the stack at once (masks and batched matrix-vector products).
2. Complex shifted QR iterations to the Schur form t = z^H a z (LAPACK zlahqr's algorithm): sweeps over the
   bottom unreduced block [lo, hi] of h (a subdiagonal entry below eps times its diagonal neighbours is
   negligible, and zeroed where a rotation would mix it in: that deflates), each a chase of Givens
   rotations with one Wilkinson shift (the eigenvalue of the block's trailing 2x2 nearer its corner; an
   exceptional shift after 10 and 20 sweeps without deflation), at most 30 max(10, n) sweeps: ONE while
   loop whose iterations are single rotations, on real pairs. A rotation touches two rows and two columns
   (dynamic slices at scalar indices), so a stack runs matrix by matrix.
3. Eigenvectors of t by back-substitution, (t - w_k I) x_k = 0 with x_k[k] = 1, for every k at once (a loop
   over rows, from the last), then v = z x, columns scaled to unit 2-norm with their largest component real
   (LAPACK zgeev's normalisation, which numpy and JAX return).

The eigenvalues come in the order of the Schur form's diagonal (no guaranteed order, as numpy's and
JAX's). There is no balancing (LAPACK's gebal): badly scaled matrices lose accuracy LAPACK keeps. A matrix
with a non-finite entry, or whose iterations reach the sweep limit, gives nan eigenvalues and vectors.
The eigenvalues have JAX's gradient (a custom_vjp: the loops' trip counts depend on the data); the
eigenvectors have none.
"""
from __future__ import annotations

import numpy as np

from .... import errors
from ... import dtypes, ops
from ....dialects.types import constant_value
from ...autodiff import custom_vjp
from ...control import cond, fori_loop, while_loop
from .. import _core
from ..indexing import dynamic_slice, dynamic_update_slice
from . import _util
from ._util import mm, mT

# Guarded rotations per iteration of the QR loop: IREE 3.13 clones the loop-carried matrix once per iteration
# (benchmarks/loop_updates.py), so 8 steps share one clone (eig 256² 8.0 -> 3.4 s CPU); 16 failed to compile
# ("failed to solve for timepoint coverage").
UNROLL_ROTATIONS = 8
EXCEPTIONAL = 0.75    # zlahqr's dat1: an exceptional shift moves the corner by this much of its subdiagonal


def _complex_matrix(op: str, a):
    """a (..., n, n) as a complex Tensor: c64 from f32/c64 (and ints, f16), c128 from f64/c128."""
    a = _core.as_tensor(a, op)
    if not dtypes.is_complex(a.dtype):
        a = _util.matrix(op, a, square=True)
        return _core.convert(a, dtypes.complex128 if a.dtype == dtypes.float64 else dtypes.complex64)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        _core.fail(_util.ShapeError, op, f"needs square matrices in the last two dimensions, not {_core.describe(a)}")
    return _core.convert(a, a.dtype)


def _abs2(x):
    return ops.real(x) ** 2 + ops.imag(x) ** 2


def _hessenberg(a, vectors: bool = True):
    """(h, q) with h = q^H a q upper Hessenberg and q unitary (None unless `vectors`), for a stack a
    (..., n, n): reflector j maps column j's entries below the subdiagonal onto row j + 1
    (P = I - 2 v v^H / v^H v, P x = beta e_{j+1}, beta = -phase(x_{j+1}) |x|)."""
    n = a.shape[-1]
    q = ops.broadcast_to(_util.eye(n, a.dtype), a.shape) if vectors else None
    if n <= 2:
        return a, q
    row = _util.index((n, 1), 0)

    def step(j, carry):
        h, *q = carry
        x = ops.where(row > j, _util.column(h, j), 0)                          # (..., n, 1)
        alpha = _util.rows(x, j + 1)
        size = ops.abs(alpha)
        below = ops.sum(ops.where(row > j + 1, _abs2(x), 0), axis=-2, keepdims=True)
        norm = ops.sqrt(size * size + below)
        phase = ops.where(size == 0, 1, alpha / ops.where(size == 0, 1, size).astype(a.dtype))
        v = x + ops.where(row == j + 1, phase * norm.astype(a.dtype), 0)       # x - beta e_{j+1}
        scale = ops.where(below == 0, 0, 2 / ((size + norm) ** 2 + below))    # nothing below: P = I
        w = scale.astype(a.dtype) * v
        h = h - w * mm(ops.conj(mT(v)), h)
        w_h = ops.conj(mT(w))
        h = h - mm(h, v) * w_h
        return (h, *(x - mm(x, v) * w_h for x in q))
    h, *q = fori_loop(0, n - 2, step, (a,) if q is None else (a, q))
    return ops.triu(h, -1), (q[0] if q else None)


# The QR iterations carry h as real pairs (..., 2), [real, imaginary] last: a rotation's slices and updates
# are then one op for both parts (complex values become two real ones for IREE, each op twice: 25
# dispatches per rotation at n = 16, against 10), and its complex products are written out here.

def _pairs(z):
    """z as real pairs, the parts last."""
    return ops.stack([ops.real(z), ops.imag(z)], axis=-1)


def _complex(p):
    return ops.complex(p[..., 0], p[..., 1])


def _times_i(p):
    """i p for pairs p: (-imag, real)."""
    return ops.flip(p, -1) * np.array([-1, 1], p.dtype)


def _givens(f, g):
    """(c, sr, si), (1, 1) each, of the rotation [[c, s], [-conj(s), c]] (c real, s = sr + i si) that maps
    the complex pair [f, g] (pairs (1, 2)) to [r, 0]: c = |f| / |(f, g)|, s = phase(f) conj(g) / |(f, g)|,
    on f and g scaled by their largest part. Elementwise on the parts (no reductions): one dispatch."""
    fr, fi, gr, gi = f[:, 0:1], f[:, 1:2], g[:, 0:1], g[:, 1:2]
    scale = ops.maximum(ops.maximum(ops.abs(fr), ops.abs(fi)), ops.maximum(ops.abs(gr), ops.abs(gi)))
    trivial = scale == 0
    safe = ops.where(trivial, 1, scale)
    fr, fi, gr, gi = fr / safe, fi / safe, gr / safe, gi / safe
    size_f = ops.sqrt(fr * fr + fi * fi)
    norm = ops.where(trivial, 1, ops.sqrt(size_f * size_f + gr * gr + gi * gi))
    zero_f = size_f == 0
    pr = ops.where(zero_f, 1, fr / ops.where(zero_f, 1, size_f))
    pi = ops.where(zero_f, 0, fi / ops.where(zero_f, 1, size_f))
    c = ops.where(trivial, 1, size_f / norm)
    return c, ops.where(trivial, 0, (pr * gr + pi * gi) / norm), ops.where(trivial, 0, (pi * gr - pr * gi) / norm)


def _window(x, last_hi, stuck):
    """Where the next sweep works, and with what shift: (lo, hi, shift (pair), stuck), for h = x[:n] in
    pairs. [lo, hi] is the bottom unreduced block of h (hi = 0 once every subdiagonal entry is negligible);
    stuck counts the sweeps since hi last moved, which picks the exceptional shifts."""
    n = x.shape[1]
    real = x.dtype
    index = _util.index((n - 1,), 0)
    h = x[:n]
    size = ops.sqrt(ops.sum(h * h, axis=-1))
    d, sub = ops.diagonal(size), ops.diagonal(size, -1)
    small = sub <= ops.maximum(_util.eps(real) * (d[:-1] + d[1:]), float(np.finfo(real).tiny))
    hi = ops.max(ops.where(small, 0, index + 1))
    lo = ops.max(ops.where(ops.logical_and(small, index + 1 < hi), index + 1, 0))
    stuck = ops.where(hi == last_hi, stuck + 1, 0)
    corner = _complex(dynamic_slice(h, [hi - 1, hi - 1, 0], (2, 2, 2)))
    a, b, c, e = corner[0, 0], corner[0, 1], corner[1, 0], corner[1, 1]
    mean, gap = (a + e) / 2, ops.sqrt(((a - e) / 2) ** 2 + b * c)
    up, down = mean + gap, mean - gap
    shift = ops.where(ops.abs(up - e) <= ops.abs(down - e), up, down)       # Wilkinson's
    top = _complex(dynamic_slice(h, [lo, lo, 0], (2, 1, 2)))
    shift = ops.where(ops.logical_and(stuck > 0, stuck % 20 == 10),
                      top[0, 0] + EXCEPTIONAL * ops.abs(ops.real(top[1, 0])), shift)
    shift = ops.where(ops.logical_and(stuck > 0, stuck % 20 == 0), e + EXCEPTIONAL * ops.abs(ops.real(c)), shift)
    return lo, hi, ops.reshape(_pairs(shift), (1, 2)), stuck


def _rotate(x, k, lo, hi, shift, active):
    """Step k of a QR sweep of the block [lo, hi] of h = x[:n] (x: h (n, n), or h above z (2n, n), as
    pairs): the rotation of rows and columns k, k + 1 that introduces the shift (k = lo) or zeroes the
    bulge h[k + 1, k - 1]. It acts on whole rows and columns (what lies outside the block is part of the
    Schur form; z takes the column rotation), and zeroes h's negligible entries h[lo, lo - 1] and
    h[hi + 1, hi] where it would mix them in. Each of the two updates is one elementwise expression of the
    pair of rows (columns) and its reverse: [top, bottom] -> c [top, bottom] + [s bottom, -conj(s) top].
    Where `active` is false (the loop's own test failed, within an unrolled iteration) it rotates by the
    identity and zeroes nothing."""
    m, n = x.shape[:2]
    first = k == lo
    fg = ops.reshape(dynamic_slice(x, [k, ops.where(first, k, k - 1), 0], (2, 1, 2)), (2, 2))
    c, sr, si = _givens(fg[0:1] - ops.where(first, shift, 0), fg[1:2])
    c, sr, si = ops.where(active, c, 1), ops.where(active, sr, 0), ops.where(active, si, 0)
    sign = np.array([1, -1], x.dtype)
    pair = dynamic_slice(x, [k, 0, 0], (2, n, 2))                           # rows k, k + 1
    other = ops.flip(pair, 0)
    new = c * pair + ops.reshape(sr * sign, (2, 1, 1)) * other + si * _times_i(other)
    col = _util.index((1, n, 1), 1)
    zero = ops.logical_or(col < lo, ops.logical_and(_util.index((2, 1, 1), 0) == 1,
                                                    ops.logical_and(col == k - 1, ops.logical_not(first))))
    x = dynamic_update_slice(x, ops.where(ops.logical_and(active, zero), 0, new), [k, 0, 0])
    pair = dynamic_slice(x, [0, k, 0], (m, 2, 2))                           # columns k, k + 1
    other = ops.flip(pair, 1)
    new = c * pair + ops.reshape(sr * sign, (1, 2, 1)) * other - si * _times_i(other)
    row = _util.index((m, 1, 1), 0)
    outside = ops.logical_and(active, ops.logical_and(row > hi, row < n))
    return dynamic_update_slice(x, ops.where(outside, 0, new), [0, k, 0])


def _schur(h, z):
    """(t, z, converged, rotations) for one Hessenberg matrix h (n, n): t = z^H h z upper triangular (z, or
    None, takes the rotations), by QR sweeps until every subdiagonal entry is negligible or 30 max(10, n)
    sweeps. ONE loop whose every iteration is one rotation; the last of a sweep finds the next window and
    shift. (A loop of sweeps around a loop of rotations fails at run time on IREE 3.13's cpu, OUT_OF_RANGE in
    copy_buffer, once the inner loop takes a shift computed in the outer one; so does a window found at a
    sweep's first step for that step's rotation, in a stack's loop.) h and z travel as one
    (2n, n) array of pairs: one column rotation for both."""
    n = h.shape[-1]
    limit = 30 * max(10, n)

    def keep_going(state):
        sweeps, _, _, hi = state[:4]
        return ops.logical_and(sweeps <= limit, hi > 0)

    def one_step(state):
        sweeps, k, lo, hi, stuck, shift, x, rotations = state
        active = keep_going(state)
        x = _rotate(x, k, lo, hi, shift, active)
        k = ops.where(active, k + 1, k)
        ended = ops.logical_and(active, k >= hi)
        lo, hi, shift, stuck = cond(ended, lambda x, last, stuck, lo, shift: _window(x, last, stuck),
                                    lambda x, last, stuck, lo, shift: (lo, last, shift, stuck),
                                    x, hi, stuck, lo, shift)   # operands, not captures: a captured complex
        # shift inside the loop over a stack failed IREE 3.13's cpu ("operand does not dominate this use")
        sweeps = ops.where(ended, sweeps + 1, sweeps)
        return sweeps, ops.where(ended, lo, k), lo, hi, stuck, shift, x, rotations + active.astype(rotations.dtype)

    def step(state):
        for _ in range(UNROLL_ROTATIONS):
            state = one_step(state)
        return state
    x = _pairs(h if z is None else ops.concatenate([h, z], axis=0))
    lo, hi, shift, stuck = _window(x, ops.full((), -1, dtypes.int32), ops.zeros((), dtypes.int32))
    one = ops.ones((), dtypes.int32)
    _, _, _, hi, _, _, x, rotations = while_loop(keep_going, step, (one, lo, lo, hi, stuck, shift, x, one - 1))
    x = _complex(x)
    return ops.triu(x[:n]), (None if z is None else x[n:]), hi == 0, rotations


def _schur_stack(h, z):
    """_schur of each matrix of the stack h (..., n, n), one after another (a loop over the flattened
    stack), and z (..., n, n) or None: (t, z, converged (...))."""
    batch, n = h.shape[:-2], h.shape[-1]
    if not batch:
        return _schur(h, z)[:3]
    count = int(np.prod(batch))
    flat = [ops.reshape(x, (count, n, n)) for x in ((h,) if z is None else (h, z))]

    def one(b, carry):
        done, *matrices = carry
        t, zb, ok, _ = _schur(*(ops.reshape(dynamic_slice(x, [b, 0, 0], (1, n, n)), (n, n)) for x in matrices),
                           *(() if z is not None else (None,)))
        updated = [dynamic_update_slice(x, ops.reshape(y, (1, n, n)), [b, 0, 0])
                   for x, y in zip(matrices, (t, zb))]
        return (dynamic_update_slice(done, ops.reshape(ok, (1,)), [b]), *updated)
    done, *out = fori_loop(0, count, one, (ops.zeros((count,), dtypes.bool_), *flat))
    t = ops.reshape(out[0], h.shape)
    return t, (ops.reshape(out[1], h.shape) if z is not None else None), ops.reshape(done, batch)


def _triangular_eigenvectors(t, w):
    """x (..., n, n), upper triangular with a unit diagonal: (t - w_k I) x_k = 0 for every column k, by
    back-substitution over the rows from the last, all k at once. A divisor t_ii - w_k smaller than
    eps |w_k| becomes that (LAPACK ztrevc's perturbation: repeated eigenvalues)."""
    n = t.shape[-1]
    real = dtypes.real_dtype(t.dtype)
    smallest = ops.maximum(_util.eps(real) * ops.abs(w), float(np.finfo(real).tiny))[..., None, :]
    col = _util.index((1, n), 1)

    def step(r, x):
        i = n - 1 - r
        row = _util.rows(t, i)                                            # (..., 1, n)
        divisor = _util.column(row, i) - w[..., None, :]
        divisor = ops.where(ops.abs(divisor) < smallest, smallest.astype(t.dtype), divisor)
        new = ops.where(col > i, -mm(row, x) / divisor, ops.where(col == i, 1, 0))
        return _util.set_rows(x, new.astype(t.dtype), i)
    return fori_loop(0, n, step, ops.zeros(t.shape, t.dtype))


def normalised_columns(v):
    """v's columns scaled to unit 2-norm, their component of largest modulus real and positive."""
    size = _abs2(v)
    largest = ops.argmax(size, axis=-2, keepdims=True)
    pick = ops.sum(ops.where(_util.index((v.shape[-2], 1), 0) == largest, v, 0), axis=-2, keepdims=True)
    norm = ops.sqrt(ops.sum(size, axis=-2, keepdims=True))
    scale = ops.where(norm == 0, 1, norm * ops.abs(pick))
    return v * (ops.conj(pick) / scale.astype(v.dtype))


def _eig(a, vectors: bool):
    """(w, v or None) of the complex stack a (..., n, n)."""
    n = a.shape[-1]
    if n <= 1:
        return a[..., 0] if n else ops.zeros(a.shape[:-1], a.dtype), (ops.ones(a.shape, a.dtype) if vectors else None)
    finite = ops.all(ops.isfinite(a), axis=(-2, -1))
    a = ops.where(finite[..., None, None], a, 0)
    h, q = _hessenberg(a, vectors)
    t, z, converged = _schur_stack(h, q)
    good = ops.logical_and(finite, converged)
    nan = ops.complex(np.nan, np.nan).astype(a.dtype)
    w = ops.where(good[..., None], ops.diagonal(t, 0, -2, -1), nan)
    if not vectors:
        return w, None
    v = normalised_columns(mm(z, _triangular_eigenvectors(t, w)))
    return w, ops.where(good[..., None, None], v, nan)


def _complex_inverse(v):
    """v^-1 for complex v (..., n, n), from the real inverse of its real form [[x, -y], [y, x]] (whose
    inverse is [[p, -q], [q, p]], v^-1 = p + i q): linalg's LU is real."""
    from .lu import inv
    n = v.shape[-1]
    x, y = ops.real(v), ops.imag(v)
    real = inv(ops.concatenate([ops.concatenate([x, -y], axis=-1), ops.concatenate([y, x], axis=-1)], axis=-2))
    return ops.complex(real[..., :n, :n], real[..., n:, :n])


def _eig_fwd(a):
    w, v = _eig(a, True)
    return (w, v), (v,)


def _known_zero(t) -> bool:
    """Whether t is a zero constant, or a broadcast of one: the cotangent autodiff gives an unused output."""
    def producer(value):
        owner = value.owner
        return getattr(owner, "operation", owner)          # a block argument's owner is a block: no name
    op = producer(t.value)
    if getattr(op, "name", None) == "stablehlo.broadcast_in_dim":
        op = producer(op.operands[0])
    return getattr(op, "name", None) == "stablehlo.constant" and not np.any(constant_value(op))


def _eig_bwd(residuals, g):
    """JAX's rule for the eigenvalues, the transpose of dw = diag(v^-1 da v): da = v^-T diag(gw) v^T
    (eigenvalues must be distinct: v invertible). The eigenvectors' cotangent has no rule here: a loss
    that uses them raises."""
    (v,), (gw, gv) = residuals, g
    if gv is not None and not _known_zero(gv):
        _core.fail(errors.DifferentiationError, "eig", "differentiates its eigenvalues only (gradients through "
                                                       "the eigenvectors are not supported); use eigvals")
    return (mT(mm(v * gw[..., None, :], _complex_inverse(v))),)


@custom_vjp
def _eig_complex(a):
    return _eig(a, True)


_eig_complex.defvjp(_eig_fwd, _eig_bwd)


def _eigvals_fwd(a):
    """The eigenvalues alone, as without derivatives (a custom_vjp's fwd is what runs); bwd computes the
    eigenvectors it needs by a second eig of a (as svdvals does)."""
    return _eig(a, False)[0], (a,)


@custom_vjp
def _eigvals_complex(a):
    return _eigvals_fwd(a)[0]


_eigvals_complex.defvjp(_eigvals_fwd, lambda residuals, gw: _eig_bwd((_eig(residuals[0], True)[1],), (gw, None)))


def eig(a):
    """numpy.linalg.eig of a (..., n, n), as jax.numpy.linalg.eig: (w, v) with a v = v diag(w), complex
    (c64 for f32/c64 input, c128 for f64/c128), eigenvectors as columns of unit 2-norm whose largest
    component is real, eigenvalues in the Schur form's order (none guaranteed)."""
    return _eig_complex(_complex_matrix("eig", a))


def eigvals(a):
    """numpy.linalg.eigvals of a (..., n, n): eig's eigenvalues (complex), computed without eigenvectors."""
    return _eigvals_complex(_complex_matrix("eigvals", a))
