"""Per-iteration cost of updating 2 rows of a loop-carried n x n matrix on iree:cpu, by formulation.

    python benchmarks/loop_updates.py [--sizes 64 256 1024] [--rounds 5] [--steps 192] [--variants ...]

Why: the linear algebra in hlojit/frontend/ops/linalg/ runs fori_loops (stablehlo.while) whose bodies
rewrite a few rows or columns of a big carried matrix (Givens rotations in eig, LU's row swaps, the
Householder column steps). If IREE copies the whole carry every iteration, a loop of n steps costs O(n^3)
memory traffic whatever the algorithm's own work.

Each variant is one jitted function of (x, steps): a fori_loop of `steps` iterations whose body reads rows
i and i+1 (i = step mod (n - 1)), rotates them by a fixed Givens rotation and writes them back, in one of
these forms:
  dus_block    one dynamic_update_slice of the 2 x n block (what the linalg code writes today)
  dus_const    the same, writing a constant block (no data read from the carry)
  dus_rows     two dynamic_update_slices of 1 x n each
  scatter      x.at[[i, i+1]].set(rows): one stablehlo.scatter
  select_mask  where(row == i, new_i, where(row == i+1, new_i1, x)): a full elementwise pass, no slice update
and dus_block (dus_const) again with the carry placed differently: its initial value computed by a dispatch
(2 * x) rather than the argument itself, and/or the loop's result consumed by one more dispatch (0.5 * it)
rather than returned as is (see looped), with 4 or 16 steps unrolled per loop iteration, and as a
while_loop of 4 or 16 guarded steps per iteration (see guarded_while: the form a loop whose trip count is
data, like eig's rotations, can take).
The time per iteration is the slope between `steps` and 0 steps (same compiled function, the loop bound is
traced), as CPU time (time.process_time: steadier than wall time on a shared 2-vCPU VM), the median over
interleaved rounds, with driver="local-sync" so the loop runs inline on one thread.

What it showed (2026-12-02, 2-vCPU VM at load 2-4, --rounds 3; us per step at n = 64 / 256 / 1024):
dus_block 10 / 23 / 632, scatter 18 / 31 / 663, select_mask 10 / 25 / 692, dus_block with a computed init
10 / 16 / 325, dus_block unroll 16 with a computed init 2.4 / 2.7 / 24, while guarded x16 5.4 / 5.6 / 17.5.
No formulation updates the carry in place: IREE 3.13's stream.async.execute regions are not tied to the
resources they capture (IREE's ScheduleExecution pass leaves tying them for later), so a dispatch that writes
the carry in place inside a loop iteration gets a copy-on-write clone of the whole carry, once per iteration
(however many updates the iteration makes, and with conds inside it). A carry whose initial value is the function's
argument (an imported buffer) costs a second full copy per iteration (dus_block vs its computed init).
What helps is fewer iterations: unrolled steps share one clone and one host round trip.
"""
import argparse
import statistics
import time

import numpy as np

import hlojit as hj
from hlojit import ops
from hlojit.frontend.control import fori_loop, while_loop
from hlojit.frontend.ops.indexing import dynamic_slice, dynamic_update_slice

COS, SIN = np.float32(0.8), np.float32(0.6)


def _rows(x, i):
    n = x.shape[1]
    pair = dynamic_slice(x, [i, 0], (2, n))
    top, bottom = pair[0:1], pair[1:2]
    return top, bottom, COS * top + SIN * bottom, COS * bottom - SIN * top


def dus_block(i, x):
    i = i % (x.shape[0] - 1)
    _, _, new_top, new_bottom = _rows(x, i)
    return dynamic_update_slice(x, ops.concatenate([new_top, new_bottom], axis=0), [i, 0])


def dus_const(i, x):
    i = i % (x.shape[0] - 1)
    return dynamic_update_slice(x, ops.full((2, x.shape[1]), 0.5, x.dtype), [i, 0])


def dus_rows(i, x):
    i = i % (x.shape[0] - 1)
    _, _, new_top, new_bottom = _rows(x, i)
    return dynamic_update_slice(dynamic_update_slice(x, new_top, [i, 0]), new_bottom, [i + 1, 0])


def scatter(i, x):
    i = i % (x.shape[0] - 1)
    _, _, new_top, new_bottom = _rows(x, i)
    return x.at[ops.stack([i, i + 1])].set(ops.concatenate([new_top, new_bottom], axis=0))


def select_mask(i, x):
    i = i % (x.shape[0] - 1)
    _, _, new_top, new_bottom = _rows(x, i)
    row = ops.arange(x.shape[0], dtype=i.dtype)[:, None]
    return ops.where(row == i, new_top, ops.where(row == i + 1, new_bottom, x))


def guarded_while(times):
    """A while_loop (a trip count known only on the device, as eig's QR sweeps) running `times` steps per
    iteration, each guarded: once the count is reached a step rotates by the identity (c = 1, s = 0) and
    writes its rows back unchanged, so the loop may overshoot by up to times - 1 steps."""
    def run(x, steps):
        def body(carry):
            k, x = carry
            for _ in range(times):
                active = k < steps
                i = k % (x.shape[0] - 1)
                pair = dynamic_slice(x, [i, 0], (2, x.shape[1]))
                top, bottom = pair[0:1], pair[1:2]
                c, s = ops.where(active, COS, 1), ops.where(active, SIN, 0)
                x = dynamic_update_slice(x, ops.concatenate([c * top + s * bottom, c * bottom - s * top], axis=0),
                                         [i, 0])
                k = ops.where(active, k + 1, k)
            return k, x
        return while_loop(lambda carry: carry[0] < steps, body, (ops.zeros((), steps.dtype), x + x))[1] * 0.5
    run.scale = 1.0
    return run


BODIES = {f.__name__: f for f in (dus_block, dus_const, dus_rows, scatter, select_mask)}


def unrolled(body, times):
    """`times` steps of body per iteration: steps i * times ... i * times + times - 1."""
    def steps(i, x):
        for u in range(times):
            x = body(i * times + u, x)
        return x
    return steps


def looped(body, computed_init=False, consumed_result=False, unroll=1):
    """The loop over `body`, carrying x itself (the argument) or 2 * x (a value a dispatch computed), and
    returning the loop's result itself or 0.5 * it (consumed by one more dispatch); `run.scale` says by how
    much its result differs from the plain loop's (the rotations are linear). With `unroll`, each iteration
    runs that many steps (and the loop steps / unroll iterations)."""
    def run(x, steps):
        loop_body = body if unroll == 1 else unrolled(body, unroll)
        result = fori_loop(0, steps // unroll, loop_body, x + x if computed_init else x)
        return result * 0.5 if consumed_result else result
    run.scale = (2.0 if computed_init else 1.0) * (0.5 if consumed_result else 1.0)
    return run


VARIANTS = {name: looped(body) for name, body in BODIES.items()}
VARIANTS.update({"dus_block computed init": looped(dus_block, computed_init=True),
                 "dus_block consumed result": looped(dus_block, consumed_result=True),
                 "dus_block both": looped(dus_block, computed_init=True, consumed_result=True),
                 "dus_const both": looped(dus_const, computed_init=True, consumed_result=True),
                 "dus_block unroll 4": looped(dus_block, unroll=4),
                 "dus_block unroll 4 computed init": looped(dus_block, computed_init=True, unroll=4),
                 "dus_block unroll 16 computed init": looped(dus_block, computed_init=True, unroll=16),
                 "while guarded x4 both": guarded_while(4), "while guarded x16 both": guarded_while(16)})


def cpu_seconds(fn, *args) -> float:
    start = time.process_time()
    np.asarray(fn(*args))
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=192, help="a multiple of 16 (the unrolled variants)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS))
    args = parser.parse_args()
    if args.steps % 16:
        parser.error("--steps must be a multiple of 16")
    print(f"| n | {' | '.join(args.variants)} |  (us per step, CPU time, median of {args.rounds})")
    print("|---|" + "---|" * len(args.variants))
    for n in args.sizes:
        x = hj.device_put(np.random.default_rng(0).standard_normal((n, n)).astype(np.float32))
        none, some = np.int32(0), np.int32(args.steps)
        fns = {name: hj.jit(VARIANTS[name], driver="local-sync") for name in args.variants}
        reference = np.asarray(fns[args.variants[0]](x, some))
        for name, fn in fns.items():                      # compile, and check the forms agree
            if "dus_const" not in name:
                np.testing.assert_allclose(np.asarray(fn(x, some)), reference * VARIANTS[name].scale, rtol=1e-4,
                                           atol=1e-4)
        per_step = {name: [] for name in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                per_step[name].append((cpu_seconds(fn, x, some) - cpu_seconds(fn, x, none)) / args.steps)
        cells = [f"{statistics.median(per_step[name]) * 1e6:.1f}" for name in fns]
        print(f"| {n} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
