"""Householder reduction of a symmetric matrix to tridiagonal form: a = q t q^T, blocked (LAPACK's dsytrd).

Every column step is the same code, its column a traced index (masks built from iotas compared with the
counter), and so is every panel: IREE compiles one body of each loop whatever n is. Column k's reflector is
zero above row k + 1 and zeroes the column below its subdiagonal.
"""
from __future__ import annotations

from ... import ops
from ...control import fori_loop
from . import _util


def _reflector(x, rows, k):
    """(v, tau): the Householder reflector I - tau v v^T (v[k+1] = 1, zero above) that maps x's rows
    k+1.. to a multiple of e_(k+1) (LAPACK's dlarfg). tau is 0 when those rows are already that multiple."""
    alpha = ops.sum(ops.where(rows == k + 1, x, 0), axis=-1)
    tail = ops.where(rows > k + 1, x, 0)
    tail_squares = ops.sum(tail * tail, axis=-1)
    untouched = tail_squares == 0
    beta = ops.where(alpha >= 0, -1, 1) * ops.sqrt(alpha * alpha + tail_squares)
    beta = ops.where(untouched, 1, beta)
    tau = ops.where(untouched, 0, (beta - alpha) / beta)
    scale = ops.where(untouched, 0, 1 / ops.where(untouched, 1, alpha - beta))
    v = ops.where(rows == k + 1, 1, tail * scale[..., None])
    return v, tau


PANEL = 32   # columns per panel of the blocked reduction


def tridiagonalize(a, vectors: bool = True):
    """(d (..., n), e (..., n - 1), reflectors): a = q t q^T for symmetric a (..., n, n) and the tridiagonal t
    with diagonal d and off-diagonal e. Blocked as LAPACK's dsytrd/dlatrd: a panel's columns are reduced
    against a v and w kept aside (n x PANEL each; the column step reads the matrix once, for a v, and updates
    nothing), then one rank-2 PANEL update a - V W^T - W V^T (one matmul, [V W] [W V]^T) brings the rest of
    the matrix up to date. q is not formed: `reflectors` is (V, T), every reflector a column of V and each
    panel's compact-WY factor T stacked by rows, which apply_reflectors multiplies into the eigenvectors with
    matmuls; None unless `vectors`. Panels and their columns are two nested fori_loops with traced offsets,
    the columns 8 unrolled steps per iteration (_util.column_loop): each iteration of an IREE 3.13 loop copies
    the carried vs, ws and t whole and pays a host round trip, so fewer iterations (tridiagonalize 1024²:
    1060 -> 434 ms, 256²: 16.4 -> 9.8; benchmarks/loop_updates.py)."""
    n = a.shape[-1]
    # at least two panels: with one (n <= 32), IREE 3.13's compiler crashed (segfault, or "Allocation failed")
    # on the reflectors kept for apply_reflectors (updates of the whole V and T)
    size = max(-(-n // PANEL), 2) * PANEL
    a = _util.pad_rectangular(a, size)      # zero rows and columns: they reflect nothing and stay zero
    batch = a.shape[:-2]
    rows = _util.index((size,), 0)
    panel_columns = _util.index((PANEL,), 0)

    def column_step(i, carry, start, a):
        vs, ws, t = carry
        k = start + i
        column = _util.column(a, k)[..., 0]
        v_row, w_row = _util.rows(vs, k)[..., 0, :], _util.rows(ws, k)[..., 0, :]
        column = column - ops.sum(vs * w_row[..., None, :] + ws * v_row[..., None, :], axis=-1)
        v, tau = _reflector(column, rows, k)
        vtv, wtv = ops.sum(vs * v[..., :, None], axis=-2), ops.sum(ws * v[..., :, None], axis=-2)
        av = ops.sum(a * v[..., None, :], axis=-1)
        y = tau[..., None] * (av - ops.sum(vs * wtv[..., None, :] + ws * vtv[..., None, :], axis=-1))
        w = y - (0.5 * tau * ops.sum(y * v, axis=-1))[..., None] * v
        t_column = -tau[..., None] * ops.sum(t * vtv[..., None, :], axis=-1)
        t_column = ops.where(panel_columns == i, tau[..., None], t_column)
        return (_util.set_columns(vs, v[..., :, None], i), _util.set_columns(ws, w[..., :, None], i),
                _util.set_columns(t, t_column[..., :, None], i))

    def panel_step(p, carry):
        a, *kept = carry
        start = p * PANEL
        empty = ops.zeros(batch + (size, PANEL), a.dtype)
        vs, ws, t = _util.column_loop(PANEL, lambda i, c: column_step(i, c, start, a),
                                      (empty, empty, ops.zeros(batch + (PANEL, PANEL), a.dtype)))
        a = a - _util.mm(ops.concatenate([vs, ws], axis=-1), _util.mT(ops.concatenate([ws, vs], axis=-1)))
        if kept:
            kept = [_util.set_columns(kept[0], vs, start), _util.set_rows(kept[1], t, start)]
        return (a, *kept)
    kept = [ops.zeros(a.shape, a.dtype), ops.zeros(batch + (size, PANEL), a.dtype)] if vectors else []
    a, *kept = fori_loop(0, size // PANEL, panel_step, (a, *kept))
    d, e = ops.diagonal(a, 0, -2, -1)[..., :n], ops.diagonal(a, -1, -2, -1)[..., :n - 1]
    return d, e, (tuple(kept) if vectors else None)


def apply_reflectors(reflectors, x):
    """q x for the q of tridiagonalize (x (..., n, m), n rows as a had): the panels' compact-WY blocks
    I - V T V^T applied last panel first, three matmuls each."""
    vs, ts = reflectors
    size, n = vs.shape[-1], x.shape[-2]
    x = _util.pad_rows(x, size)
    count = size // PANEL

    def panel(p, x):
        start = (count - 1 - p) * PANEL
        v, t = _util.column(vs, start, PANEL), _util.rows(ts, start, PANEL)
        return x - _util.mm(v, _util.mm(t, _util.mm(_util.mT(v), x)))
    return fori_loop(0, count, panel, x)[..., :n, :]
