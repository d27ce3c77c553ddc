"""Big programs compile as two halves at once, one per compile worker, and run one after the other.

Why: an IREE compile of a big module uses the second core only in part (its per-executable translation runs
on the MLIR context's threads; its other phases and the serialisation of the one linked executable run on
one). Measured on ResNet-18 b8's training step (2,596 ops, 648 dispatches, 2 vCPUs): 19.0 s compiled whole,
11.6 s as two halves compiled in two workers at once (9.4 and 11.6 s each). The halves run one after the
other: the values that cross the cut are the first half's results and the second half's last arguments, and
stay on the device between them (no copy). The cut costs one more invocation per call, and what crosses it is
written out and read back: so only programs whose calls take long compile as halves (MIN_WORK), and where many
bytes cross the cut (MAX_CROSSING_BYTES_PER_WORK: a training step, whose forward's activations cross to its
backward) the halves are `interim`: under tiered compilation (HLOJIT_TIERED=1) they are the quick build that gives
the first result while the whole program compiles in the background (pipeline/tiered.py) and replaces them;
otherwise such a program compiles whole. Measured (ResNet-18 b8's training step, 2 vCPUs, 2026-12-06): first call
12.8-14.2 s as halves against 17.0 whole, but on 2 cores the steps and the background compile slow each other
(steps ~1.2 s, the whole build replacing the halves 33 s after the first call; niced, it did not arrive within 40
steps), so 40 steps took 62 s from the first call against 51 compiled whole: not the default.

`halves(program, work)` cuts @main's top-level ops where the ops' weight (`weight`) reaches FIRST_SHARE: the first
half is @main's ops before the cut, returning every value the rest reads (the arguments it does not
read are dropped from its signature); the second is @main with those values as new last arguments and the ops
before the cut erased, so its results, donations and aliases are the program's own. Each half is an ordinary
Program: it is compiled, rewritten per target and cached on disk like any other.

    HLOJIT_COMPILE_HALVES=0     compile every program whole
"""
from __future__ import annotations

import dataclasses
import math
import os
import threading

from iree.compiler import ir

from ..dialects.types import dtype_of, shape_of
from . import cache, compile_worker
from .legalize import walk
from .program import Program, bytecode_of

# Ops (nested ones counted) from which a program compiles as halves: fewer compile in well under the seconds a
# second worker and a second invocation could save.
MIN_OPS = 120
# Work (backends/iree.py's work_estimate: elements made plus multiply-adds) from which a program compiles as halves.
# The halves run slower than the whole, by an amount that depends on the program, not on its size (interleaved in
# one process, local-task, medians, 2026-12-05): the transformer block's forward (0.9e9) +1-3%, the MLP Adam step
# (0.4e9) +4-8%, ResNet-18 b1's forward (1.8e9) +6%, b8's (1.5e10) 184.0 against 181.8 ms (the fastest calls
# even). A first call's seconds saved are worth a per cent of calls that take 100 ms and more; not of calls of a
# few ms. (The first calls saved, 2 vCPUs, separate processes: the transformer forward 2.2 s against 2.5-3.1.)
MIN_WORK = 10**10
# Bytes crossing the cut, per unit of that work, up to which a program compiles as halves. What crosses is written
# out by the first half and read back by the second, where the whole program could fuse or recompute it: ResNet-18
# b8's training step (4.4e10; 190-226 MiB cross, 4.5e-3 a unit) ran 1089 ms a step as halves against 1015 whole
# (best 998 against 925; local-task, interleaved, 2026-12-05 15:00; its first call 12.8-14.4 s against 16-21),
# the transformer step (1.5e-2) 36.4-38.5 ms against 33.2-34.8, where ResNet-18's forward (one 3 MiB value: 2.1e-4
# at b8) ran as fast and its first call took 2.2-2.6 s against 3.8-4.1 whole. So a training step, whose forward's
# activations cross to its backward, compiles whole (its halves are interim: tiered compilation's quick build).
MAX_CROSSING_BYTES_PER_WORK = 1e-3
# Where the cut goes, as a share of the ops' weight (`weight`): half, where a convolution weighs CONVOLUTION_WEIGHT
# ops, because its dispatches (im2col or IREE's own convolution, data-tiled) compile longer than others. Measured
# (2 vCPUs, both halves at once, the longer half's compile, runs interleaved, 2026-12-05): ResNet-18 b8's training
# step, whose forward holds 29 of its 33 convolutions, 11.2-11.8 s (cut at 0.39 of the plain op count) against
# 11.8-13.3 s cut at 0.45 of it (the rule before) and 12.4 s at 0.42 (a convolution as 20); its forward 2.2-2.35
# against 2.2-2.6; the transformer block's training step (no convolutions) 3.4-3.5 against 3.5-3.6. The halves'
# compile times spread by +-15% from run to run.
FIRST_SHARE = 0.5
CONVOLUTION_WEIGHT = 30


def enabled() -> bool:
    """Halves compile at once only in workers (compile_worker.py), and help only with a second core."""
    setting = os.environ.get("HLOJIT_COMPILE_HALVES", "1").strip().lower()
    return setting not in ("0", "false", "no", "off") and compile_worker.enabled() and (os.cpu_count() or 1) > 1


# Programs with control flow compile whole: IREE 3.13's loop bugs depend on the module around the loop (the first
# half of an eigh, ending in a while loop's results, compiled and then failed when called: "ref is null; while
# invoking native function hal.buffer_view.create"). The measured gains were on networks, which have none.
CONTROL_FLOW = frozenset({"stablehlo.while", "stablehlo.case", "stablehlo.if"})


def weight(op) -> int:
    """The op and every op nested in its regions, a convolution as CONVOLUTION_WEIGHT."""
    return sum(CONVOLUTION_WEIGHT if o.name == "stablehlo.convolution" else 1 for o in (op, *walk(op)))


@dataclasses.dataclass
class Halves:
    first: Program
    second: Program
    first_arguments: list[int]      # the program's argument indices the first half takes, in order
    # Too many bytes cross the cut (a training step's activations): the whole program runs faster, so the halves
    # run only until it has compiled in the background and replaces them (backends/iree.py).
    interim: bool = False


def halves(program: Program, work: int) -> Halves | None:
    """The program (`work`: backends/iree.py's work_estimate of it) as two halves, or None where it does too little
    work, has too few ops or control flow, or no cut leaves both halves work; `interim` where too many bytes would
    cross the cut."""
    every_op = [op.name for op in walk(_main(program.module))]
    if work < MIN_WORK or len(every_op) < MIN_OPS or any(name in CONTROL_FLOW for name in every_op):
        return None
    ops = [op.operation for op in _main(program.module).regions[0].blocks[0].operations]
    cut = _cut(ops)
    if cut is None:
        return None
    crossing = _crossing(ops, cut)
    interim = sum(_bytes(ops[i].results[j].type) for i, j in crossing) > MAX_CROSSING_BYTES_PER_WORK * work
    first, second = _copy(program.module), _copy(program.module)
    with first.context, ir.Location.unknown():
        first_arguments = _first_half(_main(first), cut, crossing)
    with second.context, ir.Location.unknown():
        _second_half(_main(second), cut, crossing)
    crossing_specs = [(shape_of(t), dtype_of(t)) for t in _result_types(_main(first))]
    return Halves(
        Program(first, [program.inputs[i] for i in first_arguments], crossing_specs, f"{program.name} (first half)",
                program.why),
        Program(second, list(program.inputs) + crossing_specs, list(program.outputs),
                f"{program.name} (second half)", program.why, program.donated, dict(program.aliases)),
        first_arguments, interim)


def _cut(ops: list) -> int | None:
    """How many of @main's top-level `ops` (the return last) the first half holds: those up to FIRST_SHARE of the
    weight; None where that leaves a half empty. (Tried: the cut within 0.4-0.6 of the weight that the fewest bytes
    cross, as each crossing value is written out and read back where the whole program could fuse it: the
    transformer step's halves ran as slowly as at half the weight, and ResNet-18's step compiled less evenly.)"""
    weights = [weight(op) for op in ops[:-1]]
    whole, cut, total = sum(weights), 0, 0
    while cut < len(weights) and total < FIRST_SHARE * whole:
        total += weights[cut]
        cut += 1
    return cut if 0 < cut < len(weights) else None


def _crossing(ops: list, cut: int) -> list[tuple[int, int]]:
    """(op position, result number) of each value of @main's top-level `ops` before `cut` that an op from `cut` on
    reads (or one nested in it)."""
    position = {op: i for i, op in enumerate(ops)}

    def top_position(op) -> int:
        op = op.operation
        while op not in position:
            op = op.parent.operation
        return position[op]
    return [(i, j) for i, op in enumerate(ops[:cut]) for j, result in enumerate(op.results)
            if any(top_position(use.owner) >= cut for use in result.uses)]


def _bytes(t) -> int:
    return math.prod(shape_of(t)) * dtype_of(t).itemsize


def _main(module: ir.Module):
    return next(op for op in module.body.operations if op.operation.name == "func.func"
                and ir.StringAttr(op.attributes["sym_name"]).value == "main")


def _result_types(main) -> list:
    return list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)


def _copy(module: ir.Module) -> ir.Module:
    """A copy in a context of its own (freed with it)."""
    context = ir.Context()
    context.load_all_available_dialects()
    return ir.Module.parse(bytecode_of(module), context=context)


def _first_half(main, cut: int, crossing: list) -> list[int]:
    """Make this copy's @main the ops before `cut`, returning the `crossing` values (_crossing); the argument
    indices it keeps: those its ops read."""
    block = main.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    ir.Operation.create("func.return", operands=[ops[i].results[j] for i, j in crossing],
                        ip=ir.InsertionPoint(ops[-1]))
    for op in reversed(ops[cut:]):
        op.erase()
    kept = [i for i, argument in enumerate(block.arguments) if any(True for _ in argument.uses)]
    for i in reversed(range(len(block.arguments))):
        if i not in kept:
            block.erase_argument(i)
    inputs = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [inputs[i] for i in kept], [ops[i].results[j].type for i, j in crossing]))
    for name in ("arg_attrs", "res_attrs"):     # donation marks and result attributes are the second half's
        if name in main.attributes:
            del main.attributes[name]
    return kept


def _second_half(main, cut: int, crossing: list):
    """Make this copy's @main take the crossing values as new last arguments, its ops before `cut` gone."""
    block = main.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    added = []
    for i, j in crossing:
        value = ops[i].results[j]
        argument = block.add_argument(value.type, ir.Location.unknown())
        value.replace_all_uses_with(argument)
        added.append(argument)
    for op in reversed(ops[:cut]):
        op.erase()
    function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        list(function_type.inputs) + [argument.type for argument in added], function_type.results))
    if "arg_attrs" in main.attributes:
        attributes = list(ir.ArrayAttr(main.attributes["arg_attrs"]))
        main.attributes["arg_attrs"] = ir.ArrayAttr.get(attributes + [ir.DictAttr.get({})] * len(added))


@dataclasses.dataclass
class CompiledHalves:
    """What `Exec.compile(...).compiled` tells of a program compiled as halves: the first half's and the
    second's Compiled in `parts` (each with its vmfb); seconds: the longer compile (they ran at once)."""
    parts: tuple
    target: object
    seconds: float
    dispatch_count: int | None
    cache_hit: bool


def compile_at_once(split: Halves, targets: tuple) -> CompiledHalves:
    """Both halves through the persistent cache, for their targets, each in a thread of its own (so in a
    worker of its own); the first error raised, once both are done."""
    results: list = [None, None]
    group = compile_worker.Group()

    def run(i, program, target):
        try:
            with compile_worker.compiling_for(group):
                results[i] = cache.compile_cached(program, target)
        except BaseException as e:    # noqa: BLE001 - raised in the caller's thread below
            results[i] = e
    threads = [threading.Thread(target=run, args=(i, program, target), name=f"hlojit compile {program.name}",
                                daemon=True)    # Ctrl-C or exit does not wait for them: their workers are killed
               for i, (program, target) in enumerate(zip((split.first, split.second), targets))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:   # Ctrl-C while they compile
        group.cancel()
        raise
    for result in results:
        if isinstance(result, BaseException):
            raise result
    counts = [c.dispatch_count for c in results]
    return CompiledHalves(tuple(results), results[1].target, max(c.seconds for c in results),
                          None if None in counts else sum(counts), all(c.cache_hit for c in results))
