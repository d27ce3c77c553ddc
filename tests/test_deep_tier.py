"""conftest's deep tier: what `pytest` leaves to `pytest --deep`, and that its table cannot go stale."""
import types

import pytest

import conftest


class _Config:
    def __init__(self, deep: bool):
        self.deep, self.deselected = deep, []
        self.hook = types.SimpleNamespace(pytest_deselected=lambda items: self.deselected.extend(items))

    def getoption(self, name):
        assert name == "--deep"
        return self.deep


def _item(module, name, originalname=None):
    return types.SimpleNamespace(module=types.SimpleNamespace(__name__=module), name=name,
                                 originalname=originalname or name.split("[")[0])


@pytest.fixture(autouse=True)
def _tier(monkeypatch):
    """A tier of two entries (the real one names more tests of these modules than _items makes)."""
    monkeypatch.setattr(conftest, "DEEP_TIER", {
        "test_kernels::test_lu_kernel_gives_lapack_pivots_and_factors[float32]": "[float64]",
        "test_ops_numpy::test_compiles_for_cuda": "test_ops_math's"})


def _items():
    return [_item("test_kernels", "test_lu_kernel_gives_lapack_pivots_and_factors[float32]"),
            _item("test_kernels", "test_lu_kernel_gives_lapack_pivots_and_factors[float64]"),
            _item("test_ops_numpy", "test_compiles_for_cuda[searching]")]


def test_without_deep_the_tier_is_deselected_and_counted():
    items, config = _items(), _Config(deep=False)
    conftest._split_off_the_deep_tier(config, items)
    assert [i.name for i in items] == ["test_lu_kernel_gives_lapack_pivots_and_factors[float64]"]
    assert [i.name for i in config.deselected] == ["test_lu_kernel_gives_lapack_pivots_and_factors[float32]",
                                                   "test_compiles_for_cuda[searching]"]   # a name: every parameter


def test_with_deep_everything_runs():
    items, config = _items(), _Config(deep=True)
    conftest._split_off_the_deep_tier(config, items)
    assert len(items) == 3 and config.deselected == []


def test_an_entry_naming_no_test_of_a_collected_module_is_an_error(monkeypatch):
    monkeypatch.setitem(conftest.DEEP_TIER, "test_kernels::test_renamed_away[float32]", "gone")
    with pytest.raises(pytest.UsageError, match="test_renamed_away"):
        conftest._split_off_the_deep_tier(_Config(deep=False), _items())
