"""Execution backends, chosen by name: `iree:cpu` (default), `iree:vmvx`, `iree:cuda`, `reference`.

A backend's `load(program)` returns an executable: `executable(flat_leaves) -> [hj.Array]`.
"""
from __future__ import annotations

import os

from ..errors import BackendError
from ..pipeline import targets
from .array import Array

DEFAULT = "iree:cpu"
NAMES = ("iree:cpu", "iree:vmvx", "iree:cuda", "reference")
_CACHE: dict[str, object] = {}


def get(name: str | None = None):
    """The backend called `name`, else $HLOJIT_BACKEND, else iree:cpu."""
    name = name or os.environ.get("HLOJIT_BACKEND") or DEFAULT
    if name not in _CACHE:
        if name == "reference":
            from .reference import ReferenceBackend
            _CACHE[name] = ReferenceBackend()
        elif name.startswith("iree:") and name[5:] in targets.TARGETS:
            from .iree import IreeBackend
            _CACHE[name] = IreeBackend(name, targets.get(name[5:]))
        else:
            raise BackendError(f"unknown backend {name!r}; known backends: {', '.join(NAMES)}")
    return _CACHE[name]


__all__ = ["Array", "DEFAULT", "NAMES", "get"]
