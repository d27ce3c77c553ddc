"""Checkpoints: round trips of every leaf kind, bfloat16 by its bits, checks against `like` naming the
leaf, atomic writes, damaged and foreign files. No compiling: only hj.Array.from_numpy leaves."""
import json
import os
import zipfile

import ml_dtypes
import numpy as np
import pytest

import hlojit as hj

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
