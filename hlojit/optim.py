"""Optimizers as pure functions over parameter pytrees, in optax's shape:

    opt = hj.optim.adam(1e-3)                  # or adam(hj.optim.warmup_cosine_decay(0, 1e-3, 100, 5000))
    state = opt.init(params)                   # moments and the step count, a pytree of arrays
    params, state = opt.update(params, grads, state)

The step count lives in the state (an int32 scalar), so a learning-rate schedule is evaluated inside the
traced step and a whole training step (forward, backward, update) compiles into one `hj.jit` program with
no retracing from step to step. Called outside `hj.jit`, `update` runs as its own compiled program.

Updates compute in each parameter's dtype (moments have the parameter's dtype) and leave non-float
leaves (integer counters, masks) as they are. A schedule is any `f(step) -> learning rate`; the ones here
work on traced int32 steps and on Python/numpy ints alike (for plotting), with optax's formulas.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import DTypeError, ShapeError
from .frontend import dtypes, ops, pytree, trace
from .frontend.jit import Exec
from .frontend.ops import _core
from .frontend.ops._core import fail
from .frontend.tensor import Tensor

__all__ = ["Optimizer", "sgd", "adam", "adamw", "constant", "exponential_decay", "cosine_decay",
           "warmup_cosine_decay", "global_norm", "clip_by_global_norm"]


# --- learning-rate schedules ---------------------------------------------------------------------------

def _xp(step):
    """ops for a traced step (computing in float32), numpy for a concrete one (float64)."""
    if isinstance(step, Tensor):
        return ops, ops.astype(step, dtypes.float32)
    return np, np.float64(step)


def constant(value: float):
    """The same learning rate at every step."""
    def schedule(step):
        return value
    return schedule


def exponential_decay(init_value: float, decay_rate: float, transition_steps: int, staircase: bool = False,
                      transition_begin: int = 0, end_value: float | None = None):
    """init_value * decay_rate ** ((step - transition_begin) / transition_steps), held at init_value before
    transition_begin; staircase floors the exponent; end_value bounds the decay (optax.exponential_decay)."""
    if transition_steps <= 0 or decay_rate <= 0:
        fail(ValueError, "optim.exponential_decay", f"transition_steps and decay_rate must be positive, not "
                                                    f"{transition_steps} and {decay_rate}")

    def schedule(step):
        xp, t = _xp(step)
        exponent = xp.maximum(t - transition_begin, 0.0) / transition_steps
        if staircase:
            exponent = xp.floor(exponent)
        lr = init_value * xp.exp(exponent * math.log(decay_rate))   # decay_rate ** exponent
        if end_value is not None:
            lr = xp.maximum(lr, end_value) if decay_rate < 1 else xp.minimum(lr, end_value)
        return lr
    return schedule


def cosine_decay(init_value: float, decay_steps: int, alpha: float = 0.0):
    """init_value * ((1 - alpha) * (1 + cos(pi * min(step, decay_steps) / decay_steps)) / 2 + alpha):
    from init_value down to alpha * init_value over decay_steps, then held (optax.cosine_decay_schedule)."""
    if decay_steps <= 0:
        fail(ValueError, "optim.cosine_decay", f"decay_steps must be positive, not {decay_steps}")

    def schedule(step):
        xp, t = _xp(step)
        cosine = 0.5 * (1 + xp.cos(math.pi * xp.minimum(t, float(decay_steps)) / decay_steps))
        return init_value * ((1 - alpha) * cosine + alpha)
    return schedule


def warmup_cosine_decay(init_value: float, peak_value: float, warmup_steps: int, decay_steps: int,
                        end_value: float = 0.0):
    """Linear from init_value to peak_value over warmup_steps, then a cosine from peak_value to end_value
    ending at step decay_steps (which counts the warmup, as optax.warmup_cosine_decay_schedule's does)."""
    if not 0 <= warmup_steps < decay_steps:
        fail(ValueError, "optim.warmup_cosine_decay", f"needs 0 <= warmup_steps < decay_steps, got "
                                                      f"{warmup_steps} and {decay_steps}")

    def schedule(step):
        xp, t = _xp(step)
        warm = init_value + (peak_value - init_value) * t / max(warmup_steps, 1)
        into = xp.minimum(xp.maximum(t - warmup_steps, 0.0), float(decay_steps - warmup_steps))
        cosine = 0.5 * (1 + xp.cos(math.pi * into / (decay_steps - warmup_steps)))
        decayed = end_value + (peak_value - end_value) * cosine
        return xp.where(t < warmup_steps, warm, decayed)
    return schedule


def _schedule(learning_rate):
    return learning_rate if callable(learning_rate) else constant(float(learning_rate))


# --- gradient utilities ---------------------------------------------------------------------------------

def global_norm(tree):
    """sqrt of the sum of squares of every float leaf (float32 accumulation)."""
    leaves, _ = pytree.flatten(tree)
    total = 0.0
    for leaf in leaves:
        if dtypes.is_float(_dtype(leaf)):
            x = ops.astype(leaf, dtypes.float32)
            total = total + (x * x).sum()
    return ops.sqrt(total)


def clip_by_global_norm(tree, max_norm: float):
    """The tree scaled by min(1, max_norm / global_norm(tree)): the direction kept, the length bounded."""
    leaves, treedef = pytree.flatten(tree)
    factor = ops.minimum(1.0, max_norm / ops.maximum(global_norm(tree), 1e-30))
    return pytree.unflatten(treedef, [ops.astype(leaf * factor, _dtype(leaf)) if dtypes.is_float(_dtype(leaf))
                                      else leaf for leaf in leaves])


# --- optimizers -----------------------------------------------------------------------------------------

def _dtype(leaf):
    return leaf.dtype if hasattr(leaf, "dtype") else np.asarray(leaf).dtype


def _zeros_like(leaf):
    if isinstance(leaf, Tensor):
        return ops.zeros_like(leaf)
    return np.zeros(np.shape(leaf), _dtype(leaf))


class Optimizer:
    """`init(params) -> state` and `update(params, grads, state) -> (params, state)`.

    `moments` names the per-parameter buffers the state keeps (each shaped like params). Once per step,
    `prepare(lr, t)` turns the learning rate and the 1-based step number t (float32 scalars) into the
    scalars the rule needs (bias corrections...); `rule(p, g, buffers, scalars)` returns the new parameter
    and buffers for one float leaf."""

    def __init__(self, name: str, learning_rate, moments: tuple, rule, prepare=None):
        self.name, self.moments, self._rule = name, moments, rule
        self._prepare = prepare or (lambda lr, t: {"lr": lr})
        self.learning_rate = _schedule(learning_rate)
        self._compiled = Exec(self._traced_update)

    def __repr__(self):
        return f"hj.optim.{self.name}"

    def init(self, params) -> dict:
        """{"step": int32 0, each moment: zeros shaped like params}."""
        traced = trace.current() is not None
        state = {"step": ops.zeros((), dtypes.int32) if traced else np.zeros((), np.int32)}
        leaves, treedef = pytree.flatten(params)
        for name in self.moments:
            state[name] = pytree.unflatten(treedef, [_zeros_like(leaf) for leaf in leaves])
        return state

    def update(self, params, grads, state):
        """One step: the new params and state (traced inline inside hj.jit, compiled on its own outside)."""
        if trace.current() is None:
            return self._compiled(params, grads, state)
        return self._traced_update(params, grads, state)

    def _traced_update(self, params, grads, state):
        op = f"optim.{self.name}.update"
        p_leaves, treedef = pytree.flatten(params)
        paths: list = []
        g_leaves, g_treedef = pytree.flatten(grads, paths=paths)
        if g_treedef != treedef:
            fail(ValueError, op, f"grads have structure {pytree.describe(g_treedef)} but params have "
                                 f"{pytree.describe(treedef)}")
        if not isinstance(state, dict) or "step" not in state or any(m not in state for m in self.moments):
            fail(ValueError, op, f"state must be what {self.name}.init(params) returned (a dict with step and "
                                 f"{', '.join(self.moments) or 'no moments'}), not {type(state).__name__}")
        buffers = []
        for name in self.moments:
            leaves, bdef = pytree.flatten(state[name])
            if bdef != treedef:
                fail(ValueError, op, f"state[{name!r}] has structure {pytree.describe(bdef)} but params have "
                                     f"{pytree.describe(treedef)}: was the state made for other params?")
            buffers.append(leaves)
        # a barrier: when init ran in the same trace the step is a constant, and IREE would evaluate the
        # schedule (a cosine's exact argument reduction) at compile time, by JIT-compiling it: a minute
        step = _core.barrier(ops.astype(state["step"], dtypes.int32))
        lr = ops.astype(self.learning_rate(step), dtypes.float32)
        scalars = self._prepare(lr, ops.astype(step + 1, dtypes.float32))
        new_params, new_buffers = [], [[] for _ in self.moments]
        for i, (p, g, path) in enumerate(zip(p_leaves, g_leaves, paths)):
            p, g = ops.astype(p, _dtype(p)), ops.astype(g, _dtype(g))
            if p.shape != g.shape:
                fail(ShapeError, op, f"grads{path} has shape {g.shape} but params{path} has {p.shape}")
            if not dtypes.is_float(p.dtype):
                new_params.append(p)
                for j in range(len(self.moments)):
                    new_buffers[j].append(buffers[j][i])
                continue
            if not dtypes.is_float(g.dtype):
                fail(DTypeError, op, f"grads{path} is {g.dtype}, not a float")
            moments = [ops.astype(b[i], p.dtype) for b in buffers]
            # (IREE's data-tiled CPU build keeps the update out of the gradient's matmul: a pipeline rewrite,
            # compile_rewrites.matmul_updates_apart, which modules exported from JAX get too)
            new_p, moments = self._rule(p, ops.astype(g, p.dtype), moments, scalars)
            new_params.append(ops.astype(new_p, p.dtype))
            for j, m in enumerate(moments):
                new_buffers[j].append(ops.astype(m, p.dtype))
        new_state = {"step": step + 1}
        for name, leaves in zip(self.moments, new_buffers):
            new_state[name] = pytree.unflatten(treedef, leaves)
        return pytree.unflatten(treedef, new_params), new_state


def sgd(learning_rate=1e-2, momentum: float = 0.0, nesterov: bool = False, weight_decay: float = 0.0) -> Optimizer:
    """Stochastic gradient descent, PyTorch's and optax's form: g += weight_decay * p (L2, coupled);
    with momentum, v = momentum * v + g and the step is v (or g + momentum * v with Nesterov); p -= lr * step."""
    if nesterov and not momentum:
        fail(ValueError, "optim.sgd", "nesterov needs a momentum > 0")

    def rule(p, g, moments, scalars):
        lr = scalars["lr"]
        if weight_decay:
            g = g + weight_decay * p
        if not momentum:
            return p - lr * g, []
        v = momentum * moments[0] + g
        return p - lr * (g + momentum * v if nesterov else v), [v]
    return Optimizer(f"sgd(momentum={momentum}, nesterov={nesterov})" if momentum else "sgd", learning_rate,
                     ("momentum",) if momentum else (), rule)


def _adam_prepare(b1: float, b2: float):
    def prepare(lr, t):   # the reciprocals of the bias corrections 1 - b ** t (1 when b is 0), once a step
        return {"lr": lr, "r1": 1 / (1 - ops.exp(t * math.log(b1))) if b1 > 0 else lr * 0 + 1,
                "r2": 1 / (1 - ops.exp(t * math.log(b2))) if b2 > 0 else lr * 0 + 1}
    return prepare


def _adam_rule(b1: float, b2: float, eps: float, weight_decay: float):
    def rule(p, g, moments, scalars):
        """m̂ = mu * r1 and v̂ = nu * r2 (within an ulp of mu / c1, nu / c2): one division an element, not three.
        A divide is ~10x a multiply's cost on x86 (5 cycles a vector on Zen 3): the MLP's Adam step (670k
        parameters) spent ~0.5 ms of 7 in its update."""
        mu = b1 * moments[0] + (1 - b1) * g
        nu = b2 * moments[1] + (1 - b2) * (g * g)
        step = (mu * scalars["r1"]) / (ops.sqrt(nu * scalars["r2"]) + eps)
        if weight_decay:
            step = step + weight_decay * p
        return p - scalars["lr"] * step, [mu, nu]
    return rule


def adam(learning_rate=1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma & Ba, 2015) with bias-corrected moments: p -= lr * m̂ / (sqrt(v̂) + eps)."""
    return Optimizer("adam", learning_rate, ("mu", "nu"), _adam_rule(b1, b2, eps, 0.0), _adam_prepare(b1, b2))


def adamw(learning_rate=1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          weight_decay: float = 1e-4) -> Optimizer:
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019), as optax.adamw:
    p -= lr * (m̂ / (sqrt(v̂) + eps) + weight_decay * p)."""
    return Optimizer("adamw", learning_rate, ("mu", "nu"), _adam_rule(b1, b2, eps, weight_decay),
                     _adam_prepare(b1, b2))
