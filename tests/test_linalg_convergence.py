"""eigh's Jacobi sweeps stop once rounding's floor is reached: at n = 64 in float32 the off-diagonal part never
falls below eps |a| (it settles near sqrt(n) eps |a|), so a test of that alone ran every call to MAX_SWEEPS.
The sweep count comes from jacobi.eigen_sweeps, the function under ops.linalg.eigh."""
from __future__ import annotations

import numpy as np
import pytest

import hlojit as hj
from hlojit.frontend.ops.linalg import jacobi


def symmetric(n: int, dtype) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal((n, n))
    return ((x + x.T) / 2).astype(dtype)


@pytest.mark.parametrize("backend", ["iree:cpu", "reference"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eigh_sweeps_stop_at_rounding_floor(backend, dtype):
    a = symmetric(64, dtype)
    w, v, sweeps = hj.jit(jacobi.eigen_sweeps, backend=backend)(a)
    w, v = np.asarray(w), np.asarray(v)
    assert int(sweeps) <= 12 < jacobi.MAX_SWEEPS[np.dtype(dtype)]   # a random 64x64 needs 7-9
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(np.float64)), atol=200 * eps * np.abs(a).sum() / 64)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, a, atol=200 * eps * np.abs(a).sum() / 64)
