"""Choosing the cpu flag set by measuring (pipeline/tuning.py): per machine, per program on opt-in, and the
records on disk. Tiny microbenchmarks and a temp cache folder; no timing is asserted, only what was chosen,
stored and shown, and that every candidate computes the same numbers."""
import json
import logging
import os
import re
import stat

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.backends.iree import IreeBackend, call_timer
from hlojit.errors import ConfigError
from hlojit.pipeline import cache, compile_program, cpu, tuning, winograd
from hlojit.pipeline.targets import CPU_FLAG_SETS

TINY = {"matmul 8x16x8": (((8, 16), (16, 8)), "stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]", (8, 8)),
        "conv3x3 4ch 6x6": (((1, 6, 6, 4), (3, 3, 4, 4)), tuning._CONV, (1, 6, 6, 4))}


_COMPILED: dict = {}   # (module text, target) -> Compiled, for compiled_once


def compiled_once(program, target):
    """tuning's compile_program, remembered in this process: the tests measure TINY's microbenchmarks with the
    same flag sets again and again (measured, read back, damaged and measured again ...). What they check is
    the measuring and the records; compiling the same module with the same flags each time (~0.5 s, 16 times)
    would check nothing more. Every vmfb used is still one IREE compiled from that module with those flags."""
    key = (str(program.module), target)
    if key not in _COMPILED:
        _COMPILED[key] = compile_program(program, target)
    return _COMPILED[key]


# the tests measuring TINY share compiled_once's compiles: under xdist they run on one worker
shares_tiny = pytest.mark.xdist_group("test_tuning:tiny-microbenchmarks")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache folder, no pinned flag set, nothing remembered in this process (but compiled_once's
    compiles of the microbenchmarks)."""
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HLOJIT_CPU_FLAGS", raising=False)
    monkeypatch.delenv("HLOJIT_CACHE", raising=False)
    monkeypatch.setattr(tuning, "_in_process", {})
    monkeypatch.setattr(tuning, "_programs_in_process", {})
    monkeypatch.setattr(tuning, "compile_program", compiled_once)
    return tmp_path / "cache"


def no_timer(*args):
    raise AssertionError("measured again, though the choice was remembered")


def records(folder):
    return sorted(folder.glob(tuning.RECORD_PREFIX + "*.json"))


@shares_tiny
def test_the_machine_choice_is_measured_once_and_remembered_on_disk(fresh, monkeypatch):
    chosen = tuning.machine_target(call_timer, benchmarks=TINY)
    assert chosen.flag_set in CPU_FLAG_SETS and chosen == cpu(flag_set=chosen.flag_set)
    assert chosen.note.startswith(f"machine choice: {chosen.flag_set} (fastest; ")
    [path] = records(fresh)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(fresh.stat().st_mode) == 0o700
    record = json.loads(path.read_text())
    assert record["chosen"] == chosen.flag_set and set(record["seconds"]) | set(record["failed"]) == set(CPU_FLAG_SETS)
    assert record["relative"][chosen.flag_set] == 1.0 and min(record["relative"].values()) == 1.0
    monkeypatch.setattr(tuning, "_in_process", {})          # a new process: the record answers
    assert tuning.machine_target(no_timer, benchmarks=TINY) == chosen
    monkeypatch.setattr(cache, "host_cpu_features", lambda: "another CPU")   # another machine measures anew
    assert tuning.machine_key("host", tuple(CPU_FLAG_SETS), TINY) != record["key"]


@shares_tiny
@pytest.mark.parametrize("damage", [b"{not json", b"[]", b'{"chosen": "inner-tiled"}', b"\xff\xfe"])
def test_a_damaged_record_is_ignored_and_measured_again(fresh, monkeypatch, damage):
    candidates = ("data-tiling", "inner-tiled")
    first = tuning.machine_target(call_timer, candidates=candidates, benchmarks=TINY)
    [path] = records(fresh)
    path.write_bytes(damage)
    monkeypatch.setattr(tuning, "_in_process", {})
    again = tuning.machine_target(call_timer, candidates=candidates, benchmarks=TINY)
    assert again.flag_set in candidates and first.flag_set in candidates
    assert json.loads(path.read_text())["chosen"] == again.flag_set     # rewritten whole


@shares_tiny
def test_cache_off_keeps_the_choice_in_this_process_only(fresh, monkeypatch):
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    chosen = tuning.machine_target(call_timer, candidates=("data-tiling", "inner-tiled"), benchmarks=TINY)
    assert not fresh.exists() or not records(fresh)
    assert tuning.machine_target(no_timer, candidates=("data-tiling", "inner-tiled"), benchmarks=TINY) == chosen


def test_a_pinned_flag_set_measures_nothing(fresh, monkeypatch):
    monkeypatch.setenv("HLOJIT_CPU_FLAGS", "inner-tiled")
    pinned = tuning.machine_target(no_timer, benchmarks=TINY)
    assert pinned == cpu(flag_set="inner-tiled") and pinned.note == "pinned by HLOJIT_CPU_FLAGS"
    monkeypatch.setenv("HLOJIT_CPU_FLAGS", "fastest-please")
    with pytest.raises(ConfigError, match="HLOJIT_CPU_FLAGS='fastest-please' is no cpu flag set; known: data-tiling"):
        tuning.machine_target(no_timer, benchmarks=TINY)
    with pytest.raises(ValueError, match="unknown cpu flag set 'turbo'"):
        cpu(flag_set="turbo")


def block(x, w, m):
    """A 3x3 channels-last convolution (Winograd reaches it), a matmul, elementwise work after each."""
    y = ops.relu(ops.conv(x, w, padding=1, layout="NHWC") + 0.5)
    return y, ops.tanh(ops.matmul(y.reshape((-1, 16)), m))


def numpy_block(x, w, m):
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))).astype(np.float64)
    out = sum(np.einsum("nhwc,co->nhwo", padded[:, i:i + 8, j:j + 8], w[i, j]) for i in range(3) for j in range(3))
    y = np.maximum(out + 0.5, 0)
    return y, np.tanh(y.reshape(-1, 16) @ m)


def test_every_candidate_computes_the_same_numbers():
    """The choice changes speed only: each flag set (Winograd's transforms round differently) within f32's
    tolerance of float64 numpy."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 8, 8, 16), np.float32), rng.standard_normal((3, 3, 16, 16), np.float32) * 0.2
    m = rng.standard_normal((16, 24), np.float32) * 0.2
    expected = numpy_block(x, w, m)
    for name in CPU_FLAG_SETS:
        run = hj.jit(block)
        run.backend = IreeBackend("iree:cpu", cpu(flag_set=name))
        got = run(x, w, m)
        assert run.compile(x, w, m).compiled.target.flag_set == name
        for value, want in zip(got, expected):
            np.testing.assert_allclose(np.asarray(value), want, rtol=1e-4, atol=1e-4 * np.abs(want).max(),
                                       err_msg=name)


def test_autotune_compiles_every_candidate_keeps_the_fastest_and_remembers(fresh, monkeypatch, caplog):
    monkeypatch.setenv("HLOJIT_LOG", "compiles")
    monkeypatch.setattr(hj.backends.get("iree:cpu"), "_target", cpu(), raising=True)
    monkeypatch.setattr(hj.backends.get("iree:cpu"), "_tune_machine", False)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = np.ones((4, 5), np.float32)
    with caplog.at_level(logging.INFO, logger="hlojit"):
        tuned = hj.jit(lambda x, m: ops.matmul(x, m) * 2, autotune=True)
        np.testing.assert_allclose(np.asarray(tuned(x, m)), x @ m * 2)
    target = tuned.compile(x, m).compiled.target
    assert target.flag_set in CPU_FLAG_SETS and target.note.startswith(f"autotuned: {target.flag_set} (fastest; ")
    messages = [r.getMessage() for r in caplog.records]
    assert sum(m.startswith("compile <lambda>(f32[3,4], f32[4,5]) for cpu[") for m in messages) == len(CPU_FLAG_SETS)
    assert any(m.startswith(f"autotuned <lambda> (not measured before): {target.flag_set}") for m in messages)
    assert cache.info().entries == len(CPU_FLAG_SETS) and len(records(fresh)) == 1
    [record] = [json.loads(path.read_text()) for path in records(fresh)]
    # no 3x3 convolution, a small product: Winograd's flags and the matmul kernels' rewrite make the same code as
    # plain data tiling's, which is not timed again
    assert record["failed"] == {"data-tiling+winograd": "the same code as data-tiling",
                                "data-tiling+matmul-kernels": "the same code as data-tiling"}
    assert set(record["seconds"]) == {"data-tiling", "inner-tiled"}
    monkeypatch.setattr(tuning, "race", no_timer)           # another Exec (or process): the record answers
    again = hj.jit(lambda x, m: ops.matmul(x, m) * 2, autotune=True)
    np.testing.assert_allclose(np.asarray(again(x, m)), x @ m * 2)
    assert again.compile(x, m).compiled.cache_hit and again.compile(x, m).compiled.target == target
    monkeypatch.setenv("HLOJIT_AUTOTUNE", "1")
    assert hj.jit(lambda x: x).autotune and not hj.jit(lambda x: x, autotune=False).autotune


def test_explain_names_the_flag_set_and_how_it_was_chosen(monkeypatch):
    chosen = tuning._noted(cpu(flag_set="inner-tiled"), "pinned by HLOJIT_CPU_FLAGS")
    summary = str(hj.jit(lambda x: x * 2).explain(np.ones(4, np.float32), target=chosen))
    assert summary.splitlines()[0] == "<lambda> on cpu[inner-tiled] (pinned by HLOJIT_CPU_FLAGS)"
    assert os.environ["HLOJIT_CPU_FLAGS"] == "data-tiling"    # the suite's pin (conftest): no measuring elsewhere


def test_only_compiling_or_explaining_measures_the_machine(monkeypatch):
    """hj.jit(driver=...) and device_put need the driver only, the same for every flag set: no measuring."""
    def measured(*args, **kwargs):
        raise AssertionError("measured the machine for a driver check or an upload")
    monkeypatch.setattr(tuning, "machine_target", measured)
    backend = IreeBackend("iree:cpu", cpu(), tune_machine=True)
    assert hj.backends.check_driver(backend, "local-sync") == "local-sync"
    np.testing.assert_array_equal(np.asarray(backend.put(np.arange(3.0, dtype=np.float32))), [0, 1, 2])
    with pytest.raises(AssertionError, match="measured the machine"):
        backend.target


def test_a_program_without_products_convolutions_or_ffts_measures_nothing(fresh, monkeypatch):
    """It compiles alike under every flag set: the default set, with no measuring (a fresh install's first
    x.sin() + 1 waited 16 s for it); a product anywhere in the module (a composite's decomposition too) measures."""
    measured = []
    monkeypatch.setattr(tuning, "machine_target", lambda *args, **kwargs: measured.append(1) or cpu(
        flag_set="inner-tiled"))
    backend = IreeBackend("iree:cpu", cpu(), tune_machine=True)
    monkeypatch.setattr(hj.backends, "_CACHE", {**hj.backends._CACHE, "iree:cpu": backend})
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    elementwise = hj.jit(lambda x: ops.sin(x) * 2.0 + ops.cumsum(x), backend="iree:cpu")
    np.testing.assert_allclose(np.asarray(elementwise(x)), np.sin(x) * 2 + np.cumsum(x), rtol=1e-6)
    assert not measured and elementwise.compile(x).compiled.target.flag_set == "data-tiling"
    assert elementwise.explain(x).target.flag_set == "data-tiling" and not measured
    assert hj.backends.target_named("cpu", elementwise.lower(x).program).flag_set == "data-tiling"
    manifest = hj.export(elementwise, x, path=str(fresh.parent / "elementwise"))   # what its calls compile
    assert "--iree-llvmcpu-enable-inner-tiled" not in manifest.target["flags"] and not measured
    for f, args in ((lambda x: x @ x.T, [x.reshape(2, 3)]), (ops.linalg.inv, [np.eye(3, dtype=np.float32) * 2]),
                    (lambda x: ops.fft.fft(x).real, [x])):
        program = hj.jit(f).lower(*args).program
        assert tuning.flag_set_matters(program)
        assert backend.target_for(program).flag_set == "inner-tiled"
    assert measured == [1]
    monkeypatch.setenv("HLOJIT_CPU_FLAGS", "inner-tiled")    # pinned: every program takes the pinned set
    assert backend.target_for(elementwise.lower(x).program).flag_set == "inner-tiled"



def three_shapes(x, w, v, u):
    """3x3 convolutions of three shapes (the second twice): Winograd's choice is per shape."""
    y = ops.relu(ops.conv(x, w, padding=1, layout="NHWC"))
    y = ops.conv(ops.conv(y, v, padding=1, layout="NHWC") * 0.5, v, padding=1, layout="NHWC")
    return ops.conv(y, u, padding=1, layout="NHWC") + 1


def two_shapes(x, w, v):
    """The first two of three_shapes' shapes, in another program."""
    return ops.conv(ops.tanh(ops.conv(x, w, padding=1, layout="NHWC")), v, padding=1, layout="NHWC")


def numpy_conv(a, k):
    padded = np.pad(a.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, wd = a.shape[1:3]
    return sum(np.einsum("nhwc,co->nhwo", padded[:, i:i + h, j:j + wd], k[i, j]) for i in range(3) for j in range(3))


# a timer's seconds per benchmark function, conv<shape>_m<tile>: F(2,3) wins on the first shape, F(4,3) on the
# second, the plain convolution on the third
SHAPE_SECONDS = {"conv0_m0": 2.0, "conv0_m2": 1.0, "conv0_m4": 3.0, "conv1_m0": 2.0, "conv1_m2": 1.5,
                 "conv1_m4": 1.0, "conv2_m0": 1.0, "conv2_m2": 1.2, "conv2_m4": 4.0}


class FakeTimer:
    """Times nothing: each benchmark's seconds from SHAPE_SECONDS, a whole program's from `programs` in the order
    they are timed (1 s when it runs out); counts the calls."""
    def __init__(self):
        self.timed, self.programs = [], []

    def __call__(self, compiled, function, arguments, outputs):
        self.timed.append(function)
        seconds = SHAPE_SECONDS[function] if function in SHAPE_SECONDS else (self.programs or [1.0]).pop(0)
        return lambda: seconds


@pytest.fixture
def winograd_tuning(fresh, monkeypatch):
    """Autotuning on iree:cpu with one flag set (fewer compiles) and a FakeTimer, Winograd unforced."""
    monkeypatch.setattr(tuning, "_shapes_in_process", {})
    monkeypatch.delenv("HLOJIT_WINOGRAD", raising=False)
    monkeypatch.setenv("HLOJIT_LOG", "compiles")
    monkeypatch.setattr(hj.backends.get("iree:cpu"), "_target", cpu(), raising=True)
    monkeypatch.setattr(hj.backends.get("iree:cpu"), "_tune_machine", False)
    original = tuning.choose
    monkeypatch.setattr(tuning, "choose", lambda *a, **k: original(*a, candidates=("data-tiling",), **k))
    timer = FakeTimer()
    monkeypatch.setattr(hj.backends.iree, "call_timer", timer)
    return timer


def test_winograd_is_chosen_per_shape_by_the_timer_remembered_and_computes_the_same(winograd_tuning, fresh,
                                                                                    monkeypatch, caplog):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 8, 8, 3), np.float32)
    w, v, u = (rng.standard_normal(shape, np.float32) * 0.3 for shape in ((3, 3, 3, 4), (3, 3, 4, 4), (3, 3, 4, 2)))
    winograd_tuning.programs = [1.0, 2.0]   # the marked program, then the unmarked: Winograd wins in the program
    with caplog.at_level(logging.INFO, logger="hlojit"):
        tuned = hj.jit(three_shapes, autotune=True)
        got = np.asarray(tuned(x, w, v, u))
    want = numpy_conv(numpy_conv(numpy_conv(np.maximum(numpy_conv(x, w), 0), v) * 0.5, v), u) + 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    chosen = "3->4ch 8x8 b1 F(2,3) 0.50x, 4->4ch 8x8 b1 F(4,3) 0.50x, 4->2ch 8x8 b1 none (F(2,3) 1.20x)"
    note = tuned.compile(x, w, v, u).compiled.target.note
    assert note.startswith("autotuned: data-tiling (fastest; data-tiling without Winograd 2.00x its time), ")
    assert "; Winograd per convolution (tuned now in " in note and note.endswith(f" s): {chosen}")
    benchmarks = [f"conv{k}_m{m}" for k in range(3) for m in (0, 2, 4)]
    assert sorted(winograd_tuning.timed) == sorted(benchmarks + ["main"] * 2)
    logged = [r.getMessage() for r in caplog.records]
    assert f"tuned Winograd for three_shapes: 3 convolution shape(s) (not measured before): {chosen}; stored" in logged
    assert sorted(json.loads(p.read_text())["chosen"] for p in records(fresh)) == [
        "F(2,3)", "F(4,3)", "data-tiling", "none"]       # a record per shape, one for the program's choice
    assert sorted(r[:3] for r in hj.cache.info().tuning) == [
        ("program", "three_shapes(f32[1,8,8,3], f32[3,3,3,4], f32[3,3,4,4], f32[3,3,4,2])", "data-tiling"),
        ("winograd", "3->4ch 8x8 b1", "F(2,3)"), ("winograd", "4->2ch 8x8 b1", "none"),
        ("winograd", "4->4ch 8x8 b1", "F(4,3)")]

    monkeypatch.setattr(tuning, "_shapes_in_process", {})   # a new process explains: the records on disk answer
    monkeypatch.setattr(tuning, "_programs_in_process", {})
    explained = tuned.explain(x, w, v, u)
    assert len(winograd_tuning.timed) == len(benchmarks) + 2       # nothing measured again
    header, flag_set, layers = str(explained).splitlines()[:3]
    assert header == "three_shapes on cpu[data-tiling]" and explained.target.flag_set == "data-tiling"
    assert re.fullmatch(r"  tuning: flag set: data-tiling \(fastest; data-tiling without Winograd 2\.00x its time\), "
                        r"measured \S+ \S+ UTC in \d+\.\d s \(read from a record\)", flag_set), flag_set
    assert re.fullmatch(rf"  tuning: Winograd per convolution \(read from records, measured in \d+\.\d s\): "
                        rf"{re.escape(chosen)}", layers), layers
    stablehlo = explained.stage("stablehlo")    # what the calls compile: each convolution marked with its choice
    assert [stablehlo.count(f"{winograd.CHOICE_ATTRIBUTE} = {m} ") for m in (0, 2, 4)] == [1, 1, 2]

    monkeypatch.setattr(tuning, "_shapes_in_process", {})   # another process, another program: the records answer
    winograd_tuning.timed.clear()
    winograd_tuning.programs = [2.0, 1.0]   # ... and in this program the unmarked one runs faster: it is kept
    again = hj.jit(two_shapes, autotune=True)
    got = np.asarray(again(x, w, v))
    want = numpy_conv(np.tanh(numpy_conv(x, w)), v)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert winograd_tuning.timed == ["main", "main"]
    note = again.compile(x, w, v).compiled.target.note
    assert note.startswith("autotuned: data-tiling without Winograd (fastest; data-tiling 2.00x its time), ")
    assert re.search(r"; Winograd per convolution \(read from records, measured in \d+\.\d s\): 3->4ch 8x8 b1 "
                     r"F\(2,3\) 0\.50x, 4->4ch 8x8 b1 F\(4,3\) 0\.50x$", note)


@pytest.mark.parametrize("forced", ["0", "2", "4"])
def test_a_forced_winograd_measures_no_convolution(winograd_tuning, monkeypatch, forced):
    monkeypatch.setenv("HLOJIT_WINOGRAD", forced)
    args = [np.zeros(shape, np.float32) for shape in ((1, 8, 8, 3), (3, 3, 3, 4), (3, 3, 4, 4))]
    program = hj.jit(two_shapes).lower(*args).program
    assert tuning.winograd_plan(program, cpu(), no_timer) == (program, "")


def measuring(calls, seconds):
    """A measure_winograd that compiles and times nothing: each shape gets `seconds` per choice; calls logged."""
    def measure(timer, base, shapes, rounds=tuning.ROUNDS):
        calls.append(list(shapes))
        return {shape: {**tuning._record({name: [t] for name, t in seconds.items()}, {}, [winograd.describe(shape)],
                                         0.0, "winograd", winograd.describe(shape)), "cost_seconds": 0.5}
                for shape in shapes}
    return measure


def two_shapes_program():
    args = [np.zeros(shape, np.float32) for shape in ((1, 8, 8, 3), (3, 3, 3, 4), (3, 3, 4, 4))]
    return hj.jit(two_shapes).lower(*args).program


def test_cache_off_keeps_the_shape_choices_in_this_process_and_marks_a_copy(winograd_tuning, fresh, monkeypatch):
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    calls = []
    monkeypatch.setattr(tuning, "measure_winograd", measuring(calls, {"none": 2.0, "F(2,3)": 1.0, "F(4,3)": 3.0}))
    program = two_shapes_program()
    marked, note = tuning.winograd_plan(program, cpu(), no_timer)
    assert note == ("Winograd per convolution (tuned now in 1.0 s): 3->4ch 8x8 b1 F(2,3) 0.50x, "
                    "4->4ch 8x8 b1 F(2,3) 0.50x")
    assert str(marked.module).count(f"{winograd.CHOICE_ATTRIBUTE} = 2") == 2
    assert winograd.CHOICE_ATTRIBUTE not in str(program.module) and not records(fresh)
    again, note = tuning.winograd_plan(program, cpu(), no_timer)
    assert len(calls) == 1 and note.startswith("Winograd per convolution (read from records, measured in 1.0 s): ")
    assert str(again.module) == str(marked.module)


def test_where_no_shape_chose_winograd_the_program_is_left_as_it_is(winograd_tuning, monkeypatch):
    monkeypatch.setattr(tuning, "measure_winograd", measuring([], {"none": 1.0, "F(2,3)": 1.5, "F(4,3)": 3.0}))
    program = two_shapes_program()
    same, note = tuning.winograd_plan(program, cpu(), no_timer)
    assert same is program and note.endswith("3->4ch 8x8 b1 none (F(2,3) 1.50x), 4->4ch 8x8 b1 none (F(2,3) 1.50x)")


def test_a_shape_record_with_an_unknown_choice_is_measured_again(winograd_tuning, fresh, monkeypatch):
    calls = []
    monkeypatch.setattr(tuning, "measure_winograd", measuring(calls, {"none": 2.0, "F(2,3)": 3.0, "F(4,3)": 1.0}))
    program = two_shapes_program()
    tuning.winograd_plan(program, cpu(), no_timer)
    first, second = calls[0]
    path = fresh / f"{tuning.RECORD_PREFIX}{tuning.winograd_key(second, cpu())}.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "chosen": "F(6,3)", "relative": {**record["relative"], "F(6,3)": 1.0}}))
    monkeypatch.setattr(tuning, "_shapes_in_process", {})
    _, note = tuning.winograd_plan(program, cpu(), no_timer)
    assert calls[1:] == [[second]] and "(tuned now in 0.5 s; 1 read from records, measured in 0.5 s)" in note


def test_explain_before_any_call_tunes_as_a_call_would_and_the_call_measures_nothing_again(winograd_tuning,
                                                                                          monkeypatch):
    """Cache off: the choices explain measured are kept in this process, and the first call takes them."""
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    monkeypatch.setattr(tuning, "measure_winograd", measuring([], {"none": 2.0, "F(2,3)": 1.0, "F(4,3)": 3.0}))
    winograd_tuning.programs = [1.0, 2.0]   # the marked program, then the unmarked
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 8, 3), np.float32)
    w, v = (rng.standard_normal(shape, np.float32) * 0.3 for shape in ((3, 3, 3, 4), (3, 3, 4, 4)))
    machine = tuning._noted(cpu(), "machine choice: data-tiling (fastest; ...)")   # the base autotuning starts from
    monkeypatch.setattr(hj.backends.get("iree:cpu"), "_target", machine)
    tuned = hj.jit(two_shapes, autotune=True)
    explained = str(tuned.explain(x, w, v)).splitlines()[1:]
    assert explained.pop(0) == "  tuning: base target cpu[data-tiling] (machine choice: data-tiling (fastest; ...))"
    assert explained[0].startswith("  tuning: flag set: data-tiling (fastest; data-tiling without Winograd 2.00x its "
                                   "time), measured ") and explained[0].endswith(" (tuned now)")
    assert explained[1] == ("  tuning: Winograd per convolution (tuned now in 1.0 s): 3->4ch 8x8 b1 F(2,3) 0.50x, "
                            "4->4ch 8x8 b1 F(2,3) 0.50x")
    assert winograd_tuning.timed == ["main", "main"]
    got = np.asarray(tuned(x, w, v))
    assert winograd_tuning.timed == ["main", "main"]
    want = numpy_conv(np.tanh(numpy_conv(x, w)), v)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert tuned.compile(x, w, v).compiled.target.note.startswith("autotuned: data-tiling (fastest; ")
