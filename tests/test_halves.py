"""Big programs compile as two halves at once (pipeline/halves.py): where the cut goes and what crosses it, and
the same results, donations and aliases as the program compiled whole, on iree:cpu and iree:vmvx."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.backends.iree import Chain, Executable, work_estimate
from hlojit.errors import CompileError
from hlojit.pipeline import halves

IREE = ["iree:cpu", "iree:vmvx"]


@pytest.fixture
def every_program_halves(monkeypatch, tmp_path):
    monkeypatch.setattr(halves, "MIN_OPS", 0)
    monkeypatch.setattr(halves, "MIN_WORK", 0)
    monkeypatch.setattr(halves, "MAX_CROSSING_BYTES_PER_WORK", float("inf"))
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "1")
    monkeypatch.setenv("HLOJIT_COMPILE_HALVES", "1")
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path))


def step(params, velocity, x, y):
    """An SGD-momentum step: the cut lands in the forward pass, and the momentum (read only at the end) is no
    argument of the first half."""
    def loss(p):
        h = ops.tanh(x @ p["w"] + p["b"])
        h = ops.sin(h) * 0.5 + ops.cos(h) * ops.exp(-h)
        return ops.mean((h.sum(axis=1) - y) ** 2)
    value, grads = hj.value_and_grad(loss)(params)
    velocity = hj.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = hj.tree.map(lambda p, v: p - 0.1 * v, params, velocity)
    return params, velocity, value, x     # x returned as it is


def arguments(seed=0):
    rng = np.random.default_rng(seed)
    params = {"w": rng.standard_normal((5, 4)).astype(np.float32), "b": rng.standard_normal(4).astype(np.float32)}
    velocity = {"w": np.zeros((5, 4), np.float32), "b": np.full(4, 0.25, np.float32)}
    return params, velocity, rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal(6).astype(np.float32)


def test_the_cut(every_program_halves):
    program = hj.jit(step, donate_argnums=(0, 1)).lower(*arguments()).program
    split = halves.halves(program, work_estimate(program))
    first, second = split.first, split.second
    # the first half reads the parameters and the batch, not the momentum (arguments 2 and 3 of the flat six)
    assert split.first_arguments == [0, 1, 4, 5]
    assert first.inputs == [program.inputs[i] for i in split.first_arguments]
    assert second.inputs == program.inputs + first.outputs and second.outputs == program.outputs
    assert second.donated == program.donated and second.aliases == program.aliases
    first_text, second_text = str(first.module), str(second.module)
    assert "tf.aliasing_output" not in first_text and ("tf.aliasing_output" in second_text) == bool(program.aliases)
    assert first_text.count("stablehlo.") + second_text.count("stablehlo.") >= str(program.module).count("stablehlo.")


def test_too_few_ops_compile_whole():
    program = hj.jit(lambda x: x + 1).lower(np.ones(3, np.float32)).program
    assert halves.halves(program, work_estimate(program)) is None


def test_programs_with_control_flow_compile_whole(every_program_halves):
    """The first half of a divide-and-conquer eigh, ending in a while loop's results, failed when called on iree:cpu
    ("ref is null; while invoking native function hal.buffer_view.create")."""
    def f(a):
        h = ops.fori_loop(0, 3, lambda i, v: v * 0.5 + ops.sin(a), a)
        return ops.exp(h) + ops.cos(a)
    a = np.linspace(0, 1, 4, dtype=np.float32)
    program = hj.jit(f).lower(a).program
    assert halves.halves(program, work_estimate(program)) is None
    program = hj.jit(lambda a: ops.exp(ops.sin(a)) + ops.cos(a)).lower(a).program
    assert halves.halves(program, work_estimate(program)) is not None
    run = hj.jit(f, backend="iree:vmvx")
    assert isinstance(run.compile(a), Executable)
    np.testing.assert_allclose(np.asarray(run(a)), np.asarray(hj.jit(f, backend="reference")(a)), rtol=1e-6)


def test_programs_of_little_work_or_much_crossing_compile_whole(every_program_halves, monkeypatch):
    """The halves run slower than the whole by a few per cent (more where many bytes cross the cut): only programs
    whose calls take long (halves.MIN_WORK) and whose cut few bytes cross pay that for a faster first call; where
    many cross, the halves are interim (tiered compilation's quick build, off by default): the program compiles
    whole."""
    program = hj.jit(step).lower(*arguments()).program
    work = work_estimate(program)
    crossing = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in
                   halves.halves(program, work).first.outputs)
    monkeypatch.setattr(halves, "MAX_CROSSING_BYTES_PER_WORK", crossing / work)
    assert not halves.halves(program, work).interim      # the bound itself is allowed
    monkeypatch.setattr(halves, "MAX_CROSSING_BYTES_PER_WORK", 0.99 * crossing / work)
    assert halves.halves(program, work).interim          # halves only as tiered compilation's quick build
    assert isinstance(hj.jit(step, backend="iree:vmvx").compile(*arguments()), Executable)
    monkeypatch.setattr(halves, "MAX_CROSSING_BYTES_PER_WORK", float("inf"))
    monkeypatch.setattr(halves, "MIN_WORK", work + 1)
    assert isinstance(hj.jit(step, backend="iree:vmvx").compile(*arguments()), Executable)


def test_interim_halves_run_first_under_tiering_and_the_whole_program_replaces_them(every_program_halves,
                                                                                    monkeypatch):
    """With HLOJIT_TIERED=1 a program whose cut many bytes cross (a training step) starts on its halves while the
    whole program compiles in the background, then runs the whole: the same values and donations throughout; the
    next Exec (as a new process) loads the whole program from the persistent cache at once."""
    from hlojit.pipeline import tiered
    monkeypatch.setenv("HLOJIT_TIERED", "1")
    monkeypatch.setattr(tiered, "MIN_OPS", 0)
    monkeypatch.setattr(halves, "MAX_CROSSING_BYTES_PER_WORK", 0.0)
    expected = hj.jit(step, backend="reference")(*arguments())
    run = hj.jit(step, backend="iree:cpu", donate_argnums=(0, 1))
    first = run(*arguments())
    halves_first = run.compile(*arguments())
    assert isinstance(halves_first, Chain) and halves_first.tier == "quick" and halves_first.pending is not None
    assert run.wait_for_optimised(300)
    whole = run.compile(*arguments())
    assert isinstance(whole, Executable) and whole.tier == "optimised"
    params, velocity, x, y = arguments()
    donated = hj.device_put(params)
    then = run(donated, velocity, x, y)
    with pytest.raises(hj.BackendError, match="donated"):
        np.asarray(donated["w"])
    for got in (first, then):
        for g, w in zip(hj.tree.leaves(got), hj.tree.leaves(expected)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    again = hj.jit(step, backend="iree:cpu").compile(*arguments())
    assert isinstance(again, Executable) and again.compiled.cache_hit


@pytest.mark.parametrize("backend", IREE)
def test_halves_compute_what_the_whole_does_and_donate_the_same(every_program_halves, backend):
    expected = hj.jit(step, backend="reference")(*arguments())
    run = hj.jit(step, backend=backend, donate_argnums=(0, 1))
    params, velocity, x, y = arguments()
    params, velocity = hj.device_put(params, backend=backend), hj.device_put(velocity, backend=backend)
    donated = params["w"]
    got = run(params, velocity, x, y)
    assert isinstance(run.compile(*arguments()), Chain)
    for g, e in zip(hj.tree.leaves(got), hj.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-6)
    with pytest.raises(hj.BackendError, match="donated"):
        np.asarray(donated)
    again = run(*got[:2], x, y)   # its own results fed back, as a training loop does
    np.testing.assert_allclose(np.asarray(again[2]), np.asarray(hj.jit(step, backend="reference")(
        *[hj.tree.map(np.asarray, t) for t in expected[:2]], x, y)[2]), rtol=2e-5)


def test_a_single_result_goes_through_the_halves_single_call(every_program_halves):
    f = hj.jit(lambda a, b: ops.sum(ops.exp(a @ b) * 2 - a.sum()), backend="iree:vmvx")
    a, b = np.full((3, 3), 0.1, np.float32), np.eye(3, dtype=np.float32)
    assert isinstance(f.compile(a, b), Chain)
    np.testing.assert_allclose(float(f(a, b)), np.sum(np.exp(a @ b) * 2 - a.sum()), rtol=1e-6)


def test_halves_that_do_not_compile_give_way_to_the_whole(every_program_halves, monkeypatch):
    def failing(split, targets):
        raise CompileError("a half failed")
    monkeypatch.setattr(halves, "compile_at_once", failing)
    f = hj.jit(lambda a: ops.cos(a) * 3 + ops.sin(a), backend="iree:vmvx")
    a = np.linspace(0, 1, 5, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(f(a)), np.cos(a) * 3 + np.sin(a), rtol=1e-6)
    assert isinstance(f.compile(a), Executable)


@pytest.mark.parametrize("backend", IREE)
def test_a_donated_argument_read_before_the_cut_and_written_after_it(every_program_halves, backend):
    """The second half writes its result into the donated argument's buffer (an alias), which the first half read
    (and whose product by one crosses the cut): the first half has run by then, and the values are the reference's."""
    def step(w, g):
        v = w * 1.0
        u = ops.exp(g) * 0.5 + ops.sin(g) * 0.25 + ops.cos(g)
        u = ops.tanh(ops.tanh(u * 0.5 + 1.0) + u) + u
        return v - 0.1 * u, u.sum()
    x, g = np.arange(6, dtype=np.float32), np.linspace(0, 1, 6, dtype=np.float32)
    run = hj.jit(step, backend=backend, donate_argnums=0)
    assert run.lower(x, g).program.aliases == {0: 0} and isinstance(run.compile(x, g), Chain)
    got, want = run(hj.device_put(x, backend=backend), g), hj.jit(step, backend="reference")(x, g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
