"""Running a from_mlir module on an IREE target and on the reference backend, alone or with others in one
module: what test_legalize*.py compare their rewritten modules' numbers with."""
from __future__ import annotations

import numpy as np

import hlojit as hj
from hlojit import conformance
from hlojit.frontend.from_mlir import parse


def on_target_and_reference(text: str, inputs: list, backend: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(backend's output, the reference backend's) per result of the from_mlir module `text`."""
    return _beside_reference(_results(hj.from_mlir(text, backend=backend)(*inputs)), text, inputs)


def _beside_reference(actual: tuple, text: str, inputs: list) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each of `actual` paired with the reference backend's result of the module `text` alone."""
    expected = _results(hj.from_mlir(text, backend="reference")(*inputs))
    return [(np.asarray(a), np.asarray(e)) for a, e in zip(actual, expected)]


def _results(outputs) -> tuple:
    """A module's outputs as a tuple (from_mlir returns one result bare)."""
    return outputs if isinstance(outputs, tuple) else (outputs,)


_BUNDLES: dict = {}   # (id of a case list, backend) -> each case's outputs (a list of tuples), or what compiling raised


def bundled_on_target_and_reference(cases: list, index: int, backend: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """`on_target_and_reference` for case `index` of `cases` ((module text, inputs) each), where `backend` runs every
    case in ONE module (conformance.bundle_modules): an IREE compile costs ~0.35 s however small the module, and
    test_legalize's and test_legalize_indexing's ~30 modules took ~45 s of the suite's compiles on the two IREE
    targets. The reference backend runs the case's module alone; where the bundle does not compile or run, the
    case runs alone on `backend` too, so its verdict is the one it gets by itself. Tests using it are marked
    `shares_compiles` (one worker compiles a backend's bundle)."""
    text, inputs = cases[index]
    key = (id(cases), backend)
    if key not in _BUNDLES:
        try:
            bundled = conformance.bundle_modules([(case_text, "main") for case_text, _ in cases])
            outputs = hj.from_mlir(bundled, backend=backend)(*[x for _, case_inputs in cases for x in case_inputs])
            outputs, per_case = list(_results(outputs)), []
            for case_text, _ in cases:
                count = len(parse(case_text).outputs)
                per_case.append(tuple(outputs[:count]))
                outputs = outputs[count:]
            _BUNDLES[key] = per_case
        except Exception as e:  # noqa: BLE001  (each case then runs alone)
            _BUNDLES[key] = e
    if isinstance(_BUNDLES[key], Exception):
        return on_target_and_reference(text, inputs, backend)
    return _beside_reference(_BUNDLES[key][index], text, inputs)
