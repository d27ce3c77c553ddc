"""The persistent compile cache: hits across Execs and processes, corrupt entries, concurrent writers, the
size cap, turning it off, what the key ignores (source locations) and what it does not (ops, targets, CPU).
What it must never do is run another program's code: tests/test_cache_trust.py."""
import json
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hlojit as hj
from hlojit.pipeline import cache, targets, tuning

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache folder of this test's own, with the default settings."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("HLOJIT_CACHE_DIR", str(folder))
    for name in ("HLOJIT_CACHE", "HLOJIT_CACHE_MAX_BYTES", "HLOJIT_LOG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cache, "_warned", set())    # each test sees the warnings it causes
    return folder


def poly(x):
    return x**4 + 1


def compiled_by_a_fresh_exec(fn, x):
    """Compile `fn` for `x` with a new Exec (its in-memory cache is empty): only the disk cache can help."""
    f = hj.jit(fn)
    np.testing.assert_allclose(np.asarray(f(x)), fn(x), rtol=1e-6)
    return f.compile(x).compiled


def entries(folder) -> set:
    return {p.name for p in folder.glob("*" + cache.SUFFIX)} if folder.exists() else set()


def test_hit_after_miss_with_a_fresh_exec_and_the_log_says_why(cache_dir, monkeypatch, caplog):
    monkeypatch.setenv("HLOJIT_LOG", "compiles")
    x = np.arange(4, dtype=np.float32)
    with caplog.at_level(logging.INFO, logger="hlojit"):
        cold = compiled_by_a_fresh_exec(poly, x)
        warm = compiled_by_a_fresh_exec(poly, x)
    assert (cold.cache_hit, warm.cache_hit) == (False, True)
    assert warm.vmfb == cold.vmfb and warm.dispatch_count == cold.dispatch_count
    assert cold.seconds > 0 and warm.seconds < cold.seconds
    assert len(entries(cache_dir)) == 1 and hj.cache.info().entries == 1
    miss, hit = [r.getMessage() for r in caplog.records if r.name == "hlojit"]
    assert miss.startswith("compile poly(f32[4]) for cpu[data-tiling]:") and "disk cache miss (not in the cache; stored)" in miss
    assert "disk cache hit" in hit and "traced because first call: x: f32[4]" in hit


SCRIPT = """
import json, sys
import numpy as np
import iree.compiler.api
import hlojit as hj

invocations = 0          # every IREE compile, in-process, ends in Invocation.output_vm_bytecode()
real_output = iree.compiler.api.Invocation.output_vm_bytecode
def counting_output(self, output):
    global invocations
    invocations += 1
    return real_output(self, output)
iree.compiler.api.Invocation.output_vm_bytecode = counting_output

def poly(x):
    return x**4 + 1

f = hj.jit(poly)
x = np.arange(4, dtype=np.float32)
y = np.asarray(f(x)).tolist()
print(json.dumps({"cache_hit": f.compile(x).compiled.cache_hit, "iree_compiles": invocations, "y": y}))
"""


def run_script(tmp_path, cache_dir, **env):
    script = tmp_path / "poly_script.py"
    script.write_text(SCRIPT)
    environment = dict(os.environ, PYTHONPATH=REPO, HLOJIT_CACHE_DIR=str(cache_dir),
                       HLOJIT_COMPILE_WORKER="0", **env)   # the script counts its own process's compiles
    return subprocess.Popen([sys.executable, str(script)], env=environment, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(process) -> tuple[dict, str]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["y"] == [1.0, 2.0, 17.0, 82.0]
    return report, err


def test_a_warm_process_compiles_nothing(tmp_path, cache_dir):
    cold, _ = finish(run_script(tmp_path, cache_dir))
    warm, log = finish(run_script(tmp_path, cache_dir, HLOJIT_LOG="compiles"))
    assert cold == {**cold, "cache_hit": False, "iree_compiles": 1}
    assert warm == {**warm, "cache_hit": True, "iree_compiles": 0}
    assert "compile poly(f32[4]) for cpu" in log and "disk cache hit" in log


def test_two_processes_writing_the_same_entry_leave_a_valid_one(tmp_path, cache_dir):
    both = [run_script(tmp_path, cache_dir), run_script(tmp_path, cache_dir)]
    reports = [finish(p)[0] for p in both]
    assert sum(r["iree_compiles"] for r in reports) >= 1
    assert len(entries(cache_dir)) == 1
    assert not [p for p in os.listdir(cache_dir) if not p.endswith(cache.SUFFIX) or p.startswith(".")]
    assert compiled_by_a_fresh_exec(poly, np.arange(4, dtype=np.float32)).cache_hit


def flip_payload_bytes(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 8]) + data[middle + 8:]


def flip_checksum_byte(data: bytes) -> bytes:
    sha = len(b"HLOJIT-CACHE ")
    return data[:sha] + (b"0" if data[sha:sha + 1] != b"0" else b"1") + data[sha + 1:]


def flip_header_byte(data: bytes) -> bytes:      # the checksum covers the header too: here, the key
    at = data.index(b'"key": "') + len(b'"key": "')
    return data[:at] + (b"0" if data[at:at + 1] != b"0" else b"1") + data[at + 1:]


def truncate(data: bytes) -> bytes:
    return data[:len(data) * 2 // 3]


@pytest.mark.parametrize("damage", [flip_payload_bytes, flip_checksum_byte, flip_header_byte, truncate])
def test_a_damaged_entry_is_removed_and_recompiled_never_run(cache_dir, damage):
    x = np.arange(4, dtype=np.float32)
    target = targets.cpu()
    program = hj.jit(poly).lower(x).program
    key = cache.key(program, target)
    compiled_by_a_fresh_exec(poly, x)
    path = cache_dir / (key + cache.SUFFIX)
    sound = path.read_bytes()
    path.write_bytes(damage(sound))
    compiled, why = cache.read(key, target)
    assert compiled is None and why.startswith("bad entry removed") and not path.exists()
    path.write_bytes(damage(sound))                     # damaged again: now the jit path finds it
    recompiled = compiled_by_a_fresh_exec(poly, x)      # checks the result is still right
    assert not recompiled.cache_hit
    assert cache.read(key, target)[0].vmfb == recompiled.vmfb      # and a sound entry replaced the bad one


def test_the_size_cap_evicts_the_least_recently_used(cache_dir, monkeypatch):
    x = np.arange(4, dtype=np.float32)
    first, second, third = (lambda x: x + 1), (lambda x: x * 2), (lambda x: x - 3)
    compiled_by_a_fresh_exec(first, x)
    a = entries(cache_dir)
    compiled_by_a_fresh_exec(second, x)
    b = entries(cache_dir) - a
    assert compiled_by_a_fresh_exec(first, x).cache_hit      # a hit: `first` is now the most recently used
    size = max(p.stat().st_size for p in cache_dir.iterdir())
    monkeypatch.setenv("HLOJIT_CACHE_MAX_BYTES", str(int(size * 2.5)))
    compiled_by_a_fresh_exec(third, x)
    assert len(entries(cache_dir)) == 2 and a <= entries(cache_dir) and not b & entries(cache_dir)
    assert hj.cache.info().bytes <= size * 2.5


def test_cache_off_reads_and_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("HLOJIT_CACHE", "0")
    x = np.float32(3.0)
    assert not compiled_by_a_fresh_exec(poly, x).cache_hit
    assert not compiled_by_a_fresh_exec(poly, x).cache_hit
    assert entries(cache_dir) == set() and not hj.cache.info().enabled


def load_source(tmp_path, name: str, source: str):
    import importlib.util
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scale


def test_a_source_edit_that_changes_no_op_hits(tmp_path, cache_dir):
    before = load_source(tmp_path, "before", """
        def scale(x):
            return x * 2 + 1
        """)
    after = load_source(tmp_path, "after", """
        # an edit: a comment, and every line moved down


        def scale(x):
            y = x * 2        # the same ops, on other lines
            return y + 1
        """)
    x = np.arange(3, dtype=np.float32)
    lowered = [hj.jit(fn).lower(x) for fn in (before, after)]
    assert lowered[0].as_text(debug_info=True) != lowered[1].as_text(debug_info=True)   # locations differ
    assert not compiled_by_a_fresh_exec(before, x).cache_hit
    assert compiled_by_a_fresh_exec(after, x).cache_hit


def test_the_key_covers_ops_shapes_target_flags_compiler_pipeline_and_host_cpu(monkeypatch):
    x = np.arange(3, dtype=np.float32)

    def key(fn, target, arg=x):
        return cache.key(hj.jit(fn).lower(arg).program, target)
    cpu = targets.cpu()
    base = key(poly, cpu)
    assert key(poly, cpu) == base
    assert key(lambda x: x**3 + 1, cpu) != base
    assert key(poly, cpu, np.arange(4, dtype=np.float32)) != base
    assert key(poly, targets.vmvx()) != base
    assert key(poly, cpu.with_flags("--iree-opt-level=O3")) != base
    generic = key(poly, targets.cpu("generic"))
    monkeypatch.setattr(cache, "host_cpu_features", lambda: "some other CPU")
    assert key(poly, cpu) != base                     # `host` code is only for this CPU ...
    assert key(poly, targets.cpu("generic")) == generic      # ... a named CPU's code is for any host
    monkeypatch.setattr(cache, "compiler_version", lambda: "99.0")
    assert key(poly, targets.cpu("generic")) != generic
    version_99 = key(poly, targets.cpu("generic"))
    monkeypatch.setattr(cache, "pipeline_fingerprint", lambda: "an edited quirk")
    assert key(poly, targets.cpu("generic")) != version_99


def write_tuning_records():
    """One record of each kind, as tuning.py writes them (no measuring), and one of the format before kinds."""
    for kind, subject, seconds in (
            ("machine", "host (a CPU), IREE 3.13, 3 flag sets", {"data-tiling": [1.0], "inner-tiled": [1.5]}),
            ("program", "poly(f32[])", {"data-tiling": [2.0], "inner-tiled": [1.0]}),
            ("winograd", "64->64ch 56x56 b1", {"none": [2.0], "F(2,3)": [1.5], "F(4,3)": [1.0]})):
        record = {**tuning._record(seconds, {}, [subject], 0.0, kind, subject), "cost_seconds": 2.5}
        assert tuning.write_record(f"{kind}-key", record) == "stored"
    older = cache.folder() + f"/{tuning.RECORD_PREFIX}older.json"
    with open(older, "w") as f:
        json.dump({"format": 1, "chosen": "data-tiling"}, f)


def test_info_lists_the_tuning_records_and_clear_removes_them_with_the_entries(cache_dir):
    compiled_by_a_fresh_exec(poly, np.float32(2.0))
    write_tuning_records()
    (cache_dir / f".tmp-{tuning.RECORD_PREFIX}left-by-a-dead-writer.json").write_text("{")
    (cache_dir / "README.txt").write_text("not an entry")
    info = hj.cache.info()
    assert info.entries == 1 and info.bytes > 0
    when = {record.kind: record.measured for record in info.tuning}    # (oldest first; written in one tick here)
    assert sorted(info.tuning, key=lambda record: record.kind) == [
        ("machine", "host (a CPU), IREE 3.13, 3 flag sets", "data-tiling", when["machine"], 2.5),
        ("program", "poly(f32[])", "inner-tiled", when["program"], 2.5),
        ("unreadable", f"{tuning.RECORD_PREFIX}older.json", "malformed or of an older format", "", 0.0),
        ("winograd", "64->64ch 56x56 b1", "F(4,3)", when["winograd"], 2.5)]
    text = str(info).splitlines()
    assert text[0].startswith(f"hlojit compile cache {cache_dir}: 1 entry, ") and text[0].endswith("; 4 tuning records")
    assert f"  tuned winograd 64->64ch 56x56 b1: F(4,3) (measured {when['winograd']} UTC in 2.5 s)" in text
    assert f"  tuned unreadable record {tuning.RECORD_PREFIX}older.json (malformed or of an older format)" in text
    hj.cache.clear()
    info = hj.cache.info()
    assert (info.entries, info.bytes, info.folder, info.tuning) == (0, 0, str(cache_dir), ())
    assert str(info).endswith("0 entries, 0 bytes of 1 GiB; 0 tuning records")
    assert os.listdir(cache_dir) == ["README.txt"]


def test_cache_settings(cache_dir, monkeypatch):
    assert hj.cache.info().cap == 1 << 30 and hj.cache.info().enabled
    monkeypatch.setenv("HLOJIT_CACHE_MAX_BYTES", "500M")
    assert cache.max_bytes() == 500 << 20
    monkeypatch.setenv("HLOJIT_CACHE_MAX_BYTES", "lots")
    with pytest.raises(hj.ConfigError, match="HLOJIT_CACHE_MAX_BYTES='lots'") as e:
        cache.max_bytes()
    assert isinstance(e.value, ValueError)
    for text in ("inf", "nan", "1e400", "-1", "1.5.2", "2T", "0x10"):    # inf was an OverflowError
        monkeypatch.setenv("HLOJIT_CACHE_MAX_BYTES", text)
        with pytest.raises(hj.ConfigError, match=f"HLOJIT_CACHE_MAX_BYTES={text!r} is not a size in bytes"):
            cache.max_bytes()
    monkeypatch.setenv("HLOJIT_CACHE_MAX_BYTES", "1.5g")
    assert cache.max_bytes() == 3 << 29
    monkeypatch.delenv("HLOJIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert cache.folder() == "/somewhere/hlojit"
