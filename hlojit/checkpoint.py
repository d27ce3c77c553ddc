"""Checkpoints: a pytree of arrays in one `.npz` file, with a JSON description of the tree inside it.

    hj.save_checkpoint("run/step_1000.npz", {"params": params, "opt": opt_state, "epoch": 3})
    state = hj.load_checkpoint("run/step_1000.npz", like=state)   # checks structure, shapes and dtypes

The file is an ordinary `.npz` (numpy can open it: `leaf_00000`, `leaf_00001`, ... in flatten order)
plus `__hlojit__`, a JSON document (as uint8 bytes, so no pickle is ever loaded) holding the tree
structure, each leaf's path, dtype and shape, and which leaves were Python scalars. Dtypes numpy cannot
store in an npz (bfloat16 and the other ml_dtypes) are stored as their bits, as unsigned integers of the
same width, and come back as themselves. Writes are atomic: a temp file in the same folder, fsync, then a
rename over the target, so a crash mid-save leaves the previous checkpoint whole.

A killed save leaves its temp file behind (9 kills of a big save left 3.2 GB): the temp file's name holds
the writer's host and pid (`.step.npz.HOST.PID.RANDOM.tmp`), and every save of a checkpoint first removes
the temp files of that checkpoint whose writer is dead (same host, no such pid), or that nobody has
written to for a day (another host's, a reused pid's, one named before this scheme).
"""
from __future__ import annotations

import json
import os
import re
import socket
import tempfile
import time
import zipfile

import numpy as np

from .backends import Array
from .errors import CheckpointError
from .frontend import pytree
from .frontend.tensor import Tensor

__all__ = ["save", "load"]

_FORMAT, _VERSION, _META = "hlojit.checkpoint", 1, "__hlojit__"
_PYTHON = {"bool": bool, "int": int, "float": float}
_UMASK = os.umask(0o022)
os.umask(_UMASK)   # read once: mkstemp makes 0600 files, a checkpoint gets the mode open() would give it
STALE_AFTER_S = 24 * 3600   # a temp file nobody wrote to for this long is stale, whoever its writer was
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


def _dtype_named(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes   # bfloat16, float8 types: numpy knows their names once ml_dtypes is imported
        return np.dtype(getattr(ml_dtypes, name))


def _leaf_array(path: str, leaf) -> tuple[np.ndarray, str | None]:
    if isinstance(leaf, Tensor):
        raise CheckpointError(f"save_checkpoint: leaf {path or '(root)'} is a traced Tensor {leaf.dtype}"
                              f"{list(leaf.shape)}; return it from the jitted function and save the result")
    if isinstance(leaf, (bool, int, float)) and not isinstance(leaf, np.generic):
        return np.asarray(leaf), type(leaf).__name__
    if isinstance(leaf, (np.ndarray, np.generic, Array)):
        return np.asarray(leaf), None
    raise CheckpointError(f"save_checkpoint: leaf {path or '(root)'} is a {type(leaf).__name__}; checkpoints "
                          "hold numpy arrays, hj.Arrays and Python bool/int/float")


def save(path, tree) -> None:
    """Write `tree` (any pytree of arrays and Python scalars) to `path` atomically. A tree with namedtuples
    or registered classes in it loads back with `like=` (a file cannot rebuild Python classes)."""
    paths: list = []
    leaves, treedef = pytree.flatten(tree, paths=paths)
    try:   # a tree with classes in it is written as its picture: loading it takes like= to rebuild them
        structure = None if pytree.has_classes(treedef) else pytree.to_json(treedef)
    except ValueError as e:
        raise CheckpointError(f"save_checkpoint: {e}") from None
    arrays, described = {}, []
    for i, (leaf_path, leaf) in enumerate(zip(paths, leaves)):
        array, python = _leaf_array(leaf_path, leaf)
        entry = {"path": leaf_path, "dtype": array.dtype.name, "shape": list(array.shape)}
        if np.dtype(array.dtype.str) != array.dtype:     # an ml_dtypes type: the npz stores its bits
            entry["stored_as"] = f"uint{array.dtype.itemsize * 8}"
            array = array.view(entry["stored_as"])
        if python:
            entry["python"] = python
        arrays[f"leaf_{i:05d}"] = array
        described.append(entry)
    meta = {"format": _FORMAT, "version": _VERSION, "tree": structure, "leaves": described}
    if pytree.has_classes(treedef):
        meta["classes"] = pytree.describe(treedef)
    arrays[_META] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    _remove_stale_temp_files(path)
    fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.{_HOST}.{os.getpid()}.",
                                suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o666 & ~_UMASK)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # PermissionError: another user's live process
        return True
    return True


def _stale(name: str, full: str, now: float, base: str) -> bool:
    """Whether `name` is a temp file of checkpoint `base` left by a writer that will never finish it."""
    written = re.fullmatch(rf"\.{re.escape(base)}\.([A-Za-z0-9-]+)\.(\d+)\.\w+\.tmp", name)
    if written and written.group(1) == _HOST and int(written.group(2)) > 0 and not _alive(int(written.group(2))):
        return True
    if not written and not re.fullmatch(rf"\.{re.escape(base)}\.\w{{8}}\.tmp", name):   # the older naming
        return False   # another checkpoint's (`ck.npz.bak`'s temp files start with `.ck.npz.` too)
    try:
        return now - os.lstat(full).st_mtime > STALE_AFTER_S
    except OSError:
        return False


def _remove_stale_temp_files(path) -> None:
    """Remove the temp files earlier saves of checkpoint `path` left (a killed writer's). Never fails a
    save: a file that cannot be removed stays."""
    path = os.fspath(path)
    folder, base = os.path.dirname(os.path.abspath(path)), os.path.basename(path)
    try:
        names = [n for n in os.listdir(folder) if n.startswith(f".{base}.") and n.endswith(".tmp")]
    except OSError:
        return
    now = time.time()
    for name in names:
        full = os.path.join(folder, name)
        if _stale(name, full, now, base):
            try:
                os.unlink(full)
            except OSError:   # gone already (another saver cleaned it), or not ours to remove
                pass


def _read(path) -> tuple[dict, list]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            if _META not in npz.files:
                raise CheckpointError(f"load_checkpoint: {path} is an npz file but not an hlojit checkpoint "
                                      f"(no {_META} entry; it holds {', '.join(npz.files[:5])})")
            meta = json.loads(npz[_META].tobytes().decode())
            if meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
                raise CheckpointError(f"load_checkpoint: {path} is format {meta.get('format')!r} version "
                                      f"{meta.get('version')!r}; this hlojit reads {_FORMAT!r} version {_VERSION}")
            arrays = [npz[f"leaf_{i:05d}"] for i in range(len(meta["leaves"]))]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"load_checkpoint: cannot read {path}: {type(e).__name__}: {e}") from None
    return meta, arrays


def _restore(entry: dict, array: np.ndarray, path) -> np.ndarray:
    dtype = _dtype_named(entry["dtype"])
    if "stored_as" in entry:
        array = array.view(dtype)
    if array.dtype != dtype or list(array.shape) != entry["shape"]:
        raise CheckpointError(f"load_checkpoint: {path} is damaged: leaf {entry['path']} should be {dtype}"
                              f"{entry['shape']} but holds {array.dtype}{list(array.shape)}")
    return _PYTHON[entry["python"]](array.item()) if "python" in entry else array


def _check_like(path, meta: dict, treedef, leaves: list, like):
    """like's treedef, once like matches the file's structure (`treedef`, or for a tree with classes the
    picture in meta["classes"]), shapes and dtypes."""
    like_paths: list = []
    like_leaves, like_def = pytree.flatten(like, paths=like_paths)
    classes = meta.get("classes")
    if (like_def != treedef) if classes is None else (pytree.describe(like_def) != classes):
        saved = [entry["path"] for entry in meta["leaves"]]
        missing = [p for p in like_paths if p not in saved]
        extra = [p for p in saved if p not in like_paths]
        detail = (f"; missing from the file: {', '.join(missing[:5])}" if missing else "") + \
                 (f"; in the file but not in like: {', '.join(extra[:5])}" if extra else "")
        raise CheckpointError(f"load_checkpoint: {path} holds {classes or pytree.describe(treedef)} but like "
                              f"is {pytree.describe(like_def)}{detail or ' (the containers differ)'}")
    for leaf_path, expected, got in zip(like_paths, like_leaves, leaves):
        want_shape, want_dtype = np.shape(expected), getattr(expected, "dtype", None)
        if want_dtype is None:
            want_dtype = np.asarray(expected).dtype
        got_shape, got_dtype = np.shape(got), np.asarray(got).dtype
        if tuple(want_shape) != tuple(got_shape):
            raise CheckpointError(f"load_checkpoint: leaf {leaf_path or '(root)'} has shape {tuple(got_shape)} in "
                                  f"{path} but like has {tuple(want_shape)}")
        if np.dtype(want_dtype) != got_dtype and not isinstance(expected, (bool, int, float)):
            raise CheckpointError(f"load_checkpoint: leaf {leaf_path or '(root)'} is {got_dtype} in {path} "
                                  f"but like has {np.dtype(want_dtype)}")
    return like_def


def load(path, like=None):
    """The tree `save` wrote: numpy arrays (Python scalars where those were saved). With `like` (a tree
    of arrays, hj.Arrays, or anything with .shape and .dtype), the structure, every shape and every dtype
    must match, else a CheckpointError names the first leaf that differs."""
    path = os.fspath(path)
    meta, arrays = _read(path)
    try:
        treedef = None if "classes" in meta else pytree.from_json(meta["tree"])
        leaves = [_restore(entry, array, path) for entry, array in zip(meta["leaves"], arrays)]
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"load_checkpoint: {path} has a damaged description: {e}") from None
    if "classes" in meta:
        if like is None:
            raise CheckpointError(f"load_checkpoint: {path} holds {meta['classes']}, with classes in it (namedtuples "
                                  "or registered pytree classes) that a file cannot rebuild; pass like= a tree of "
                                  "that structure (its leaves may be arrays or anything with .shape and .dtype)")
        return pytree.unflatten(_check_like(path, meta, None, leaves, like), leaves)
    if len(pytree.leaf_paths(treedef)) != len(leaves):
        raise CheckpointError(f"load_checkpoint: {path} is damaged: its tree has {len(pytree.leaf_paths(treedef))} "
                              f"leaves but it stores {len(leaves)}")
    if like is not None:
        _check_like(path, meta, treedef, leaves, like)
    return pytree.unflatten(treedef, leaves)
