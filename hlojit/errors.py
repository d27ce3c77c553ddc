"""Exceptions raised at the API boundary.

They subclass the builtin a user would expect (`ValueError` for shapes and values, `TypeError` for dtypes
and argument kinds), so `except ValueError` catches them naturally. Every stage may import this module.
"""
from __future__ import annotations


class HlojitError(Exception):
    """Base of every hlojit error."""


class ShapeError(HlojitError, ValueError):
    """Operand shapes do not fit the op (raised at trace time, naming the user's line)."""


class IndexOutOfRangeError(ShapeError, IndexError):
    """A static index is out of range for the axis it indexes (an `IndexError` too, as numpy raises)."""


class DTypeError(HlojitError, TypeError):
    """An operand's dtype is not one the op takes, or promotion is not allowed."""


class TracingError(HlojitError, TypeError):
    """The traced function did something a graph cannot express (e.g. `bool(tensor)`)."""


class SignatureError(HlojitError, TypeError):
    """A call does not fit the function: argument count, static arguments, unsupported argument kinds."""


class CompileError(HlojitError, RuntimeError):
    """IREE could not compile a module; the message holds the first diagnostic and the saved IR's path."""

    def __init__(self, message: str, *, diagnostics=(), ir_path: str | None = None):
        super().__init__(message)
        self.diagnostics = list(diagnostics)
        self.ir_path = ir_path


class ConfigError(HlojitError, ValueError):
    """An HLOJIT_* environment variable holds a value hlojit cannot use."""


class BackendError(HlojitError, ValueError):
    """An unknown backend name or a backend that cannot run here."""


class ArtifactError(HlojitError, ValueError):
    """An exported artifact is damaged, incomplete, or made by an IREE release this process cannot run."""


class CheckpointError(HlojitError, ValueError):
    """A checkpoint cannot be written or read, or does not fit the `like` tree it was loaded against."""


class DifferentiationError(TracingError):
    """Reverse mode cannot go through an op (no rule, or a loop whose trip count is unknown at trace time)."""
