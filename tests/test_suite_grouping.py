"""The suite's own scheduling: the tests of one table group share one compiled module, so under pytest-xdist
(`--dist loadgroup`, the default addopts) they must all run on one worker, or each worker compiles it again.
conftest.py marks them with `xdist_group`; xdist reads those marks into the node ids ("...@group") in its own
collection hook, so conftest's must run first (it did not: every group compiled once per worker)."""
import pytest


@pytest.mark.parametrize("backend, group", [("reference", "grouping-check")])
def test_a_group_marks_its_node_id_for_xdist(request, backend, group):
    if not hasattr(request.config, "workerinput") or not request.config.getvalue("loadgroup"):
        pytest.skip("only meaningful on an xdist worker scheduling by group")
    assert request.node.nodeid.endswith("@test_suite_grouping:reference:grouping-check"), request.node.nodeid
