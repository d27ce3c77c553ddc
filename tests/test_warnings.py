"""Warnings hlojit gives point at the user's line, not at hlojit's own files."""
import warnings

import numpy as np

import hlojit as hj
from conftest import line_in


def test_recompile_warning_names_the_callers_file_and_line():
    f = hj.jit(lambda x: x + 1, backend="reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(8):
            f(np.zeros(n, np.float32))   # the line the warning names
    recompiles = [w for w in caught if issubclass(w.category, hj.RecompileWarning)]
    assert len(recompiles) == 1, [str(w.message) for w in caught]
    assert recompiles[0].filename == __file__
    assert recompiles[0].lineno == line_in(__file__, "the line the warning names")


def test_recompile_warning_through_compile_names_the_caller_too():
    f = hj.jit(lambda x: x * 2, backend="reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(8):
            f.compile(np.zeros(n, np.float32))
    assert [w.filename for w in caught if issubclass(w.category, hj.RecompileWarning)] == [__file__]
