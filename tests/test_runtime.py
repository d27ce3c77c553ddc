"""Runtime options: the CPU driver and thread count, block_until_ready, buffer donation."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hlojit as hj
from hlojit import backends, ops
from hlojit.pipeline import cache, targets

BACKENDS = ["reference", "iree:cpu"]


def step(p, g):
    return p - 0.5 * g


def buffer_address(a: hj.Array) -> int:
    """Where an IREE Array's data lives, without mapping it through Array.numpy (that makes it non-exclusive)."""
    return a.buffer_view.map().asarray(a.shape, a.dtype).__array_interface__["data"][0]


def on_device(backend, x):
    return hj.jit(lambda x: x * 2.0, backend=backend)(x)


# --- driver and threads ---

def test_driver_option_picks_the_driver():
    x = np.ones(8, np.float32)
    assert hj.jit(step).compile(x, x).driver == "local-sync"  # small work: the default picks local-sync
    forced = hj.jit(step, driver="local-task")
    assert forced.compile(x, x).driver == "local-task"
    np.testing.assert_allclose(np.asarray(forced(x, x)), 0.5 * x)
    assert hj.jit(step, backend="reference", driver="local-task")(x, x).shape == (8,)  # accepted, ignored


def test_bad_runtime_options_raise_config_error(monkeypatch):
    with pytest.raises(hj.ConfigError, match="not an IREE CPU driver"):
        hj.jit(step, driver="cuda-sync")
    with pytest.raises(hj.ConfigError, match="runs on cuda"):
        hj.jit(step, backend="iree:cuda", driver="local-sync")
    for bad in (0, -1, 257, 2.5, "two"):
        with pytest.raises(hj.ConfigError):
            hj.set_cpu_threads(bad)
    monkeypatch.setenv("HLOJIT_CPU_THREADS", "many")
    with pytest.raises(hj.ConfigError, match="HLOJIT_CPU_THREADS"):
        backends.cpu_threads()


def test_cpu_threads_are_fixed_when_local_task_starts():
    script = (
        "import numpy as np, hlojit as hj\n"
        "from hlojit.backends import iree\n"
        "hj.set_cpu_threads(1)\n"
        "x = np.ones(4, np.float32)\n"
        "assert np.asarray(hj.jit(lambda x: x + 1, driver='local-task')(x)).sum() == 8\n"
        "assert iree.local_task_threads() == 1\n"
        "hj.set_cpu_threads(1)  # the same count: fine\n"
        "try:\n"
        "    hj.set_cpu_threads(2)\n"
        "except hj.ConfigError as e:\n"
        "    print('refused:', e)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(hj.__file__))))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "refused: the local-task driver already runs with 1 worker threads" in out.stdout


# --- block_until_ready ---

@pytest.mark.parametrize("backend", BACKENDS)
def test_block_until_ready_returns_the_array(backend):
    y = hj.jit(step, backend=backend)(np.ones(3, np.float32), np.ones(3, np.float32))
    assert y.block_until_ready() is y
    np.testing.assert_array_equal(np.asarray(y), [0.5, 0.5, 0.5])


# --- donation ---

@pytest.mark.parametrize("backend", BACKENDS)
def test_a_donated_array_refuses_use(backend):
    f = hj.jit(step, backend=backend, donate_argnums=0)
    g = np.ones(16, np.float32)
    p = on_device(backend, np.arange(16, dtype=np.float32))
    q = f(p, g)
    np.testing.assert_array_equal(np.asarray(q), np.arange(16) * 2.0 - 0.5)
    assert p.is_donated and not q.is_donated
    for use in (np.asarray, lambda a: f(a, g), lambda a: hj.jit(step, backend=backend)(a, g),
                lambda a: a.block_until_ready(), repr):
        with pytest.raises(hj.BackendError, match=r"donated to step\(\)"):
            use(p)
    np.testing.assert_array_equal(np.asarray(f(q, g)), np.arange(16) * 2.0 - 1.0)  # the result lives on


@pytest.mark.parametrize("backend", BACKENDS)
def test_donate_argnames_and_pytrees(backend):
    @hj.jit(backend=backend, donate_argnames="params")
    def update(params, grads):
        return {k: params[k] - grads[k] for k in params}
    params = {"w": on_device(backend, np.ones((2, 2), np.float32)), "b": on_device(backend, np.ones(2, np.float32))}
    new = update(params, {"w": np.ones((2, 2), np.float32), "b": np.ones(2, np.float32)})
    np.testing.assert_array_equal(np.asarray(new["w"]), np.ones((2, 2)))
    assert params["w"].is_donated and params["b"].is_donated


def test_donating_numpy_copies_it():
    p = np.arange(4, dtype=np.float32)
    out = hj.jit(step, donate_argnums=0)(p, np.ones(4, np.float32))
    np.testing.assert_array_equal(p, np.arange(4))  # the caller's numpy array is untouched
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) - 0.5)


def test_donated_buffer_is_reused_on_iree():
    f = hj.jit(step, donate_argnums=0)
    g = np.ones(1024, np.float32)
    p = on_device(None, np.arange(1024, dtype=np.float32))
    before = buffer_address(p)
    q = f(p, g)
    assert buffer_address(q) == before  # the result was written into p's memory
    assert 'tf.aliasing_output = 0 : i32' in f.lower(p=q, g=g).mlir


@pytest.mark.parametrize("make_twin", ["identity", "passthrough", "duplicate", "numpy view"])
def test_donation_never_changes_another_array(make_twin):
    """IREE hands one buffer to several results (identity, x passed through, equal outputs); a numpy view
    may be alive too. Donating one of them must not change the other: hlojit copies instead of reusing."""
    f = hj.jit(step, donate_argnums=0)
    g = np.ones(8, np.float32)
    p = on_device(None, np.arange(8, dtype=np.float32))
    if make_twin == "identity":
        donor, twin = p, hj.jit(lambda x: x)(p)
    elif make_twin == "passthrough":
        donor, twin = p, hj.jit(lambda x, y: (x + y, x))(p, g)[1]
    elif make_twin == "duplicate":
        donor, twin = hj.jit(lambda x: (x + 1, x + 1))(p)
    else:
        donor, twin = p, np.asarray(p)
    expected = np.array(twin)
    out = f(donor, g)
    np.testing.assert_array_equal(np.asarray(twin), expected)
    np.testing.assert_array_equal(np.asarray(out), expected - 0.5)


def test_unsafe_aliases_are_not_requested():
    """IREE 3.13 gets these wrong when p is aliased to the result (measured): hlojit does not alias them."""
    n = 16
    p0 = np.arange(n * n, dtype=np.float32).reshape(n, n)
    g = np.eye(n, dtype=np.float32)
    cases = [(lambda p, g: ops.transpose(p) + g, lambda p, g: p.T + g),
             (lambda p, g: p[::-1] + g, lambda p, g: p[::-1] + g),
             (lambda p, g: (p * 2.0 + g, ops.sum(p, axis=0)), lambda p, g: (p * 2 + g, p.sum(0)))]
    for fn, reference in cases:
        f = hj.jit(fn, donate_argnums=0)
        assert "tf.aliasing_output" not in f.lower(p0, g).mlir
        outs, wants = f(on_device(None, p0 / 2), g), reference(p0, g)
        for got, want in zip(*((outs, wants) if isinstance(wants, tuple) else ((outs,), (wants,)))):
            np.testing.assert_allclose(np.asarray(got), want)


def test_donation_is_part_of_the_compile_cache_key():
    x = np.ones(4, np.float32)
    plain = hj.jit(step).lower(x, x).program
    donated = hj.jit(step, donate_argnums=0).lower(x, x).program
    assert cache.key(plain, targets.cpu()) != cache.key(donated, targets.cpu())


def test_donation_argument_errors():
    with pytest.raises(ValueError, match="donate_argnums 5 is out of range"):
        hj.jit(step, donate_argnums=5)
    with pytest.raises(ValueError, match="not parameters"):
        hj.jit(step, donate_argnames="q")
    with pytest.raises(ValueError, match="both static and donated"):
        hj.jit(step, donate_argnums=0, static_argnums=0)


@pytest.mark.parametrize("backend", BACKENDS + ["iree:vmvx"])
def test_device_put_uploads_once_and_calls_take_it_as_it_is(backend):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    placed = hj.device_put(x, backend=backend)
    x[0, 0] = 100.0                                # the Array holds its own copy
    assert isinstance(placed, hj.Array) and placed.shape == (3, 4) and placed.dtype == np.float32
    f = hj.jit(lambda a, s: a.T * s + 1, backend=backend)
    expected = np.arange(12, dtype=np.float32).reshape(3, 4).T * 2 + 1
    np.testing.assert_array_equal(np.asarray(f(placed, hj.device_put(np.float32(2), backend=backend))), expected)
    assert hj.device_put(3.5, backend=backend).shape == ()
    for unsupported in (np.array(["text"]), np.clongdouble(1j), np.float128(1)):   # complex64/128 are dtypes now
        with pytest.raises(hj.BackendError, match="not a dtype hlojit computes with"):
            hj.device_put(unsupported, backend=backend)


def test_device_put_places_every_leaf_of_a_pytree():
    """As jax.device_put: a tree of parameters in one call (it raised "object is not a dtype" for a dict); its
    structure and its leaves that are no arrays (None, strings) stay."""
    params = {"w": np.ones((2, 3), np.float32), "layers": [np.arange(3), None, "relu"], "scale": np.float32(2)}
    placed = hj.device_put(params)
    assert isinstance(placed["w"], hj.Array) and isinstance(placed["layers"][0], hj.Array)
    assert placed["layers"][1:] == [None, "relu"] and isinstance(placed["scale"], hj.Array)
    np.testing.assert_array_equal(np.asarray(hj.jit(lambda w, s: w * s)(placed["w"], placed["scale"])), 2 * params["w"])


# --- donating an Array that is passed again (issue 10) ---

@pytest.mark.parametrize("backend", BACKENDS + ["iree:vmvx"])
def test_donating_an_array_passed_again_is_refused_and_consumes_nothing(backend):
    """JAX raises for `f(donate(a), a)` ("Attempt to use a buffer that was previously donated in the same call"):
    so does every backend, before anything runs, and the Array stays usable. (The reference backend raised
    only after running, having consumed `a`; iree:cpu ran it.)"""
    both = hj.jit(lambda x, y: x + y, backend=backend, donate_argnums=(0, 1))
    first = hj.jit(lambda x, y: x + y, backend=backend, donate_argnums=0)
    tree = hj.jit(lambda d: d["p"] - d["g"], backend=backend, donate_argnames="d")
    many = hj.jit(lambda xs, y: [x + y for x in xs], backend=backend, donate_argnums=0)  # 11 leaves
    a = on_device(backend, np.arange(4, dtype=np.float32))
    ones = np.ones(4, np.float32)  # numpy passed many times: fine (each is copied)
    for call in (lambda: both(a, a), lambda: first(a, a), lambda: tree({"p": a, "g": a}),
                 lambda: many([ones] * 9 + [a], a)):
        with pytest.raises(hj.BackendError, match="donated .* and passed again as flat argument"):
            call()
        assert not a.is_donated
    np.testing.assert_array_equal(np.asarray(many([ones] * 10, ones)[9]), np.full(4, 2.0))
    np.testing.assert_array_equal(np.asarray(first(a, np.ones(4, np.float32))), np.arange(4) * 2.0 + 1)
    assert a.is_donated
    b = on_device(backend, np.ones(4, np.float32))  # passed twice, donated by neither: fine
    np.testing.assert_array_equal(np.asarray(hj.jit(lambda x, y: x * y, backend=backend)(b, b)), np.full(4, 4.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_call_that_fails_consumes_nothing(backend):
    f = hj.jit(step, backend=backend, donate_argnums=0)
    p = on_device(backend, np.arange(4, dtype=np.float32))
    spent = on_device(backend, np.ones(4, np.float32))
    f(spent, np.ones(4, np.float32))
    with pytest.raises(hj.BackendError, match="was donated"):
        f(p, spent)                                      # the second argument is unusable: nothing ran
    assert not p.is_donated
    np.testing.assert_array_equal(np.asarray(f(p, np.ones(4, np.float32))), np.arange(4) * 2.0 - 0.5)


def test_donating_a_viewed_array_still_consumes_it():
    """A donated Array that must be copied (numpy views it) is consumed like any other (it was not: the
    upload rebound it to its numpy view, and the donation missed it)."""
    f = hj.jit(step, donate_argnums=0)
    p = on_device(None, np.arange(4, dtype=np.float32))
    view = np.asarray(p)
    out = f(p, np.ones(4, np.float32))
    assert p.is_donated
    np.testing.assert_array_equal(view, np.arange(4) * 2.0)   # the view still reads p's old values
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) * 2.0 - 0.5)


# --- inputs numpy answers: big-endian, read-only, Fortran order (issue 10) ---

def unusual_inputs() -> dict:
    base = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    read_only = base.copy()
    read_only.flags.writeable = False
    read_only_fortran = np.asfortranarray(base)
    read_only_fortran.flags.writeable = False
    return {"big-endian": base.astype(">f4"), "big-endian 0-d": np.array(-3, ">f4"),
            "big-endian int64": base.astype(">i8"), "big-endian Fortran": np.asfortranarray(base.astype(">f4")),
            "read-only": read_only, "Fortran": np.asfortranarray(base), "read-only Fortran": read_only_fortran,
            "broadcast (read-only, strided)": np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))}


def test_big_endian_read_only_and_fortran_inputs(backend):
    """Each is answered as numpy answers it (`>f4` was refused with a DTypeError, and device_put raised
    KeyError), by a jit call with a pytree, by positional calls (the second one looked up on the fast path),
    and through device_put."""
    inputs = unusual_inputs()
    expected = {name: np.asarray(x) * 2 + 1 for name, x in inputs.items()}
    f = hj.jit(lambda xs: {name: x * 2 + 1 for name, x in xs.items()}, backend=backend)
    placed = {name: hj.device_put(x, backend=backend) for name, x in inputs.items()}
    for results in (f(inputs), f(placed)):
        for name, want in expected.items():
            got = np.asarray(results[name])
            assert got.dtype == want.dtype.newbyteorder("="), name
            np.testing.assert_array_equal(got, want, err_msg=name)
    g = hj.jit(lambda x: x * 2 + 1, backend=backend)
    for name in ("big-endian", "big-endian 0-d", "read-only Fortran"):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(g(inputs[name])), expected[name], err_msg=name)
    assert placed["big-endian"].dtype == np.float32


def test_an_argument_whose_conversion_calls_the_same_function():
    """A call holds its executable's gate from the first upload on (teardown.py); converting an argument that
    calls the same compiled function meanwhile must not deadlock."""
    f = hj.jit(lambda x: x * 2 + 1)

    class Lazy:
        shape, dtype = (), np.dtype(np.float32)

        def __array__(self, dtype=None, copy=None):
            return np.asarray(f(np.float32(1)), dtype=dtype)   # 3.0
    assert float(f(np.float32(0))) == 1.0
    assert float(f(Lazy())) == 7.0


@pytest.mark.parametrize("backend", ["reference", "iree:vmvx"])
def test_arrays_take_format_specs_as_numpy_does(backend):
    """f"{loss:.4f}" of a 0-d result raised TypeError (unsupported format string passed to Array.__format__)."""
    loss = hj.jit(lambda x: x.sum(), backend=backend)(np.full(3, 0.5, np.float32))
    assert f"{loss:.4f}" == "1.5000" and f"{loss:>6}" == "   1.5" and f"{loss}" == str(loss.numpy())
    vector = hj.device_put(np.arange(3, dtype=np.float32), backend=backend)
    assert f"{vector}" == "[0. 1. 2.]"
    with pytest.raises(TypeError):   # as numpy's: a spec needs a 0-d array
        f"{vector:.2f}"


@pytest.mark.parametrize("backend", ["reference", "iree:vmvx"])
def test_arrays_pickle_and_deepcopy_as_their_values(backend):
    """copy.deepcopy of a parameter tree and pickle raised TypeError: cannot pickle 'VmRef' object (JAX's arrays
    pickle). They come back as host Arrays of the same values, which calls take; a donated one still refuses."""
    import copy
    import pickle
    run = hj.jit(lambda x: x * 2, backend=backend)
    a = run(np.array([[1.5, -2.25]], np.float32))
    tree = copy.deepcopy({"w": a, "steps": 3})
    back = pickle.loads(pickle.dumps(a))
    for b in (tree["w"], back):
        assert isinstance(b, hj.Array) and b.shape == (1, 2) and b.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(run(b)), [[6.0, -9.0]])
    assert tree["steps"] == 3 and (a.nbytes, a.itemsize, back.nbytes) == (8, 4, 8)
    donate = hj.jit(lambda p: p - 1, backend=backend, donate_argnums=0)
    p = hj.device_put(np.ones(2, np.float32), backend=backend)
    donate(p)
    with pytest.raises(hj.BackendError, match="donated"):
        pickle.dumps(p)


@pytest.mark.parametrize("backend", ["reference", "iree:vmvx"])
def test_divmod_of_arrays_and_traced_tensors_is_numpys(backend):
    x = np.array([5.5, -7.0, 3.0], np.float32)
    a = hj.device_put(x, backend=backend)
    for got, want in ((divmod(a, 2), divmod(x, np.float32(2))), (divmod(7, a), divmod(np.float32(7), x)),
                      (hj.jit(lambda t: divmod(t, 2.0), backend=backend)(x), divmod(x, np.float32(2)))):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
