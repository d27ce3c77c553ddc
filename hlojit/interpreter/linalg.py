"""Linear algebra ops of the spec: triangular_solve and cholesky, by substitution and numpy, batched over the
leading dimensions.

Only the named triangle of `a` is read, as the spec says. cholesky of a matrix that is not positive definite
gives NaNs (what JAX gives); the other triangle of its result is zero.
"""
from __future__ import annotations

import numpy as np
from iree.compiler import ir

from ..dialects.types import dtype_of, enum_attr
from .interpreter import OPS


def _working(x: np.ndarray) -> np.ndarray:
    """f16 and bf16 in float32: numpy's linalg and einsum refuse them (the result is rounded back)."""
    return x.astype(np.float32) if x.dtype.itemsize == 2 and x.dtype.kind != "c" else x


def _bool_attr(op, name: str) -> bool:
    return name in op.attributes and bool(ir.BoolAttr(op.attributes[name]).value)


def _forward(a: np.ndarray, b: np.ndarray, unit: bool) -> np.ndarray:
    """x with a x = b for lower-triangular a [..., n, n] and b [..., n, k], row by row."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype=np.result_type(a, b))
    for i in range(n):
        rest = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, :i], x[..., :i, :])
        x[..., i, :] = rest if unit else rest / a[..., i, i][..., None]
    return x


def _triangular_solve(op):
    left, lower, unit = (_bool_attr(op, n) for n in ("left_side", "lower", "unit_diagonal"))
    transpose = enum_attr(op, "transpose_a")           # NO_TRANSPOSE, TRANSPOSE or ADJOINT
    dtype = dtype_of(op.result.type)

    def run(a, b):
        a, b = _working(np.asarray(a)), _working(np.asarray(b))
        a = np.tril(a) if lower else np.triu(a)
        if transpose != "NO_TRANSPOSE":
            a = np.swapaxes(a, -1, -2)
            if transpose == "ADJOINT":
                a = np.conj(a)
            lower_now = not lower
        else:
            lower_now = lower
        # right side: x a = b  <=>  a^T x^T = b^T
        if not left:
            a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
            lower_now = not lower_now
        if not lower_now:      # an upper system is a lower one with rows and columns reversed
            a, b = a[..., ::-1, ::-1], b[..., ::-1, :]
        x = _forward(a, b, unit)
        if not lower_now:
            x = x[..., ::-1, :]
        if not left:
            x = np.swapaxes(x, -1, -2)
        return np.ascontiguousarray(x).astype(dtype)
    return run


def _cholesky(op):
    lower = _bool_attr(op, "lower")
    dtype = dtype_of(op.result.type)

    def run(a):
        a = _working(np.asarray(a))
        half = np.tril(a) if lower else np.triu(a)
        diagonal = np.diagonal(half, axis1=-2, axis2=-1)[..., None, :] * np.eye(a.shape[-1], dtype=a.dtype)
        full = half + np.conj(np.swapaxes(half, -1, -2)) - diagonal        # the triangle, mirrored
        batch = full.reshape((-1,) + full.shape[-2:])
        out = np.empty_like(batch)
        for i, m in enumerate(batch):
            try:
                out[i] = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                out[i] = np.nan
        out = out.reshape(full.shape)
        return (out if lower else np.conj(np.swapaxes(out, -1, -2))).astype(dtype)
    return run


OPS.update({"stablehlo.triangular_solve": _triangular_solve, "stablehlo.cholesky": _cholesky})
