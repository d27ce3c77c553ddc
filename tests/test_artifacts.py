"""Exported artifacts: hj.export -> .vmfb/.mlir/.json, hj.load in this and in a fresh process, the IREE
command-line tools on the same files, and a clear error for every way a call or a file can be wrong.

Each export compiles once (module-scoped fixtures); copies are tampered with, never the originals.
"""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest

import hlojit as hj
from hlojit import ops
from hlojit.frontend import pytree
from hlojit.pipeline import artifacts

from conftest import assert_close

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(0)
PARAMS = {"w": RNG.standard_normal((3, 4)).astype(np.float32), "b": RNG.standard_normal(4).astype(np.float32)}
X = RNG.standard_normal((2, 3)).astype(np.float32)
SCALE = 0.5


def model(params, x, scale, act="tanh"):
    """A pytree in (a dict of weights), a Python scalar, a static string, a tuple out."""
    h = x @ params["w"] + params["b"]
    h = ops.tanh(h) if act == "tanh" else ops.relu(h)
    return h * scale, ops.sum(h, axis=1)


def reference(params, x, scale):
    h = np.tanh(x @ params["w"] + params["b"])
    return h * scale, h.sum(axis=1)


def _export(tmp_path_factory, name, **kw):
    path = str(tmp_path_factory.mktemp("artifacts") / name)
    if name == "vmvx":   # a plain function: `act` keeps its default, a Python constant of the trace
        manifest = hj.export(model, PARAMS, X, SCALE, path=path, **kw)
    else:                # an hj.jit function with a static argument, baked into the artifact
        manifest = hj.export(hj.jit(model, static_argnames="act"), PARAMS, X, SCALE, act="tanh", path=path, **kw)
    return path, manifest


@pytest.fixture(scope="module")
def cpu_artifact(tmp_path_factory):
    return _export(tmp_path_factory, "cpu", target="cpu")


@pytest.fixture(scope="module")
def artifact(request, tmp_path_factory):
    if request.param == "cpu":
        return request.getfixturevalue("cpu_artifact")
    if request.param == "vmvx":
        return _export(tmp_path_factory, "vmvx", target="vmvx")
    return _export(tmp_path_factory, "portable", target="cpu", portable=True)


def _copy(path, tmp_path) -> str:
    """A copy of the artifact's three files, to damage."""
    for suffix in (".vmfb", ".mlir", ".json"):
        shutil.copy(path + suffix, tmp_path / ("copy" + suffix))
    return str(tmp_path / "copy")


def _edit_manifest(path, edit):
    with open(path + ".json") as f:
        obj = json.load(f)
    edit(obj)
    with open(path + ".json", "w") as f:
        json.dump(obj, f)


# --- the round trip ---

@pytest.mark.parametrize("artifact", ["cpu", "vmvx", "portable"], indirect=True)
def test_export_load_round_trip(artifact):
    path, manifest = artifact
    for suffix in (".vmfb", ".mlir", ".json"):
        assert os.path.getsize(path + suffix) > 0
    f = hj.load(path)
    out = f(PARAMS, X, SCALE)
    assert type(out) is tuple and len(out) == 2 and all(type(a) is hj.Array for a in out)
    for got, want in zip(out, reference(PARAMS, X, SCALE)):
        assert_close(got, want, scale=10)
    by_keyword = f(params=PARAMS, x=X, scale=np.float32(SCALE))        # keywords, a numpy scalar
    np.testing.assert_array_equal(np.asarray(by_keyword[0]), np.asarray(out[0]))
    again = f(PARAMS, out[0][:, :3].copy(), SCALE)                      # another input, the same artifact
    assert_close(again[1], np.tanh(out[0][:, :3] @ PARAMS["w"] + PARAMS["b"]).sum(axis=1), scale=10)
    assert hj.load(path + ".json").manifest.vmfb_sha256 == manifest.vmfb_sha256   # any suffix names it


def test_manifest_describes_the_call(cpu_artifact):
    path, manifest = cpu_artifact
    with open(path + ".json") as f:
        obj = json.load(f)
    assert obj["format"] == artifacts.FORMAT and obj["entry_point"] == "main" and obj["name"] == "model"
    assert [(x["name"], x["shape"], x["dtype"]) for x in obj["inputs"]] == [
        ("params['b']", [4], "float32"), ("params['w']", [3, 4], "float32"), ("x", [2, 3], "float32"),
        ("scale", [], "float32")]
    assert obj["inputs"][3]["weak"] is True                              # a Python scalar at export
    assert [(x["name"], x["shape"]) for x in obj["outputs"]] == [("result[0]", [2, 4]), ("result[1]", [2])]
    assert [a["name"] for a in obj["arguments"]] == ["params", "x", "scale"]
    assert pytree.from_json(obj["arguments"][0]["tree"]) == pytree.flatten(PARAMS)[1]
    assert pytree.from_json(obj["out_tree"]) == pytree.flatten((1, 2))[1]
    assert obj["statics"] == {"act": "'tanh'"}
    assert obj["target"]["name"] == "cpu" and "--iree-llvmcpu-target-cpu=host" in obj["target"]["flags"]
    assert obj["target"]["portable"] is False and obj["host"]["arch"] and "cpu_features" in obj["host"]
    import iree.compiler.version
    import iree.runtime.version
    assert obj["iree"]["compiler"] == iree.compiler.version.VERSION
    assert obj["iree"]["runtime"] == iree.runtime.version.VERSION
    with open(path + ".vmfb", "rb") as f:
        assert obj["vmfb_sha256"] == hashlib.sha256(f.read()).hexdigest()
    with open(path + ".mlir") as f:
        assert "func.func @main" in f.read()


def test_plain_array_arguments_take_the_fast_path(tmp_path):
    path = str(tmp_path / "mul")
    hj.export(lambda x, y: x * y + 1, X, np.float32(2), path=path, target="vmvx")
    f = hj.load(path)
    assert f._fast is not None
    out = f(X, np.float32(2))
    assert type(out) is hj.Array and out.shape == X.shape
    assert_close(out, X * 2 + 1)
    assert_close(f(out, np.float32(3)), (X * 2 + 1) * 3 + 1)           # an hj.Array goes back in
    assert_close(f(X, 2.0), X * 2 + 1)                                 # a Python float: the checked path
    with pytest.raises(hj.ShapeError, match="argument x: expected shape"):
        f(X[:1], np.float32(2))
    with pytest.raises(hj.DTypeError, match="argument y: expected dtype float32"):
        f(X, np.float64(2))
    assert "mul.json: <lambda>(x: float32[2, 3], y: float32[]) -> result: float32[2, 3] on vmvx" in repr(f)


def test_portable_cpu_records_generic(tmp_path):
    with pytest.raises(ValueError, match="unknown target 'tpu'; known: cpu, vmvx, cuda"):
        hj.export(model, PARAMS, X, SCALE, path=str(tmp_path / "f"), target="tpu")
    with pytest.raises(ValueError, match="portable=True"):
        hj.export(model, PARAMS, X, SCALE, path=str(tmp_path / "f"), target=hj.pipeline.cpu(), portable=True)
    assert "--iree-llvmcpu-target-cpu=generic" in hj.pipeline.cpu("generic").flags


# --- other processes and tools ---

FRESH = """
import sys, numpy as np, hlojit as hj
f = hj.load(sys.argv[1])
d = np.load(sys.argv[2])
out = f({"w": d["w"], "b": d["b"]}, d["x"], float(d["scale"]))
np.savez(sys.argv[3], y0=np.asarray(out[0]), y1=np.asarray(out[1]))
print(type(out).__name__, type(out[0]).__name__, f.driver)
"""


def test_load_in_a_fresh_process(cpu_artifact, tmp_path):
    path, _ = cpu_artifact
    np.savez(tmp_path / "in.npz", x=X, scale=SCALE, **PARAMS)
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", FRESH, path, str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["tuple", "Array"]
    here = hj.load(path)(PARAMS, X, SCALE)
    there = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(there["y0"], np.asarray(here[0]))
    np.testing.assert_array_equal(there["y1"], np.asarray(here[1]))


def _tool(name):
    found = artifacts.tool(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def _run_module(vmfb, manifest, inputs, folder):
    """Run a vmfb with iree-run-module, inputs named as in the manifest; the outputs as numpy arrays."""
    args = [_tool("iree-run-module"), f"--module={vmfb}", "--device=local-sync", f"--function={manifest.entry_point}"]
    for i, leaf in enumerate(manifest.inputs):
        np.save(folder / f"in{i}.npy", np.asarray(inputs[leaf.name], leaf.dtype))
        args.append(f"--input=@{folder / f'in{i}.npy'}")
    args += [f"--output=@{folder / f'out{i}.npy'}" for i in range(len(manifest.outputs))]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [np.load(folder / f"out{i}.npy") for i in range(len(manifest.outputs))]


def test_iree_run_module_runs_the_vmfb(cpu_artifact, tmp_path):
    path, manifest = cpu_artifact
    inputs = {"params['w']": PARAMS["w"], "params['b']": PARAMS["b"], "x": X, "scale": SCALE}
    outs = _run_module(path + ".vmfb", manifest, inputs, tmp_path)
    ours = hj.load(path)(PARAMS, X, SCALE)
    for tool_out, ours_out, leaf in zip(outs, ours, manifest.outputs):
        assert tool_out.shape == leaf.shape and tool_out.dtype == leaf.dtype
        np.testing.assert_allclose(tool_out, np.asarray(ours_out), rtol=1e-6, atol=1e-6)


def test_iree_compile_reproduces_the_vmfb(cpu_artifact, tmp_path):
    path, manifest = cpu_artifact
    with open(path + ".json") as f:
        flags = json.load(f)["target"]["flags"]
    command = shlex.split(manifest.reproduce)
    assert command[1:-2] == [os.path.basename(path) + ".mlir", *flags]
    rebuilt = tmp_path / "rebuilt.vmfb"
    done = subprocess.run([_tool("iree-compile"), path + ".mlir", *flags, "-o", str(rebuilt)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    inputs = {"params['w']": PARAMS["w"], "params['b']": PARAMS["b"], "x": X, "scale": SCALE}
    for got, want in zip(_run_module(str(rebuilt), manifest, inputs, tmp_path), reference(PARAMS, X, SCALE)):
        assert_close(got, want, scale=10)
    # the .mlir keeps the locations the in-process compile saw, so llvm-cpu output is byte for byte the same
    assert hashlib.sha256(rebuilt.read_bytes()).hexdigest() == manifest.vmfb_sha256


def test_vmvx_mlir_carries_the_targets_workarounds(tmp_path):
    """vmvx rounds float -> int to nearest (an IREE bug that hlojit rewrites around before compiling): the
    .mlir must hold the rewrite, or iree-compile on it would build a vmfb that computes something else."""
    x = np.array([-1.7, -0.5, 0.5, 2.5, 3.9], np.float32)
    path = str(tmp_path / "trunc")
    manifest = hj.export(lambda x: x.astype(np.int32), x, path=path, target="vmvx")
    # (the truncation's x < 0 then becomes bounds on the bits: subnormal_compares.py)
    assert manifest.rewrites == {"truncate_before_float_to_int": 1, "float_compares_by_bits": 1}
    want = x.astype(np.int32)
    np.testing.assert_array_equal(np.asarray(hj.load(path)(x)), want)
    rebuilt = tmp_path / "rebuilt.vmfb"
    done = subprocess.run([_tool("iree-compile"), path + ".mlir", *manifest.target["flags"], "-o", str(rebuilt)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(_run_module(str(rebuilt), manifest, {"x": x}, tmp_path)[0], want)


def test_cuda_artifact_builds_here_and_says_it_needs_a_gpu(tmp_path):
    path = str(tmp_path / "sub" / "f")                                   # folders are created
    manifest = hj.export(lambda x: ops.exp(x) * 2, X, path=path, target="cuda")
    assert os.path.getsize(path + ".vmfb") == manifest.vmfb_bytes > 0
    assert manifest.target["name"] == "cuda" and manifest.target["driver"] == "cuda"
    assert "--iree-cuda-target=sm_80" in manifest.target["flags"] and manifest.host is None
    try:
        f = hj.load(path)
    except hj.BackendError as e:                                         # no GPU here: clear at load
        assert "needs an NVIDIA GPU" in str(e) and "cuda" in str(e)
    else:                                                                # a GPU machine: it runs
        assert_close(f(X), np.exp(X) * 2, scale=10)


# --- calls that do not fit ---

def test_call_errors_name_the_argument(cpu_artifact):
    path, _ = cpu_artifact
    f = hj.load(path)
    bad_w = {"w": np.zeros((3, 5), np.float32), "b": PARAMS["b"]}
    with pytest.raises(hj.ShapeError,
                       match=r"argument params\['w'\]: expected shape \(3, 4\).*got shape \(3, 5\)") as e:
        f(bad_w, X, SCALE)
    assert isinstance(e.value, ValueError)
    with pytest.raises(hj.DTypeError, match=r"argument x: expected dtype float32.*got float64") as e:
        f(PARAMS, X.astype(np.float64), SCALE)
    assert isinstance(e.value, TypeError)
    with pytest.raises(hj.SignatureError, match="missing a required argument: 'scale'"):
        f(PARAMS, X)
    with pytest.raises(hj.SignatureError, match="too many positional arguments"):
        f(PARAMS, X, SCALE, "relu")
    with pytest.raises(hj.SignatureError, match=r"act was static at export \(act='tanh'\)"):
        f(PARAMS, X, SCALE, act="relu")
    with pytest.raises(hj.SignatureError, match=r"argument params has the structure \{'w': float32\[3, 4\]\}, "
                                                r"the artifact .* takes \{'b': float32\[4\], 'w': float32\[3, 4\]\}"):
        f({"w": PARAMS["w"]}, X, SCALE)
    with pytest.raises(hj.SignatureError, match="not a list"):
        f(PARAMS, X.tolist(), SCALE)
    with pytest.raises(hj.DTypeError, match=r"argument scale: expected float32\[\], got a Python bool"):
        f(PARAMS, X, True)
    with pytest.raises(hj.SignatureError, match="argument x: expected an array float32"):
        f(PARAMS, "x", SCALE)


# --- files that do not fit ---

def test_tampered_vmfb_is_refused(cpu_artifact, tmp_path):
    copy = _copy(cpu_artifact[0], tmp_path)
    data = bytearray(open(copy + ".vmfb", "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(copy + ".vmfb", "wb").write(bytes(data))
    with pytest.raises(hj.ArtifactError, match=r"copy\.vmfb is corrupted or was replaced: its sha256 is"):
        hj.load(copy)


def test_other_iree_release_is_refused(cpu_artifact, tmp_path):
    copy = _copy(cpu_artifact[0], tmp_path)
    _edit_manifest(copy, lambda m: m["iree"].update(runtime="3.12.0"))
    with pytest.raises(hj.ArtifactError, match=r"runtime 3\.12\.0 at export.*this process runs IREE runtime "
                                               r".*not portable across IREE releases"):
        hj.load(copy)
    _edit_manifest(copy, lambda m: m["iree"].update(compiler="3.14.0", runtime=m["iree"]["compiler"]))
    with pytest.raises(hj.ArtifactError, match=r"compiled by IREE compiler 3\.14\.0"):
        hj.load(copy)


def test_host_cpu_code_checks_this_cpu(cpu_artifact, tmp_path):
    copy = _copy(cpu_artifact[0], tmp_path)
    _edit_manifest(copy, lambda m: m["host"].update(cpu_features=m["host"]["cpu_features"] + ["zz-new-isa"]))
    with pytest.raises(hj.BackendError, match="this CPU lacks zz-new-isa.*portable=True"):
        hj.load(copy)
    _edit_manifest(copy, lambda m: m["host"].update(arch="riscv64"))
    with pytest.raises(hj.BackendError, match="holds riscv64 code"):
        hj.load(copy)


def test_missing_or_foreign_files(cpu_artifact, tmp_path):
    with pytest.raises(hj.ArtifactError, match="no artifact at .*nothing.json does not exist"):
        hj.load(tmp_path / "nothing")
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(hj.ArtifactError, match="not an hlojit artifact manifest"):
        hj.load(tmp_path / "other")
    (tmp_path / "broken.json").write_text('{"format": ')
    with pytest.raises(hj.ArtifactError, match="not a readable manifest"):
        hj.load(tmp_path / "broken")
    copy = _copy(cpu_artifact[0], tmp_path)
    os.remove(copy + ".vmfb")
    with pytest.raises(hj.ArtifactError, match="the vmfb of .* cannot be read"):
        hj.load(copy)
    assert artifacts.read_manifest(copy).name == "model"            # the manifest alone still reads


def _nested(depth):
    tree = "*"
    for _ in range(depth):
        tree = {"tuple": [tree]}
    return tree


def _set(*keys_and_value):
    """An edit that sets manifest[k0][k1]... to the value (the last argument)."""
    *keys, value = keys_and_value

    def edit(m):
        for k in keys[:-1]:
            m = m[k]
        m[keys[-1]] = value
    return edit


# (what was edited, the edit, the field the ArtifactError names): each loaded, or crashed, before
MANIFEST_EDITS = [
    ("output shape grown", _set("outputs", 0, "shape", [67108864]), r"outputs\[0\]\.shape: .*67108864.*\[2, 4\]"),
    ("output dtype", _set("outputs", 1, "dtype", "int32"), r"outputs\[1\]\.dtype: .*int32.*float32"),
    ("input shape", _set("inputs", 2, "shape", [2, 300]), r"inputs\[2\]\.shape"),
    ("input dtype", _set("inputs", 0, "dtype", "float64"), r"inputs\[0\]\.dtype: .*float64"),
    ("an output dropped", lambda m: m["outputs"].pop(), r"outputs: the manifest lists 1, the vmfb's main has 2"),
    ("dtype unknown", _set("inputs", 0, "dtype", "object"), r"inputs\[0\]\.dtype: .*not a dtype"),
    ("shape negative", _set("inputs", 0, "shape", [-4]), r"inputs\[0\]\.shape\[0\]: expected an integer"),
    ("weak not a bool", _set("inputs", 3, "weak", "yes"), r"inputs\[3\]\.weak"),
    ("target missing", lambda m: m.pop("target"), r"target: missing"),
    ("target a string", _set("target", "cpu"), r"target: expected an object"),
    ("unknown target", _set("target", "name", "tpu"), r"target\.name: unknown target .*tpu"),
    ("target vmvx with cpu flags", _set("target", "name", "vmvx"), r"target\.flags: they do not compile for vmvx"),
    ("driver", _set("target", "driver", None), r"target\.driver"),
    ("flags a string", _set("target", "flags", "--x"), r"target\.flags: expected a list"),
    ("flag not a flag", _set("target", "flags", 0, 7), r"target\.flags\[0\]"),
    ("cpu", _set("target", "cpu", "generic"), r"target\.cpu: .*generic.*host"),
    ("portable", _set("target", "portable", True), r"target\.portable"),
    ("host removed from host code", _set("host", None), r"host: expected an object"),
    ("host a list", _set("host", [1]), r"host: expected an object"),
    ("host features a string", _set("host", "cpu_features", "avx2"), r"host\.cpu_features: expected a list"),
    ("host arch", _set("host", "arch", 64), r"host\.arch: expected a string"),
    ("arguments null", _set("arguments", None), r"arguments: expected a list"),
    ("argument kind", _set("arguments", 0, "kind", "bogus"), r"arguments\[0\]\.kind"),
    ("argument name", _set("arguments", 1, "name", "1x"), r"arguments\[1\]\.name"),
    ("arguments out of order", _set("arguments", 0, "kind", "keyword_only"), r"arguments: they make no Python"),
    ("deeply nested arguments", _set("arguments", 1, "tree", _nested(150)), r"arguments\[1\]\.tree: nested"),
    ("arguments tree malformed", _set("arguments", 1, "tree", {"set": []}), r"arguments\[1\]\.tree: not a pytree"),
    ("arguments hold fewer leaves", _set("arguments", 0, "tree", "*"), r"arguments: .*3 leaves, for 4 inputs"),
    ("out_tree a leaf", _set("out_tree", "*"), r"out_tree: 1 leaves, for 2 outputs"),
    ("iree null", _set("iree", None), r"iree: expected an object"),
    ("iree runtime", _set("iree", "runtime", 3.13), r"iree\.runtime: expected a string"),
    ("work", _set("work", "big"), r"work: expected an integer"),
    ("statics", _set("statics", [1]), r"statics: expected an object"),
    ("rewrites", _set("rewrites", {"x": "1"}), r"rewrites\.x: expected an integer"),
    ("sha256", _set("vmfb_sha256", 5), r"vmfb_sha256: expected a string"),
    ("name", _set("name", 3), r"name: expected a string"),
    ("entry point", _set("entry_point", "nope"), r"entry_point: the vmfb has no function 'nope'"),
    ("unknown field", _set("extra", 1), r"extra: not a field of this format"),
    ("a field missing", lambda m: m.pop("rewrites"), r"rewrites: missing"),
]


@pytest.mark.parametrize("edit, field", [pytest.param(e, f, id=i) for i, e, f in MANIFEST_EDITS])
def test_edited_manifest_is_refused_naming_the_field(cpu_artifact, tmp_path, edit, field):
    copy = _copy(cpu_artifact[0], tmp_path)
    _edit_manifest(copy, edit)
    with pytest.raises(hj.ArtifactError, match=r"copy\.json is damaged or was edited: " + field):
        hj.load(copy)


def test_unreadable_manifests_and_planted_files(cpu_artifact, tmp_path):
    copy = _copy(cpu_artifact[0], tmp_path)
    _edit_manifest(copy, _set("arguments", 1, "tree", "DEEP"))     # too deep for json.dump to write it
    text = (tmp_path / "copy.json").read_text()
    (tmp_path / "copy.json").write_text(text.replace('"DEEP"', '{"tuple": [' * 400 + '"*"' + ']}' * 400))
    with pytest.raises(hj.ArtifactError, match=r"arguments\[1\]\.tree: nested more than 200 JSON levels"):
        hj.load(copy)                                               # was a RecursionError
    (tmp_path / "copy.json").write_text('{"format": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(hj.ArtifactError, match="nested too deeply"):
        hj.load(copy)
    os.remove(copy + ".json")
    os.mkfifo(copy + ".json")                                       # a FIFO: refused, never waited on
    with pytest.raises(hj.ArtifactError, match="not a regular file"):
        hj.load(copy)
    os.remove(copy + ".json")
    _edit_manifest(_copy(cpu_artifact[0], tmp_path), _set("vmfb_bytes", 10))
    with pytest.raises(hj.ArtifactError, match=r"corrupted or was replaced.*the manifest says .*\(10 bytes\)"):
        hj.load(copy)


def test_too_deep_a_pytree_is_refused_at_export(tmp_path):
    deep = X
    for _ in range(120):
        deep = (deep,)
    with pytest.raises(ValueError, match=r"cannot be exported.*arguments\[0\]\.tree: nested"):
        hj.export(lambda t: 2.0, deep, path=str(tmp_path / "deep"), target="vmvx")


def test_exported_files_have_the_umasks_modes(tmp_path):
    for umask, mode in ((0o022, 0o644), (0o002, 0o664)):
        old = os.umask(umask)
        try:
            hj.export(lambda x: x + 1, X, path=str(tmp_path / f"f{umask:o}"), target="vmvx")
        finally:
            os.umask(old)
        for suffix in (".vmfb", ".mlir", ".json"):
            assert os.stat(tmp_path / f"f{umask:o}{suffix}").st_mode & 0o777 == mode, (umask, suffix)
    assert sorted(os.listdir(tmp_path)) == sorted(f"f{u}{s}" for u in ("22", "2") for s in (".json", ".mlir", ".vmfb"))


def test_locations_do_not_carry_this_machines_folders(cpu_artifact, tmp_path):
    here = os.path.abspath(__file__)
    path, _ = cpu_artifact
    mlir = open(path + ".mlir").read()
    assert os.path.basename(here) + '":' in mlir and here not in mlir and REPO not in mlir
    assert here.encode() not in open(path + ".vmfb", "rb").read()                   # nor the vmfb's debug info
    kept = str(tmp_path / "kept")
    hj.export(model, PARAMS, X, SCALE, path=kept, target="vmvx", absolute_paths=True)
    assert f'"{here}":' in open(kept + ".mlir").read()


# --- the serialisable pytree structure ---

def test_pytree_json_round_trip():
    tree = ({"w": 1, "b": [2, None, (3,)], 5: 4, 1.5: 0}, 7, [], ())
    leaves, treedef = pytree.flatten(tree)
    encoded = json.loads(json.dumps(pytree.to_json(treedef)))
    assert pytree.from_json(encoded) == treedef
    paths = []
    pytree.flatten(tree, paths=paths, path="a")
    assert pytree.leaf_paths(treedef, "a") == paths
    assert pytree.describe(pytree.flatten((1, [2, None]))[1]) == "(*, [*, None])"
    with pytest.raises(ValueError, match=r"dict key \(1, 2\)"):
        pytree.to_json(pytree.flatten({(1, 2): 0})[1])
    with pytest.raises(ValueError, match="not a pytree structure"):
        pytree.from_json({"set": []})


def test_cpu_exports_the_flag_set_calls_compile_with(monkeypatch, tmp_path):
    """export(target="cpu") compiled with the plain data-tiling flags, whatever this machine's tuning chose for its
    calls (pipeline/tuning.py; on the Zen 3 of 2026-12-07 its microbenchmarks ran 4.1x slower that way): the
    artifact "for this machine's CPU: fastest" was not what its calls ran."""
    backend = hj.backends.get("iree:cpu")
    assert backend.target.flag_set == "data-tiling"       # the suite's pin (conftest)
    monkeypatch.setattr(backend, "_target", hj.pipeline.cpu(flag_set="data-tiling+matmul-kernels"))
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    manifest = hj.export(lambda x, y: x @ y, a, a, path=str(tmp_path / "product"), target="cpu")
    assert manifest.rewrites.get("matmuls_by_kernel") == 1
    np.testing.assert_allclose(np.asarray(hj.load(str(tmp_path / "product"))(a, a)), a @ a, rtol=1e-4, atol=1e-3)
