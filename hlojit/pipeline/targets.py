"""Compilation targets: a name, the IREE runtime driver that runs its code, compiler flags, and the flags
to fall back on where IREE cannot compile a module with those.

The flags for `cpu` are the ones measured fastest on this machine (`benchmarks/compiler_flags.py`, table
in docs/compiler_flags.md): the host's CPU features (3-4x on ResNet-18), data tiling (matmuls 1.4-3x),
and IREE's experimental inner-tiled lowering of data-tiled matmuls (matmuls 1.1-1.5x more, ResNet-18
batch 8 forward 392 -> 319 ms). IREE 3.13 cannot compile that for a matrix times a vector (a cpu quirk
turns those into reductions first); any module it still fails on is compiled again with the plain
data-tiling flags (compiler.with_fallback). f64 is kept f64: IREE's
default silently demotes it to f32.
"""
from __future__ import annotations

import dataclasses

COMMON_FLAGS = ("--iree-input-type=stablehlo", "--iree-input-demote-f64-to-f32=false")
LLVM_CPU_FLAGS = COMMON_FLAGS + ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu")


@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    driver: str                  # iree.runtime driver: local-task, local-sync, cuda
    flags: tuple[str, ...]
    fallback: "Target | None" = None   # the same target with flags IREE compiles every module with

    def with_flags(self, *flags: str) -> "Target":
        """The same target with extra compiler flags (later flags win), its fallback too."""
        fallback = self.fallback.with_flags(*flags) if self.fallback else None
        return dataclasses.replace(self, flags=self.flags + tuple(flags), fallback=fallback)


def cpu(cpu_name: str = "host") -> Target:
    """llvm-cpu; `cpu_name="generic"` (or a named CPU) for artifacts meant for other machines."""
    llvm_cpu = LLVM_CPU_FLAGS + (f"--iree-llvmcpu-target-cpu={cpu_name}",)
    plain = Target("cpu", "local-task", llvm_cpu + ("--iree-opt-data-tiling",))
    inner_tiled = ("--iree-global-opt-data-tiling", "--iree-llvmcpu-enable-inner-tiled")
    return Target("cpu", "local-task", llvm_cpu + inner_tiled, fallback=plain)


def vmvx() -> Target:
    """IREE's portable VM-based target: slow, but runs everywhere the runtime does."""
    return Target("vmvx", "local-task", COMMON_FLAGS + (
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=vmvx",
    ))


def cuda(arch: str = "sm_80") -> Target:
    """NVIDIA GPUs. sm_80 PTX also runs on Hopper (IREE 3.13 cannot target sm_90); compiles without a GPU."""
    return Target("cuda", "cuda", COMMON_FLAGS + (
        "--iree-hal-target-device=cuda",
        f"--iree-cuda-target={arch}",
    ))


TARGETS = {"cpu": cpu, "vmvx": vmvx, "cuda": cuda}


def get(name: str | Target) -> Target:
    if isinstance(name, Target):
        return name
    try:
        return TARGETS[name]()
    except KeyError:
        raise ValueError(f"unknown target {name!r}; known: {', '.join(TARGETS)}") from None
