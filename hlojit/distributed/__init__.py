"""`hj.distributed`: several processes, one job, on MPI (mpi4py): collectives over pytrees of arrays between
compiled calls, data-parallel training and sharded inference.

    mpiexec -n 2 python train.py          # or mpirun, or srun; plain `python train.py` is a world of 1

    import hlojit as hj
    hj.distributed.initialize()           # reads what the launcher set; idempotent
    hj.distributed.rank(), hj.distributed.size()
    total = hj.distributed.all_reduce({"w": w, "b": b}, op="sum")     # "mean", "max", "min"
    params = hj.distributed.broadcast(params, root=0)
    stacked = hj.distributed.all_gather(x)                            # a new leading axis of size size()

See docs/scaling.md for what scales how, measured, and where this goes next (several GPUs, NCCL).
"""
from .collectives import OPS, all_gather, all_reduce, broadcast, gather
from .inference import map_sharded
from .training import (DivergenceError, check_identical, data_parallel, load_checkpoint, save_checkpoint, shard,
                       shard_bounds)
from .world import DEFAULT_TIMEOUT, World, barrier, initialize, launcher_world, rank, size

__all__ = ["DEFAULT_TIMEOUT", "DivergenceError", "OPS", "World", "all_gather", "all_reduce", "barrier", "broadcast",
           "check_identical", "data_parallel", "gather", "initialize", "launcher_world", "load_checkpoint",
           "map_sharded", "rank", "save_checkpoint", "shard", "shard_bounds", "size"]
