"""The StableHLO of a failed compile is saved where nobody else can plant a link or read it (issue 10): in a
0700 folder of this user's under the temp folder, in a file created O_EXCL under a name nobody can guess."""
import os
import stat
import tempfile

import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit.pipeline import private_files, quirks

# a custom call IREE knows no target for: it fails to legalize
UNCOMPILABLE = """func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {
  %0 = stablehlo.custom_call @no_such_target(%x) : (tensor<2xf64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}"""


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    """The temp folder of this test's own (tempfile.gettempdir() answers it)."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("HLOJIT_CACHE", "0")      # failed compiles only: the cache's own checks stay out of it
    return root


def saved_ir() -> str:
    """Where a compile IREE cannot do (a custom call of no target, on iree:cpu) saved its StableHLO."""
    with pytest.raises(hj.CompileError, match="failed to legalize") as e:
        hj.from_mlir(UNCOMPILABLE, backend="iree:cpu")
    assert e.value.ir_path and e.value.ir_path in str(e.value)
    with open(e.value.ir_path) as f:
        assert "no_such_target" in f.read()
    return e.value.ir_path


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_ir_is_saved_in_a_folder_of_this_users_own(temp_root):
    umask = os.umask(0o022)
    try:
        path = saved_ir()
    finally:
        os.umask(umask)
    folder = temp_root / f"hlojit-{os.geteuid()}"
    assert os.path.dirname(path) == str(folder) and (mode(folder), mode(path)) == (0o700, 0o600)


def test_a_link_planted_at_the_last_name_is_not_followed(temp_root, tmp_path):
    first = saved_ir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.remove(first)
    os.symlink(victim, first)            # the name was predictable: the same IR, the same path
    second = saved_ir()
    assert second != first and victim.read_text() == "precious" and os.path.islink(first)


def plant_links(temp_root, tmp_path, monkeypatch):
    """The shared and the per-user folder names as links to folders of someone else's choosing."""
    for name in ("hlojit", f"hlojit-{os.geteuid()}"):
        (tmp_path / f"chosen-{name}").mkdir()
        os.symlink(tmp_path / f"chosen-{name}", temp_root / name)
    return temp_root / f"hlojit-{os.geteuid()}"


def open_to_everyone(temp_root, tmp_path, monkeypatch):
    folder = temp_root / f"hlojit-{os.geteuid()}"
    folder.mkdir(mode=0o700)
    folder.chmod(0o777)
    return folder


def owned_by_another_user(temp_root, tmp_path, monkeypatch):
    folder = temp_root / f"hlojit-{os.geteuid()}"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(private_files, "user_id", lambda: os.geteuid() + 1)
    return folder


@pytest.mark.parametrize("plant", [plant_links, open_to_everyone, owned_by_another_user])
def test_a_folder_someone_else_could_write_is_not_used(temp_root, tmp_path, monkeypatch, plant):
    refused = plant(temp_root, tmp_path, monkeypatch)
    path = saved_ir()
    fresh = os.path.dirname(path)
    assert fresh != str(refused) and os.path.dirname(fresh) == str(temp_root) and mode(fresh) == 0o700
    assert mode(path) == 0o600 and list(refused.iterdir()) == []
    assert not [p for p in tmp_path.glob("chosen-*/*")]


def test_a_target_rewrite_that_breaks_the_module_is_named_before_iree_runs(temp_root, monkeypatch):
    """IREE's passes do not verify what they are given (compiler.new_invocation): the module hlojit hands IREE
    is verified once, after the target rewrites, so a rewrite's bug is a CompileError that says so (the IR
    saved), not IREE failing somewhere later or miscompiling."""
    monkeypatch.setenv("HLOJIT_COMPILE_WORKER", "0")    # the patched rewrites run in this process

    def breaks_the_module(module, target):   # main promises f64 and returns an f32
        ret = module.body.operations[0].regions[0].blocks[0].operations[-1]
        with ir.InsertionPoint(ret), ir.Location.unknown(module.context):
            narrowed = ir.Operation.create("stablehlo.convert", operands=[ret.operands[0]],
                                           results=[ir.RankedTensorType.get([2], ir.F32Type.get())])
        ret.operands[0] = narrowed.result
        return {"breaks_the_module": 1}
    monkeypatch.setattr(quirks, "apply", breaks_the_module)
    good = UNCOMPILABLE.replace("stablehlo.custom_call @no_such_target(%x)", "stablehlo.negate %x")
    with pytest.raises(hj.CompileError, match=r"after the target rewrites \['breaks_the_module'\] is invalid") as e:
        hj.from_mlir(good, backend="iree:cpu")
    assert "type of return operand 0" in str(e.value)
    with open(e.value.ir_path) as f:
        assert "stablehlo.negate" in f.read()
