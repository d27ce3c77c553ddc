"""IREE compilation: targets and their flags, compiling a StableHLO `Program` into a vmfb."""
from .compiler import Compiled, compile_program
from .program import Program
from .targets import TARGETS, Target, cpu, cuda, vmvx

__all__ = ["Compiled", "compile_program", "Program", "TARGETS", "Target", "cpu", "cuda", "vmvx"]
