"""What the scripts under mpiexec compute on, and what tests/test_distributed.py checks them against."""
import ml_dtypes
import numpy as np

from hlojit import nn, ops


def rank_tree(r: int) -> dict:
    """A tree of every dtype family, different on each rank."""
    return {"f32": {"w": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) * (r + 1), "b": np.float32(r)},
            "f64": np.array([0.1, 0.2, 0.3]) * (r + 1), "i32": np.arange(5, dtype=np.int32) * (r + 1) - 3,
            "u8": np.array([r, 2 * r, 200], np.uint8) // (r + 1), "f16": np.full(4, r + 0.5, np.float16),
            "bf16": np.full(2, r + 1, ml_dtypes.bfloat16), "flags": np.array([r == 0, True, False])}


def sizes_for_bits():
    return (1, 1000, 100_003, 1_000_003)


def init_params(seed: int):
    rng = np.random.default_rng(seed)
    return [{"w": rng.standard_normal((6, 16)).astype(np.float32) * 0.4, "b": np.zeros(16, np.float32)},
            {"w": rng.standard_normal((16, 3)).astype(np.float32) * 0.4, "b": np.zeros(3, np.float32)}]


def loss(params, x, y):
    h = ops.tanh(nn.dense(x, params[0]["w"], params[0]["b"]))
    return nn.softmax_cross_entropy(nn.dense(h, params[1]["w"], params[1]["b"]), y)


def steps() -> int:
    return 5


def global_batch(step: int):
    rng = np.random.default_rng(100 + step)
    return rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8).astype(np.int32)
