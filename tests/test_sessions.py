"""A compiler session loads the dialects hlojit makes ops of by name, and no more (pipeline/sessions.py says why):
an op created in a dialect that is not loaded would be an unregistered op, which verifies and then fails in IREE."""
import pathlib
import re

import pytest

from hlojit.dialects import registry
from hlojit.pipeline import sessions, targets

PACKAGE = pathlib.Path(sessions.__file__).parents[1]
CREATED_BY_NAME = re.compile(r'create\(\s*"([a-z_]+)\.([a-z_.]+)"')    # ir.Operation.create("flow.tensor.bitcast", ..)


def _created_by_name():
    """(dialect, op name) of every op hlojit's own code makes by name: the registry's ops (the dialect builders
    make them) and the names written out in a `create(` call (text that is parsed loads its own dialects)."""
    found = {(name.split(".")[0], name) for name in registry.RECORDS}
    for path in PACKAGE.rglob("*.py"):
        found |= {(m.group(1), f"{m.group(1)}.{m.group(2)}") for m in CREATED_BY_NAME.finditer(path.read_text())}
    return found


@pytest.fixture(scope="module")
def session():
    """One new session for the file (IREE never frees a session: each costs ~3.3 MB for the process's life)."""
    return sessions.new_session(targets.get("cpu").flags, threaded=False)


def test_a_new_session_has_every_op_hlojit_makes_by_name_registered(session):
    created = _created_by_name()
    assert {"stablehlo", "chlo", "func", "flow", "vm"} <= {dialect for dialect, _ in created}   # the scan works
    for dialect, name in sorted(created):
        assert dialect in sessions.CREATED_DIALECTS, f"hlojit makes {name} by name: add {dialect!r} to " \
                                                     f"sessions.CREATED_DIALECTS"
        assert session.context.is_registered_operation(name), name


def test_a_new_session_leaves_other_dialects_unloaded(session):
    assert not session.context.is_registered_operation("spirv.IAdd")     # loaded only if IREE's passes need it
