"""hlojit: trace Python array functions into StableHLO, JIT-compile them with IREE, run them fast.

    import hlojit as hj
    from hlojit import ops

    @hj.jit
    def f(x):
        return ops.relu(2 * x + 1)
"""
from . import errors
from .backends import Array
from .errors import (BackendError, CompileError, DTypeError, HlojitError, ShapeError, SignatureError,
                     TracingError)
from .frontend import CacheInfo, Exec, Lowered, RecompileWarning, Tensor, dtypes, jit, ops, promotion
from .frontend.from_mlir import from_mlir   # hj.from_mlir(text_or_path, entry="main", backend=None)
from . import testing                       # hj.testing.assert_targets_agree(fn, *args)
from .errors import ConfigError
from .pipeline import cache                 # hj.cache.info(), hj.cache.clear(): the persistent compile cache
from .frontend.dtypes import (bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8,
                              uint16, uint32, uint64)

__version__ = "0.1.0"

__all__ = [
    "Array", "BackendError", "CacheInfo", "CompileError", "DTypeError", "Exec", "HlojitError", "Lowered",
    "RecompileWarning", "ShapeError", "SignatureError", "Tensor", "TracingError", "dtypes", "errors", "jit",
    "ops", "promotion", "bfloat16", "bool_", "float16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "uint16", "uint32", "uint64",
]
__all__ += ["cache", "ConfigError", "from_mlir", "testing"]
from .errors import ArtifactError
from .frontend.export import Loaded, export, load   # hj.export(f, x, path="out/f"), hj.load("out/f")
__all__ += ["ArtifactError", "Loaded", "export", "load"]
from . import random                        # hj.random.key(0), split, fold_in, uniform, normal, randint ...
__all__ += ["random"]
from .errors import DifferentiationError
from .frontend.autodiff import custom_vjp, grad, jvp, stop_gradient, value_and_grad, vjp   # reverse mode
__all__ += ["DifferentiationError", "custom_vjp", "grad", "jvp", "stop_gradient", "value_and_grad", "vjp"]
from . import nn                            # hj.nn.dense, conv2d, batch_norm, attention, losses, initialisers
__all__ += ["nn"]
from . import optim                         # hj.optim.sgd / adam / adamw and learning-rate schedules
__all__ += ["optim"]
from . import checkpoint                    # hj.save_checkpoint(path, tree), hj.load_checkpoint(path, like=None)
from .checkpoint import load as load_checkpoint, save as save_checkpoint
from .errors import CheckpointError
__all__ += ["checkpoint", "load_checkpoint", "save_checkpoint", "CheckpointError"]
from .backends import set_cpu_threads       # local-task's worker threads (process-wide; or HLOJIT_CPU_THREADS)
__all__ += ["set_cpu_threads"]
