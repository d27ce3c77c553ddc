"""The persistent compile cache never runs another program's code (issue 10): an entry holds its key and is
refused under another name; entries that are not regular files neither hang nor fill the memory; only a
folder and entries that this user alone can write are used; malformed entries are removed, not fatal."""
import json
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hlojit as hj
from hlojit.pipeline import cache, cache_entry, private_files, targets
from hlojit.pipeline.compiler import Compiled
from test_cache import REPO, cache_dir, compiled_by_a_fresh_exec, entries, poly  # noqa: F401 (cache_dir: a fixture)

X = np.arange(4, dtype=np.float32)


def double_plus_one(x):
    return x * 2 + 1


def triple_minus_one(x):
    return x * 3 - 1


def add(x, y):
    return x + y


def entry_path(folder, fn, *args):
    return folder / (cache.key(hj.jit(fn).lower(*args).program, targets.cpu()) + cache.SUFFIX)


def test_an_entry_copied_under_another_key_is_never_run(cache_dir):
    victim = entry_path(cache_dir, double_plus_one, X)
    for fn, args in ((double_plus_one, (X,)), (triple_minus_one, (X,)), (add, (X, X))):
        hj.jit(fn)(*args)
    sound = victim.read_bytes()
    for donor in (entry_path(cache_dir, triple_minus_one, X), entry_path(cache_dir, add, X, X)):
        shutil.copyfile(donor, victim)       # another function's valid entry (the second: of another arity)
        compiled, why = cache.read(victim.name[:-len(cache.SUFFIX)], targets.cpu())
        assert compiled is None and why.startswith("bad entry removed: it is the entry of key") and not victim.exists()
        shutil.copyfile(donor, victim)
        again = compiled_by_a_fresh_exec(double_plus_one, X)     # asserts 2x + 1, not 3x - 1
        assert not again.cache_hit and victim.read_bytes()[-len(again.vmfb):] == again.vmfb
    assert cache.read(victim.name[:-len(cache.SUFFIX)], targets.cpu())[0].vmfb == sound[-len(again.vmfb):]


def test_the_entry_names_its_program():
    compiled = Compiled(b"vmfb", targets.cpu(), 0.5, 1)
    data = cache_entry.encode(cache_entry.header("k" * 64, "p" * 64, compiled, "3.13", 0), b"vmfb")
    assert cache_entry.decode(data, "k" * 64, "p" * 64)[1] == b"vmfb"
    assert cache_entry.decode(data, "k" * 64)[1] == b"vmfb"
    with pytest.raises(cache_entry.BadEntry, match="it holds program pppp"):
        cache_entry.decode(data, "k" * 64, "q" * 64)


UNREADABLE = """
import json, os, resource
import numpy as np
import hlojit as hj
from hlojit.pipeline import cache, targets

def poly(x):
    return x**4 + 1

x = np.arange(4, dtype=np.float32)
folder = cache.folder()
os.makedirs(folder, mode=0o700)
fifo = os.path.join(folder, cache.key(hj.jit(poly).lower(x).program, targets.cpu()) + cache.SUFFIX)
os.mkfifo(fifo)
y = np.asarray(hj.jit(poly)(x)).tolist()           # open() waited for a writer forever
zero = os.path.join(folder, "0" * 64 + cache.SUFFIX)
os.symlink("/dev/zero", zero)
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.getrlimit(resource.RLIMIT_AS)[1]))
compiled, why = cache.read("0" * 64, targets.cpu())   # read /dev/zero to the end: here a MemoryError
print(json.dumps({"y": y, "fifo_replaced": os.path.isfile(fifo) and not os.path.islink(fifo),
                  "zero": [compiled is None, why, os.path.lexists(zero)]}))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_link_to_dev_zero_neither_hangs_nor_fills_the_memory(tmp_path):
    script = tmp_path / "unreadable.py"
    script.write_text(UNREADABLE)
    environment = dict(os.environ, PYTHONPATH=REPO, HLOJIT_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(script)], env=environment, text=True, capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"y": [1.0, 2.0, 17.0, 82.0], "fifo_replaced": True,
                      "zero": [True, "entry removed: it is a symbolic link", False]}
    assert "removed the compile cache entry" in done.stderr      # a CacheWarning


def test_the_folder_is_made_0700_and_entries_0600(cache_dir):
    umask = os.umask(0o022)
    try:
        compiled_by_a_fresh_exec(poly, X)
    finally:
        os.umask(umask)
    [name] = entries(cache_dir)
    assert (cache_dir.stat().st_mode & 0o777, (cache_dir / name).stat().st_mode & 0o777) == (0o700, 0o600)


def refuse_by_mode(folder, monkeypatch):
    folder.chmod(0o777)
    return "the folder is writable by group and others (mode 0777)"


def refuse_by_owner(folder, monkeypatch):
    monkeypatch.setattr(private_files, "user_id", lambda: folder.stat().st_uid + 1)
    return f"the folder is owned by user {folder.stat().st_uid}, not by this user"


@pytest.mark.parametrize("refuse", [refuse_by_mode, refuse_by_owner])
def test_a_folder_others_can_write_is_not_used(cache_dir, monkeypatch, refuse):
    compiled_by_a_fresh_exec(poly, X)
    before = {name: (cache_dir / name).read_bytes() for name in entries(cache_dir)}
    why = refuse(cache_dir, monkeypatch)
    with pytest.warns(cache.CacheWarning, match=re.escape(f"not using the compile cache folder {cache_dir}: {why}")):
        assert not compiled_by_a_fresh_exec(poly, X).cache_hit
    with warnings.catch_warnings():
        warnings.simplefilter("error")                                # warned once
        assert not compiled_by_a_fresh_exec(double_plus_one, X).cache_hit
    assert {name: (cache_dir / name).read_bytes() for name in entries(cache_dir)} == before   # nothing written


def test_an_entry_others_can_write_is_not_used(cache_dir):
    compiled_by_a_fresh_exec(poly, X)
    [name] = entries(cache_dir)
    (cache_dir / name).chmod(0o646)
    with pytest.warns(cache.CacheWarning, match="the file is writable by others"):
        assert not compiled_by_a_fresh_exec(poly, X).cache_hit
    assert (cache_dir / name).stat().st_mode & 0o777 == 0o600          # a fresh entry of this user's
    assert compiled_by_a_fresh_exec(poly, X).cache_hit


MALFORMED = {                      # an edit of a sound entry's header, its checksum made right again
    "compile_seconds": lambda h: {**h, "compile_seconds": "fast"},        # raised ValueError on every call
    "dispatch_count": lambda h: {**h, "dispatch_count": "many"},
    "attempt": lambda h: {**h, "attempt": "the fallback"},
    "bytes": lambda h: {**h, "bytes": True},
    "no key": lambda h: {k: v for k, v in h.items() if k != "key"},
    "a list": lambda h: list(h.items()),
}


def test_a_malformed_entry_is_removed_and_recompiled(cache_dir):
    entry_key = cache.key(hj.jit(poly).lower(X).program, targets.cpu())
    path = cache_dir / (entry_key + cache.SUFFIX)
    compiled_by_a_fresh_exec(poly, X)
    header, vmfb = cache_entry.decode(path.read_bytes(), entry_key)
    for name, edit in MALFORMED.items():
        path.write_bytes(cache_entry.encode(edit(header), vmfb))
        compiled, why = cache.read(entry_key, targets.cpu())
        assert compiled is None and why.startswith("bad entry removed: bad header") and not path.exists(), name
    path.write_bytes(cache_entry.encode({**header, "attempt": 9}, vmfb))    # cpu(): data tiling, rescued, none
    compiled, why = cache.read(entry_key, targets.cpu())
    assert compiled is None and why == "bad entry removed: made by attempt 9 of 3" and not path.exists()
    path.write_bytes(cache_entry.encode(MALFORMED["compile_seconds"](header), vmfb))
    assert not compiled_by_a_fresh_exec(poly, X).cache_hit
    assert compiled_by_a_fresh_exec(poly, X).cache_hit
    path.write_bytes(b"HLOJIT-CACHE " + b"0" * 64 + b" " + b"[" * 100_000 + b"\n")    # nested too deep for json
    assert cache.read(entry_key, targets.cpu())[1].startswith("bad entry removed: bad header (RecursionError")
