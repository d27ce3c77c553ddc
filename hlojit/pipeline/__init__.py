"""IREE compilation: targets and their flags, compiling a StableHLO `Program` into a vmfb, the persistent
compile cache."""
from . import cache
from .cache import compile_cached
from .compiler import Compiled, compile_program
from .program import Program
from .targets import TARGETS, Target, cpu, cuda, vmvx

__all__ = ["cache", "compile_cached", "Compiled", "compile_program", "Program", "TARGETS", "Target", "cpu", "cuda", "vmvx"]
