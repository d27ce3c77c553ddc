"""Every public name of ops.linalg and ops.fft runs eagerly (outside a trace, on numpy arrays and hj.Arrays) and
gives what the same call traced by hj.jit gives, on the same target; a value an op returns as it is (cho_factor's
`lower`) comes back as that value."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend import pytree

rng = np.random.default_rng(11)
f32 = np.float32


def _normal(*shape):
    return rng.normal(size=shape).astype(f32)


_A = _normal(4, 4) + 4 * np.eye(4, dtype=f32)                # well conditioned
_SPD = (_A @ _A.T + np.eye(4)).astype(f32)
_RECT = _normal(5, 3)
_B = _normal(4, 2)
_UPPER = np.triu(_A)
_SIGNAL = _normal(2, 8)
_SPECTRUM = np.fft.fft(_SIGNAL).astype(np.complex64)
_HALF = np.fft.rfft(_SIGNAL).astype(np.complex64)

LINALG = {  # name -> (args, kwargs)
    "cho_factor": ((_SPD,), {"lower": True}),
    "cho_solve": (((np.linalg.cholesky(_SPD).astype(f32), True), _B), {}),
    "cholesky": ((_SPD,), {}),
    "cond": ((_A,), {}),
    "det": ((_A,), {}),
    "eig": ((_A,), {}),
    "eigh": ((_SPD,), {}),
    "eigvals": ((_A,), {}),
    "eigvalsh": ((_SPD,), {"UPLO": "U"}),
    "expm": ((_A / 8,), {}),
    "inv": ((_A,), {}),
    "lstsq": ((_RECT, _normal(5)), {}),
    "lu": ((_A,), {}),
    "lu_factor": ((_A,), {}),
    "lu_solve": (((np.triu(_A) + np.tril(_normal(4, 4), -1) * 0.1, np.array([1, 1, 3, 3], np.int32)), _B), {}),
    "matrix_norm": ((_A,), {"ord": 1}),
    "matrix_power": ((_A,), {"n": 3}),
    "matrix_rank": ((_RECT,), {}),
    "multi_dot": (([_A, _B, _normal(2, 3)],), {}),
    "norm": ((_RECT,), {"axis": 0}),
    "pinv": ((_RECT,), {}),
    "qr": ((_RECT,), {}),
    "slogdet": ((_A,), {}),
    "solve": ((_A, _B), {}),
    "solve_triangular": ((_UPPER, _B), {}),
    "svd": ((_RECT,), {"full_matrices": False}),
    "svdvals": ((_RECT,), {}),
    "vector_norm": ((_RECT,), {"ord": 3, "axis": -1}),
}
FFT = {
    "fft": ((_SIGNAL,), {"n": 6}),
    "ifft": ((_SPECTRUM,), {"norm": "ortho"}),
    "rfft": ((_SIGNAL,), {}),
    "irfft": ((_HALF,), {"n": 8}),
    "hfft": ((_HALF,), {}),
    "ihfft": ((_SIGNAL,), {}),
    "fft2": ((_SIGNAL,), {}),
    "ifft2": ((_SPECTRUM,), {}),
    "rfft2": ((_SIGNAL,), {}),
    "irfft2": ((np.fft.rfft2(_SIGNAL).astype(np.complex64),), {"s": (2, 8)}),
    "fftn": ((_SIGNAL,), {"axes": (0,)}),
    "ifftn": ((_SPECTRUM,), {}),
    "rfftn": ((_SIGNAL,), {}),
    "irfftn": ((np.fft.rfftn(_SIGNAL).astype(np.complex64),), {}),
    "fftfreq": ((8,), {"d": 0.5}),
    "rfftfreq": ((9,), {}),
    "fftshift": ((_SIGNAL,), {}),
    "ifftshift": ((_SIGNAL,), {"axes": 1}),
}
CASES = {**{f"linalg.{n}": (ops.linalg, n, *c) for n, c in LINALG.items()},
         **{f"fft.{n}": (ops.fft, n, *c) for n, c in FFT.items()}}


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic))


def _traced(fn, args, kwargs, backend):
    """The same call under hj.jit: its arrays are the program's arguments, everything else is static."""
    leaves, tree = pytree.flatten((args, kwargs))
    arrays = [x for x in leaves if _is_array(x)]

    def call(*tensors):
        supplied = iter(tensors)
        a, k = pytree.unflatten(tree, [next(supplied) if _is_array(x) else x for x in leaves])
        return fn(*a, **k)
    return hj.jit(call, backend=backend)(*arrays)


def test_every_public_name_has_a_case_and_is_eager():
    public = {f"linalg.{n}" for n in ops.linalg.__all__} | {f"fft.{n}" for n in ops.fft.__all__}
    assert sorted(public - set(CASES)) == [], "public names without an eager case"
    for namespace in (ops.linalg, ops.fft):
        assert [n for n in namespace.__all__ if not hasattr(getattr(namespace, n), "eager_fn")] == []


def _assert_same(eager, traced, tolerance):
    eager_leaves, eager_tree = pytree.flatten(eager)
    traced_leaves, traced_tree = pytree.flatten(traced)
    assert eager_tree == traced_tree
    assert any(isinstance(x, hj.Array) for x in eager_leaves)
    for e, t in zip(eager_leaves, traced_leaves):
        if isinstance(e, hj.Array):
            assert e.shape == t.shape and e.dtype == t.dtype
            np.testing.assert_allclose(np.asarray(e), np.asarray(t), rtol=tolerance, atol=tolerance)
        else:
            assert type(e) is not hj.Array and e == t


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_traced(name):
    """Every name, on the reference backend (no compiles): the eager program is the traced one."""
    namespace, op, args, kwargs = CASES[name]
    fn = getattr(namespace, op)
    with hj.eager.default_backend("reference"):
        eager = fn(*args, **kwargs)
    _assert_same(eager, _traced(fn, args, kwargs, "reference"), 1e-6)


# on IREE, a few of each namespace (the wrapping is one for all; IREE's linalg compiles take seconds each here)
_ON_IREE = ["fft.fftfreq", "fft.ifftshift", "fft.rfft", "linalg.cho_factor", "linalg.det", "linalg.solve_triangular"]


@pytest.mark.parametrize("backend", ["iree:cpu", "iree:vmvx"])
@pytest.mark.parametrize("name", _ON_IREE)
def test_eager_on_iree(backend, name):
    namespace, op, args, kwargs = CASES[name]
    fn = getattr(namespace, op)
    with hj.eager.default_backend(backend):
        eager = fn(*args, **kwargs)
    assert all(x.driver != "reference" for x in pytree.flatten(eager)[0] if isinstance(x, hj.Array))
    _assert_same(eager, _traced(fn, args, kwargs, "reference"), 1e-4)


def test_static_outputs_and_arrays_chain_eagerly():
    """cho_factor's `lower` stays a Python bool, so its result feeds cho_solve eagerly; hj.Arrays chain."""
    with hj.eager.default_backend("reference"):
        factor = ops.linalg.cho_factor(_SPD, lower=True)
        assert factor[1] is True and isinstance(factor[0], hj.Array)
        x = ops.linalg.cho_solve(factor, _B)
        lu_x = ops.linalg.lu_solve(ops.linalg.lu_factor(_A), _B)
        round_trip = ops.fft.irfft(ops.fft.rfft(_SIGNAL), n=8)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(_SPD, _B), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(lu_x), np.linalg.solve(_A, _B), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(round_trip), _SIGNAL, rtol=1e-5, atol=1e-5)
