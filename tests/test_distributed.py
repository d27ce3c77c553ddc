"""hj.distributed: a world of one process here, and `mpiexec -n 2` (and 4) jobs of the scripts in
tests/distributed/, compared with single-process numpy; faults end the job in bounded time."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit.distributed import world as world_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "distributed")
sys.path.insert(0, SCRIPTS)
from inputs import global_batch, init_params, loss, rank_tree, steps   # noqa: E402

dist = hj.distributed
pytestmark = pytest.mark.xdist_group("distributed")   # one worker starts the MPI jobs: they share the 2 cores
LIMIT = 120          # seconds any one mpiexec job may take before it is killed


# --- a world of one process: no launcher, no MPI ------------------------------------------------------------

def test_one_process_is_a_world_of_one():
    world = dist.initialize()
    assert (world.rank, world.size, world.comm) == (0, 1, None) and dist.initialize() is world
    assert (dist.rank(), dist.size()) == (0, 1)
    with pytest.raises(hj.ConfigError, match="already joined with timeout=600.0"):
        dist.initialize(timeout=5)
    dist.barrier()
    tree = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "n": [np.int32(3), hj.device_put(np.ones(2))]}
    for op in ("sum", "max", "min"):
        reduced = dist.all_reduce(tree, op)
        assert isinstance(reduced["w"], hj.Array) and isinstance(reduced["n"][1], hj.Array)
        np.testing.assert_array_equal(reduced["w"], tree["w"])
        assert int(reduced["n"][0]) == 3
    mean = dist.all_reduce({"w": tree["w"]}, "mean")["w"]
    np.testing.assert_array_equal(mean, tree["w"])
    assert not np.shares_memory(np.asarray(mean), tree["w"])        # never the caller's memory
    np.testing.assert_array_equal(dist.broadcast(tree)["w"], tree["w"])
    assert dist.all_gather(tree)["w"].shape == (1, 2, 3)
    np.testing.assert_array_equal(dist.gather({"x": np.arange(3)})["x"], np.arange(3))


def test_map_sharded_pads_the_last_batch_and_drops_the_padding():
    calls = []

    def fn(batch):
        calls.append(batch.shape)
        return {"double": np.asarray(batch) * 2, "first": np.asarray(batch)[:, 0]}
    data = np.arange(14.0).reshape(7, 2)
    out = dist.map_sharded(fn, data, batch_size=3)
    np.testing.assert_array_equal(out["double"], data * 2)
    np.testing.assert_array_equal(out["first"], data[:, 0])
    assert calls == [(3, 2)] * 3                                    # one shape: one compile


def test_shard_and_data_parallel_in_one_process():
    batch = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(dist.shard({"x": batch})["x"], batch)
    assert dist.shard_bounds(10) == (0, 10)
    grads_of = hj.jit(hj.value_and_grad(loss), backend="reference")       # nothing to compile
    step = dist.data_parallel(grads_of, batch_argnums=(1, 2))
    params, (x, y) = init_params(0), global_batch(0)
    value, grads = step(params, x, y)
    expected_value, expected_grads = grads_of(params, x, y)
    np.testing.assert_array_equal(value, expected_value)
    np.testing.assert_array_equal(grads[0]["w"], expected_grads[0]["w"])
    dist.check_identical(grads)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="op must be one of"):
        dist.all_reduce(np.ones(2), op="prod")
    with pytest.raises(hj.DTypeError, match=r"leaf \['n'\] is int32; the mean of integers"):
        dist.all_reduce({"n": np.ones(2, np.int32)}, op="mean")
    with pytest.raises(hj.DTypeError, match="bools reduce with op='max'"):
        dist.all_reduce(np.ones(2, bool))
    with pytest.raises(TypeError, match=r"leaf \[0\] is a str"):
        dist.broadcast(["x"])
    with pytest.raises(hj.DTypeError, match=r"leaf \['s'\] is <U1; collectives move numbers"):
        dist.broadcast({"s": np.array(["a"])})
    big_endian = np.arange(3, dtype=">f4")
    np.testing.assert_array_equal(dist.all_reduce(big_endian), big_endian)
    with pytest.raises(ValueError, match="root must be a rank, 0 .. 0, not 1"):
        dist.broadcast(np.ones(2), root=1)
    with pytest.raises(hj.ShapeError, match=r"leaf \['x'\] is a scalar"):
        dist.gather({"x": np.float32(1)})
    with pytest.raises(hj.ShapeError, match="same leading length"):
        dist.map_sharded(lambda b: b, {"a": np.ones(3), "b": np.ones(4)})
    with pytest.raises(hj.ShapeError, match="one row per input row"):
        dist.map_sharded(lambda b: np.asarray(b).sum(keepdims=True), np.ones(4), batch_size=2)

    @hj.jit
    def inside(x):
        return dist.all_reduce(x)
    with pytest.raises(hj.TracingError, match="collectives run between compiled calls"):
        inside(np.ones(2, np.float32))


def test_launchers_are_read_from_the_environment(monkeypatch):
    for name in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID",
                 "SLURM_STEP_NUM_TASKS"):
        monkeypatch.delenv(name, raising=False)
    assert world_module.launcher_world() is None
    monkeypatch.setenv("SLURM_PROCID", "3")
    assert world_module.launcher_world() is None                   # sbatch alone: no job step, no world
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", "8")
    assert world_module.launcher_world() == (3, 8)
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "x")
    with pytest.raises(hj.ConfigError, match="not whole numbers"):
        world_module.launcher_world()


def test_compiled_calls_run_where_a_launcher_set_its_variables(tmp_path):
    """Regression: IREE 3.13 gives a device an MPI channel provider when PMI_SIZE (or OMPI_COMM_WORLD_SIZE)
    is set, dlopens libmpi and fails ("MPI runtime library not available"): every compiled call under
    mpiexec raised BackendError."""
    code = ("import os, numpy as np, hlojit as hj; print(float(hj.jit(lambda x: x + 1)(np.float32(1))), "
            "os.environ['PMI_SIZE'])")
    env = _env(PMI_SIZE="1", PMI_RANK="0", OMPI_COMM_WORLD_SIZE="1", MPIEXEC_HOSTNAME="localhost")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=LIMIT,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2.0", "1"]                      # and the variable is back afterwards


# --- jobs under mpiexec --------------------------------------------------------------------------------------

def _env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                HLOJIT_CPU_THREADS="1", **extra)


def _mpiexec() -> str | None:
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.path.exists(beside) else shutil.which("mpiexec")


def _launch(n: int, *args, cwd) -> tuple[subprocess.CompletedProcess, float]:
    """`mpiexec -n n python args...`, killed (its whole process group) after LIMIT seconds."""
    start = time.monotonic()
    process = subprocess.Popen([_mpiexec(), "-n", str(n), sys.executable, *args], env=_env(), cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"mpiexec -n {n} {' '.join(args)} still ran after {LIMIT} s (killed):\n{err[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), time.monotonic() - start


@pytest.fixture(scope="module")
def mpi(tmp_path_factory):
    """Skips (with the reason) where an MPI job of two processes cannot start here."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install -e '.[test]' brings mpi4py and mpich)")
    if _mpiexec() is None:
        pytest.skip("no mpiexec on PATH (pip install mpich)")
    probe, _ = _launch(2, "-c", "from mpi4py import MPI; MPI.COMM_WORLD.Barrier()", cwd=tmp_path_factory.mktemp("p"))
    if probe.returncode != 0:
        pytest.skip(f"mpiexec -n 2 cannot start MPI here: {probe.stderr.strip()[-500:]}")


def _job(n: int, folder, *flags) -> list:
    done, _ = _launch(n, os.path.join(SCRIPTS, "collectives.py"), str(folder), *flags, cwd=folder)
    assert done.returncode == 0, done.stderr[-4000:]
    return [dict(np.load(folder / f"rank{r}.npz")) for r in range(n)]


@pytest.fixture(scope="module")
def two_ranks(mpi, tmp_path_factory):
    folder = tmp_path_factory.mktemp("two")
    return folder, _job(2, folder)


def _expected_reductions(n: int) -> dict:
    trees = [rank_tree(r) for r in range(n)]
    expected = {}
    for key in trees[0]:
        stack = np.stack([np.asarray(t[key]["w"] if key == "f32" else t[key]) for t in trees])
        wide = stack.astype(np.float64)
        expected["sum", key] = stack.sum(0, dtype=stack.dtype) if stack.dtype.kind in "iu" else wide.sum(0)  # wraps
        expected["max", key], expected["min", key], expected["mean", key] = wide.max(0), wide.min(0), wide.mean(0)
    return expected


def _check_collectives(ranks: list):
    n = len(ranks)
    for r in range(1, n):                        # every rank got the same bits, floats included
        for name, value in ranks[0].items():
            if name.startswith(("all_reduce", "broadcast", "all_gather", "bits", "params", "loss")):
                np.testing.assert_array_equal(ranks[r][name], value, err_msg=f"{name} on rank {r}")
    got, expected = ranks[0], _expected_reductions(n)
    for (op, key), value in expected.items():
        name = f"all_reduce_{op}[{key!r}]" + ("['w']" if key == "f32" else "")
        if name not in got:
            continue                             # bools are not summed; ints are not averaged
        tolerance = {"f16": 1e-3, "bf16": 1e-2}.get(key, 1e-6)
        np.testing.assert_allclose(got[name].astype(np.float64), value, rtol=tolerance, err_msg=name)
    assert got["all_reduce_max['flags']"].tolist() == [True, True, False]
    assert got["all_reduce_min['flags']"].tolist() == [n == 1, True, False]
    assert got["all_reduce_sum['i32']"].dtype == np.int32 and got["all_reduce_mean['bf16']"].dtype == np.float32
    np.testing.assert_array_equal(got["broadcast['i32']"], rank_tree(n - 1)["i32"])
    np.testing.assert_array_equal(got["all_gather['f64']"], np.stack([rank_tree(r)["f64"] for r in range(n)]))
    np.testing.assert_array_equal(got["all_gather['f32']['b']"], np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(got["gather['rows']"], np.concatenate([np.arange(r + 1) + 10 * r for r in range(n)]))
    np.testing.assert_array_equal(got["map_sharded['sq']"], np.arange(11.0) ** 2)
    np.testing.assert_array_equal(got["one_row"], [1.0])


def test_collectives_on_two_ranks_match_numpy_and_agree_bitwise(two_ranks):
    _check_collectives(two_ranks[1])


def test_data_parallel_training_on_two_ranks_matches_one_process(two_ranks):
    folder, ranks = two_ranks
    params, opt = init_params(0), hj.optim.adam(1e-2)       # the same steps in one process, on numpy
    state = opt.init(params)
    step, update = hj.jit(hj.value_and_grad(loss), backend="reference"), hj.jit(opt.update, backend="reference")
    for i in range(steps()):
        x, y = global_batch(i)
        value, grads = step(params, x, y)
        params, state = update(params, grads, state)
        np.testing.assert_allclose(ranks[0][f"loss_{i}"], value, rtol=1e-5)
    for layer in range(2):
        for name in ("w", "b"):
            key = f"[{layer}][{name!r}]"
            np.testing.assert_allclose(ranks[0]["params" + key], params[layer][name], rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(ranks[1]["restored['params']" + key], ranks[0]["params" + key])
    saved = hj.load_checkpoint(folder / "ckpt.npz", like={"params": params})
    np.testing.assert_array_equal(saved["params"][0]["w"], ranks[0]["params[0]['w']"])


def test_collectives_on_four_ranks(mpi, tmp_path):
    _check_collectives(_job(4, tmp_path, "--quick"))


FAULTS = ("raise", "exit", "kill", "hang", "sys.exit", "mismatch")


def _fault(mode: str, folder) -> tuple[subprocess.CompletedProcess, float]:
    return _launch(2, os.path.join(SCRIPTS, "faults.py"), mode, str(folder), cwd=folder)


@pytest.mark.parametrize("mode, message", [
    ("raise", r"ValueError: rank 1 failed on purpose(.|\n)*rank 1 of 2: uncaught ValueError: ending all 2 ranks"),
    ("exit", None),                                              # mpiexec returns its code, 3, and says nothing
    ("kill", r"BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES(.|\n)*Killed \(signal 9\)"),
    ("hang", r"rank 0 of 2: all_reduce waited more than 3 s for the other ranks"),
    ("sys.exit", r"rank 0 of 2: all_reduce waited more than 3 s"),   # rank 1's MPI_Finalize waits for rank 0
    ("mismatch", r"SignatureError: hj.distributed.all_reduce: the ranks pass different trees to the same "
                 r"collective: rank 0 passes all_reduce\(sum\) of 1 leaves \{\['w'\]: float32\[4\]\} "
                 r"\(at faults.py:\d+\); "
                 r"rank 1 passes all_reduce\(sum\) of 1 leaves \{\['w'\]: float32\[5\]\}"),
], ids=FAULTS)
def test_a_failing_rank_ends_the_job_and_leaves_the_checkpoint(mpi, tmp_path, mode, message):
    done, seconds = _fault(mode, tmp_path)
    assert done.returncode != 0, done.stdout
    assert "past the collective" not in done.stdout
    assert done.returncode == 3 if mode == "exit" else re.search(message, done.stderr + done.stdout), \
        done.stderr[-3000:]
    assert seconds < LIMIT
    restored = hj.load_checkpoint(tmp_path / "ckpt.npz", like={"w": np.zeros(4, np.float32)})
    np.testing.assert_array_equal(restored["w"], np.ones(4, np.float32))      # rank 0's, whole


def test_bfloat16_travels_as_bits():
    tree = {"h": np.array([1.5, -2.0], ml_dtypes.bfloat16)}
    assert dist.broadcast(tree)["h"].dtype == ml_dtypes.bfloat16
    assert dist.all_reduce(tree, "max")["h"].dtype == ml_dtypes.bfloat16
