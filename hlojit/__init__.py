"""hlojit: trace Python array functions into StableHLO, JIT-compile them with IREE, run them fast.

    import hlojit as hj
    from hlojit import ops          # or: import hlojit.ops

    @hj.jit
    def f(x):
        return ops.relu(2 * x + 1)
"""
import sys

from . import errors
from .errors import (ArtifactError, BackendError, CheckpointError, CompileError, ConfigError, DifferentiationError,
                     DTypeError, HlojitError, ShapeError, SignatureError, TracingError)
from .backends import Array, set_cpu_threads   # set_cpu_threads: local-task's workers
from .frontend import CacheInfo, Exec, Lowered, RecompileWarning, Tensor, device_put, dtypes, jit, ops, promotion
# `import hlojit.ops`, `from hlojit.ops import exp` and `import hlojit.numpy as hnp` (jax.numpy's role) name the one
# module, and its namespaces of numpy's (ops.linalg, ops.fft) import under those names too
numpy = ops
for _name in ("ops", "numpy"):
    sys.modules[f"{__name__}.{_name}"] = ops
    for _sub in ("linalg", "fft"):
        sys.modules[f"{__name__}.{_name}.{_sub}"] = getattr(ops, _sub)
from .frontend import eager                    # ops outside a trace run at once: hj.eager.cache_info()
from .frontend.dtypes import (bfloat16, bool_, complex64, complex128, float16, float32, float64, int8, int16,
                              int32, int64, uint8, uint16, uint32, uint64)
from .frontend.from_mlir import from_mlir        # hj.from_mlir(text_or_path, entry="main", backend=None)
from .frontend.export import Loaded, export, load   # hj.export(f, x, path="out/f"), hj.load("out/f")
from .frontend.autodiff import custom_vjp, grad, jvp, stop_gradient, value_and_grad, vjp   # reverse mode
from .frontend.batching import vmap             # hj.vmap(f, in_axes=0, out_axes=0, axis_size=None)
from .frontend.jacobians import hessian, jacfwd, jacrev   # built on vmap of the vjp / jvp
from .pipeline import cache                     # hj.cache.info(), hj.cache.clear(): the persistent compile cache
from . import testing                           # hj.testing.assert_targets_agree(fn, *args)
from . import tree, tree_util                   # hj.tree.map / flatten / register_dataclass ...; jax.tree_util's names
from . import random                            # hj.random.key(0), split, fold_in, uniform, normal, randint ...
from . import nn                                # hj.nn.dense, conv2d, batch_norm, attention, losses, initialisers
from . import optim                             # hj.optim.sgd / adam / adamw and learning-rate schedules
from . import checkpoint                        # hj.save_checkpoint(path, tree), hj.load_checkpoint(path, like)
from .checkpoint import load as load_checkpoint, save as save_checkpoint
from . import distributed                       # hj.distributed: MPI collectives, data-parallel training

__version__ = "0.1.0"

__all__ = [
    # compiling and running
    "Array", "CacheInfo", "Exec", "Lowered", "RecompileWarning", "Tensor", "device_put", "eager", "jit", "ops",
    "set_cpu_threads",
    # dtypes and promotion
    "dtypes", "promotion", "bfloat16", "bool_", "complex64", "complex128", "float16", "float32", "float64", "int8",
    "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    # the pipeline: StableHLO in, artifacts out, the compile cache, cross-target checks
    "from_mlir", "export", "load", "Loaded", "cache", "testing",
    # pytrees
    "tree", "tree_util",
    # autodiff, randomness and training
    "custom_vjp", "grad", "jvp", "stop_gradient", "value_and_grad", "vjp", "vmap", "jacfwd", "jacrev", "hessian",
    "random", "nn", "optim",
    "checkpoint", "load_checkpoint", "save_checkpoint", "distributed",
    # errors
    "errors", "ArtifactError", "BackendError", "CheckpointError", "CompileError", "ConfigError",
    "DifferentiationError", "DTypeError", "HlojitError", "ShapeError", "SignatureError", "TracingError",
]
