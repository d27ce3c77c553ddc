"""Compilation targets: a name, the IREE runtime driver that runs its code, and compiler flags.

The flags for `cpu` are the ones measured fastest on this machine (../shared/IREE_NOTES.md): the host's
CPU features (12x on ResNet-18) and data tiling (matmul 70 -> 180 GFLOP/s). f64 is kept f64: IREE's
default silently demotes it to f32.
"""
from __future__ import annotations

import dataclasses

COMMON_FLAGS = ("--iree-input-type=stablehlo", "--iree-input-demote-f64-to-f32=false")


@dataclasses.dataclass(frozen=True)
class Target:
    name: str
    driver: str                  # iree.runtime driver: local-task, local-sync, cuda
    flags: tuple[str, ...]

    def with_flags(self, *flags: str) -> "Target":
        """The same target with extra compiler flags (later flags win)."""
        return dataclasses.replace(self, flags=self.flags + tuple(flags))


def cpu(cpu_name: str = "host") -> Target:
    """llvm-cpu; `cpu_name="generic"` (or a named CPU) for artifacts meant for other machines."""
    return Target("cpu", "local-task", COMMON_FLAGS + (
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu",
        f"--iree-llvmcpu-target-cpu={cpu_name}",
        "--iree-opt-data-tiling",
    ))


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
