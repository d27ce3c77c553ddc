"""Run under `mpiexec -n 2` by tests/test_distributed.py: one rank fails in the way MODE says, after rank 0 has
written a checkpoint; the other rank is waiting in a collective and must not wait forever.

    mpiexec -n 2 python tests/distributed/faults.py MODE FOLDER
    MODE: raise, exit (os._exit), sys.exit, kill (SIGKILL), hang, mismatch (different shapes)
"""
import os
import signal
import sys
import time

import numpy as np

import hlojit as hj

dist = hj.distributed


def main(mode, folder):
    world = dist.initialize(timeout=3)
    params = dist.broadcast({"w": np.full(4, world.rank + 1.0, np.float32)})
    dist.save_checkpoint(os.path.join(folder, "ckpt.npz"), params)
    if world.rank == 1:
        if mode == "raise":
            raise ValueError("rank 1 failed on purpose")
        if mode == "exit":
            os._exit(3)
        if mode == "sys.exit":
            sys.exit(3)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "hang":
            time.sleep(120)
    shape = (4,) if world.rank == 0 or mode != "mismatch" else (5,)
    dist.all_reduce({"w": np.ones(shape, np.float32)})
    print(f"rank {world.rank}: past the collective", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
