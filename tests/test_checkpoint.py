"""Checkpoints: round trips of every leaf kind, bfloat16 by its bits, checks against `like` naming the
leaf, atomic writes, damaged and foreign files. No compiling: only hj.Array.from_numpy leaves."""
import json
import os
import subprocess
import sys
import time
import zipfile

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj
from hlojit import checkpoint

TREE = {
    "params": [{"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, np.float32)},
               {"w": np.arange(4, dtype=ml_dtypes.bfloat16), "b": None}],
    "opt": {"step": np.int32(7), "mu": (np.full((2,), 0.5, np.float64),)},
    "epoch": 3, "lr": 0.25, "done": False,
    1: hj.Array.from_numpy(np.array([1, 2], np.uint32)),
    "half": np.ones((2, 2), np.float16),
}


def assert_same(a, b):
    leaves_a, def_a = hj.frontend.pytree.flatten(a)
    leaves_b, def_b = hj.frontend.pytree.flatten(b)
    assert def_a == def_b
    for x, y in zip(leaves_a, leaves_b):
        if isinstance(y, (bool, int, float)):
            assert type(x) is type(y) and x == y
        else:
            assert np.asarray(x).dtype == np.asarray(y).dtype and np.asarray(x).shape == np.shape(y)
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_round_trip_with_and_without_like(tmp_path):
    path = tmp_path / "ck.npz"
    hj.save_checkpoint(path, TREE)
    assert_same(hj.load_checkpoint(path), TREE)
    assert_same(hj.load_checkpoint(str(path), like=TREE), TREE)
    assert hj.load_checkpoint(path)["params"][1]["w"].dtype == ml_dtypes.bfloat16
    with np.load(path) as plain:   # an ordinary npz: bfloat16 as uint16 bits, the description as JSON
        meta = json.loads(plain["__hlojit__"].tobytes())
        index = [leaf["path"] for leaf in meta["leaves"]].index("['params'][1]['w']")
        assert plain[f"leaf_{index:05d}"].dtype == np.uint16
    assert {"path": "['params'][1]['w']", "dtype": "bfloat16", "shape": [4], "stored_as": "uint16"} in meta["leaves"]
    assert os.listdir(tmp_path) == ["ck.npz"]          # no temp files left behind


def test_like_with_shape_dtype_objects_and_scalar_leaves(tmp_path):
    path = tmp_path / "p.npz"
    hj.save_checkpoint(path, {"w": np.ones((2, 3), np.float32), "n": 5})
    spec = type("Spec", (), {"shape": (2, 3), "dtype": np.dtype(np.float32)})()
    loaded = hj.load_checkpoint(path, like={"w": spec, "n": 0})
    assert loaded["n"] == 5 and loaded["w"].shape == (2, 3)


@pytest.mark.parametrize("like, message", [
    ({**TREE, "epoch": 3, "half": np.ones((2, 3), np.float16)},
     r"leaf \['half'\] has shape \(2, 2\) in .*ck.npz but like has \(2, 3\)"),
    ({**TREE, "half": np.ones((2, 2), np.float32)}, r"leaf \['half'\] is float16 in .*ck.npz but like has float32"),
    ({**TREE, "extra": np.zeros(1)}, r"missing from the file: \['extra'\]"),
    ({k: v for k, v in TREE.items() if k != "lr"}, r"in the file but not in like: \['lr'\]"),
    ({**TREE, "opt": {"step": np.int32(0), "mu": [np.zeros(2)]}}, r"the containers differ"),
])
def test_mismatch_against_like_names_the_leaf(tmp_path, like, message):
    hj.save_checkpoint(tmp_path / "ck.npz", TREE)
    with pytest.raises(hj.CheckpointError, match=message):
        hj.load_checkpoint(tmp_path / "ck.npz", like=like)


def test_failed_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ck.npz"
    hj.save_checkpoint(path, {"w": np.ones(3, np.float32)})

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        hj.save_checkpoint(path, {"w": np.zeros(3, np.float32)})
    monkeypatch.undo()
    np.testing.assert_array_equal(hj.load_checkpoint(path)["w"], np.ones(3, np.float32))
    assert os.listdir(tmp_path) == ["ck.npz"]


def test_unsaveable_leaves_and_keys(tmp_path):
    with pytest.raises(hj.CheckpointError, match=r"leaf \['f'\] is a str"):
        hj.save_checkpoint(tmp_path / "a.npz", {"f": "text"})
    with pytest.raises(hj.CheckpointError, match=r"dict key \(1, 2\)"):
        hj.save_checkpoint(tmp_path / "b.npz", {(1, 2): np.zeros(1)})
    with pytest.raises(hj.CheckpointError, match="traced Tensor"):
        hj.jit(lambda x: hj.save_checkpoint(tmp_path / "c.npz", {"x": x}), backend="reference")(np.zeros(2))
    assert not os.listdir(tmp_path)


def test_foreign_and_damaged_files(tmp_path):
    np.savez(tmp_path / "plain.npz", a=np.zeros(2))
    with pytest.raises(hj.CheckpointError, match="not an hlojit checkpoint"):
        hj.load_checkpoint(tmp_path / "plain.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip file")
    with pytest.raises(hj.CheckpointError, match="cannot read"):
        hj.load_checkpoint(tmp_path / "junk.npz")
    with pytest.raises(hj.CheckpointError, match="cannot read"):
        hj.load_checkpoint(tmp_path / "missing.npz")
    hj.save_checkpoint(tmp_path / "ck.npz", {"w": np.ones(3, np.float32)})
    with zipfile.ZipFile(tmp_path / "ck.npz") as z:
        meta = json.loads(np.lib.format.read_array(z.open("__hlojit__.npy")).tobytes())
    meta["leaves"][0]["shape"] = [4]
    np.savez(tmp_path / "bad.npz", leaf_00000=np.ones(3, np.float32),
             __hlojit__=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    with pytest.raises(hj.CheckpointError, match=r"damaged: leaf \['w'\] should be float32\[4\]"):
        hj.load_checkpoint(tmp_path / "bad.npz")


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def _temp_files(folder, base="ck.npz"):
    return sorted(n for n in os.listdir(folder) if n.startswith(f".{base}.") and n.endswith(".tmp"))


def test_a_save_killed_mid_write_leaves_nothing_after_the_next_save(tmp_path):
    """SIGKILL during the write (the child stops inside fsync, with its temp file on disk): the next save of
    the same checkpoint removes the dead writer's temp file, and the checkpoint loads."""
    path = tmp_path / "ck.npz"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = subprocess.Popen(
        [sys.executable, "-c", "import os, sys, time, numpy as np, hlojit as hj\n"
         "os.fsync = lambda fd: (print('writing', flush=True), time.sleep(60))\n"
         f"hj.save_checkpoint({str(path)!r}, {{'w': np.ones(1 << 20, np.float32)}})"],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=root))
    try:
        assert child.stdout.readline().strip() == "writing"
    finally:
        child.kill()
        child.wait()
    left = _temp_files(tmp_path)
    assert len(left) == 1 and f".{child.pid}." in left[0] and not path.exists()
    hj.save_checkpoint(path, {"w": np.zeros(3, np.float32)})
    assert os.listdir(tmp_path) == ["ck.npz"]
    np.testing.assert_array_equal(hj.load_checkpoint(path)["w"], np.zeros(3, np.float32))


def test_only_stale_temp_files_of_the_same_checkpoint_are_removed(tmp_path):
    """Removed: a dead pid's on this host, a day-old one of another host, a day-old one of the older naming.
    Kept: a live writer's (this process), a fresh one of another host, another checkpoint's."""
    host, dead, live = checkpoint._HOST, _dead_pid(), os.getpid()
    day_ago = time.time() - checkpoint.STALE_AFTER_S - 60
    planted = {
        f".ck.npz.{host}.{dead}.abc_123.tmp": (None, False),
        f".ck.npz.{host}.{live}.def456gh.tmp": (None, True),
        f".ck.npz.elsewhere.{dead}.xyz98765.tmp": (None, True),
        f".ck.npz.elsewhere.{live}.old12345.tmp": (day_ago, False),
        ".ck.npz.k3j_x9q2.tmp": (day_ago, False),
        f".ck.npz.bak.{host}.{dead}.abc_123.tmp": (day_ago, True),
        f".other.npz.{host}.{dead}.abc_123.tmp": (None, True),
    }
    for name, (mtime, _) in planted.items():
        (tmp_path / name).write_bytes(b"half a checkpoint")
        if mtime is not None:
            os.utime(tmp_path / name, (mtime, mtime))
    hj.save_checkpoint(tmp_path / "ck.npz", {"w": np.ones(2, np.float32)})
    kept = sorted(name for name, (_, keep) in planted.items() if keep)
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith(".tmp")) == kept
    np.testing.assert_array_equal(hj.load_checkpoint(tmp_path / "ck.npz")["w"], np.ones(2, np.float32))
