"""Compilation targets: a name, the IREE runtime driver that runs its code, compiler flags, and the flags
to fall back on where IREE cannot compile a module with those.

`cpu` has several candidate flag sets (CPU_FLAG_SETS), and which is fastest depends on the CPU: on an
Intel AVX-512 machine IREE's inner-tiled matmuls won (ResNet-18 b8 forward 392 -> 319 ms), on an AMD
Zen 3 (AVX2) they lost to plain data tiling (546 against 422 ms) and plain data tiling plus IREE's
Winograd rewrite of 3x3 convolutions won (350 ms). So no flag set here is "the fast one": `cpu()` is the
plain data-tiling set, and the `iree:cpu` backend asks pipeline/tuning.py for this machine's measured
choice. Every set always has the host's CPU features (3-4x on ResNet-18) and data tiling (matmuls
1.4-3x). A set IREE cannot compile a module with falls back to plain data tiling, and that to no data
tiling (compiler.with_fallback); a data-tiled compile refused for one known reason is first tried again with
its remedy (`rescue`). f64 is kept f64: IREE's default silently demotes it to f32.
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
    flag_set: str = ""           # the name of the candidate flag set (CPU_FLAG_SETS) these flags are, if any
    # how the flag set was chosen (tuning.py): shown by explain and HLOJIT_LOG; no part of equality or keys
    note: str = dataclasses.field(default="", compare=False)

    @property
    def label(self) -> str:
        """`cpu[data-tiling]`: the name and the flag set (and `+unfused-multi-use` where rescued), for messages."""
        flag_set = self.flag_set + ("+unfused-multi-use" if UNFUSED_MULTI_USE[0] in self.flags else "")
        return f"{self.name}[{flag_set}]" if flag_set else self.name

    def with_flags(self, *flags: str) -> "Target":
        """The same target with extra compiler flags (later flags win), its fallback too."""
        fallback = self.fallback.with_flags(*flags) if self.fallback else None
        return dataclasses.replace(self, flags=self.flags + tuple(flags), fallback=fallback)


PLAIN_DATA_TILING = ("--iree-opt-data-tiling",)
WINOGRAD = ("--iree-preprocessing-pass-pipeline=builtin.module(util.func("
            "iree-linalg-ext-convert-conv2d-to-winograd{replace-all-convs=true}))",)
# The candidates for `cpu`, by name: the extra flags of each. IREE's Winograd rewrite reaches the
# channels-last 3x3 stride-1 convolutions (pipeline/layout.py makes every convolution channels last);
# with the inner-tiled flags it does not compile (a batch_matmul encoding), so it is no candidate there.
CPU_FLAG_SETS = {
    "data-tiling": PLAIN_DATA_TILING,
    "data-tiling+winograd": PLAIN_DATA_TILING + WINOGRAD,
    "inner-tiled": ("--iree-global-opt-data-tiling", "--iree-llvmcpu-enable-inner-tiled"),
    # plain data tiling with large f32 products as hlojit's own dispatch (matmul_kernel.py, a target rewrite)
    "data-tiling+matmul-kernels": PLAIN_DATA_TILING,
}
DEFAULT_CPU_FLAG_SET = "data-tiling"    # what IREE compiles every module with: the fallback of the others


def cpu(cpu_name: str = "host", flag_set: str = DEFAULT_CPU_FLAG_SET) -> Target:
    """llvm-cpu with one of CPU_FLAG_SETS; `cpu_name="generic"` (or a named CPU) for artifacts meant for other
    machines. The `iree:cpu` backend uses the set tuning.py measured fastest on this machine instead."""
    if flag_set not in CPU_FLAG_SETS:
        raise ValueError(f"unknown cpu flag set {flag_set!r}; known: {', '.join(CPU_FLAG_SETS)}")
    llvm_cpu = LLVM_CPU_FLAGS + (f"--iree-llvmcpu-target-cpu={cpu_name}",)
    # the last resort: no data tiling, which IREE 3.13 compiles where its data tiling fails (bool and 16-bit
    # float matmuls beside others in one module: "failed to legalize unresolved target materialization")
    bare = Target("cpu", "local-task", llvm_cpu, flag_set="no-data-tiling")
    plain = Target("cpu", "local-task", llvm_cpu + PLAIN_DATA_TILING, fallback=bare, flag_set=DEFAULT_CPU_FLAG_SET)
    if flag_set == DEFAULT_CPU_FLAG_SET:
        return plain
    return Target("cpu", "local-task", llvm_cpu + CPU_FLAG_SETS[flag_set], fallback=plain, flag_set=flag_set)


# IREE 3.13's dispatch creation fuses a value that has several users into its consumers' dispatch, which then
# writes several results; where that dispatch unpacks a data-tiled product, llvm-cpu vectorises whole tiles and
# refuses them: "One or more operations with large vector sizes (16384 bytes) were found". `tanh(x @ w + b)`
# returned beside `x @ w + b` (128 x 128 by 128 x 512) failed so, as did JAX's own transformer-block training step
# through hj.from_mlir (two attention products sharing an operand), on every data-tiled flag set, and each
# compiled with no data tiling at all: the JAX step 67 ms a call against 39 ms compiled data-tiled without that
# fusion (2026-12-07, Zen 3). So a data-tiled cpu compile refused for it is tried again without multi-use fusion
# (`rescue`) before the fallback. Not everywhere: only the modules it fails change.
UNFUSED_MULTI_USE = ("--iree-dispatch-creation-fuse-multi-use=false",)
LARGE_VECTORS = "operations with large vector sizes"


def rescue(target: Target, error: str) -> Target | None:
    """The target again without IREE's multi-use fusion where `error` (a CompileError's text) is llvm-cpu's
    large-vector refusal of a data-tiled compile that had it; else None (the fallback is next)."""
    if LARGE_VECTORS not in error:
        return None
    return _unfused(target)


def _unfused(target: Target) -> Target | None:
    if target.name != "cpu" or not data_tiled(target) or UNFUSED_MULTI_USE[0] in target.flags:
        return None
    return dataclasses.replace(target, flags=target.flags + UNFUSED_MULTI_USE)


def attempts(target: Target | None):
    """Every target a compile for `target` may end with, in the order tried: it, its rescue, its fallback ..."""
    while target is not None:
        yield target
        unfused = _unfused(target)
        if unfused is not None:
            yield unfused
        target = target.fallback


def attempt_of(target: Target, made_by: Target) -> int:
    """Which of attempts(target) `made_by` is (the persistent cache records it): 0 where it is not one."""
    return next((i for i, candidate in enumerate(attempts(target)) if candidate == made_by), 0)


# The first build of tiered compilation (tiered.py): what compiled fastest and still runs correctly. Measured in
# compiler CPU seconds (in-process, 2-core Zen 3, load ~15), ResNet-18 b8 forward: data tiling 11.7, none 9.9,
# --iree-opt-level=O0 9.0, O0 without const-eval 9.1, --iree-llvmcpu-mlir-opt-level=O0 10.4, LLVM loop/SLP
# vectorisation and unrolling off 9.8 (vmvx ran for minutes); its training step: data tiling 37.2, O0 35.0.
# IREE 3.13 has no knob that makes codegen much cheaper: the time is per executable (88 and 344 here),
# translating and serialising each, on both cores already (sessions.py). O0 runs the forward about as fast
# as data tiling, the training step about 2x slower (its backward matmuls untiled) until the swap.
QUICK_FLAGS = ("--iree-opt-level=O0",)
QUICK = "quick"


def quick(target: Target) -> Target | None:
    """The quick build of a cpu target (the same CPU, QUICK_FLAGS instead of its flag set); None for targets
    that have none (vmvx and cuda compile once)."""
    if target.name != "cpu":
        return None
    flags = LLVM_CPU_FLAGS + (f"--iree-llvmcpu-target-cpu={cpu_name_of(target)}",) + QUICK_FLAGS
    return Target("cpu", target.driver, flags, flag_set=QUICK, note="tiered compilation's quick build")


def data_tiled(target: Target) -> bool:
    """Whether the target's flags turn on IREE's data tiling (every cpu flag set but the bare fallback and the
    quick build): some target rewrites work around its bugs only."""
    return any(f in ("--iree-opt-data-tiling", "--iree-global-opt-data-tiling") for f in target.flags)


def uses_matmul_kernels(target: Target) -> bool:
    """Whether the target's flag set has large f32 products compiled as matmul_kernel.py's dispatch."""
    return target.flag_set.endswith("+matmul-kernels")


def cpu_name_of(target: Target) -> str:
    """The `--iree-llvmcpu-target-cpu` a cpu target compiles for (`host`, `generic`, a CPU's name)."""
    return next(f.split("=", 1)[1] for f in target.flags if f.startswith("--iree-llvmcpu-target-cpu="))


def vmvx() -> Target:
    """IREE's portable VM-based target: slow, but runs everywhere the runtime does. Without IREE's const-eval:
    it JIT-compiles a module's constant expressions with llvm-cpu for the host, so a vmvx program's folded values
    were llvm-cpu's, not vmvx's (constant_folding.py folds hlojit's small ones itself, and vmvx packs no weights
    for it to pre-compute); its compile of test_ops' f16/bf16 binary table took 11.1 s with it, 10.0 without."""
    return Target("vmvx", "local-task", COMMON_FLAGS + (
        "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=vmvx",
        "--iree-opt-const-eval=false",
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
