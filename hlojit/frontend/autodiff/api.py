"""`grad`, `value_and_grad`, `vjp`, `jvp`, `stop_gradient`, `custom_vjp`: JAX's names and semantics.

Inside a trace, differentiating `f` remembers where the current block ends, calls `f` on fresh handles
of its inputs (the forward ops land in the block), then walks the new ops in reverse (`core.backward`).
Outside a trace (numpy inputs) each of them jits itself on the default backend and runs, as JAX's eager
mode would: there is no separate eager engine to keep in step.

Integer and bool inputs get zero gradients of their own shape and dtype (JAX gives float0); `jvp` is
the transpose of `vjp` (the vjp of the linear map ct -> vjp(ct)), so it costs a backward pass of the
backward pass and needs no rules of its own.
"""
from __future__ import annotations

import functools

from ...errors import DTypeError, ShapeError, TracingError
from .. import dtypes, pytree, trace as _trace
from ..ops._core import as_tensor, convert, describe
from ..tensor import Tensor
from . import core

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "stop_gradient", "custom_vjp"]


def _eager(fn):
    """fn jitted once on the default backend, for calls with arrays outside a trace."""
    from ..jit import jit
    return jit(fn)


def _argnums(op: str, argnums, n: int) -> tuple:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not isinstance(i, int) or not -n <= i < n:
            raise TracingError(f"{op}: argnums {argnums!r} is out of range for {n} positional arguments "
                               f"at {_trace.user_site()}")
    return tuple(i % n for i in nums)


class _Linearized:
    """f traced on fresh handles of the differentiated inputs, ready to run its backward pass."""

    def __init__(self, op, fn, args, kwargs, argnums, has_aux):
        self.op = op
        block = core.current_block()
        args = list(args)
        self.trees, self.inputs = [], []
        for i in argnums:
            leaves, tree = pytree.flatten(args[i])
            handles = [as_tensor(x, op) for x in leaves]
            handles = [core.identity(t) if dtypes.is_inexact(t.dtype) else t for t in handles]
            args[i] = pytree.unflatten(tree, handles)
            self.trees.append(tree)
            self.inputs.append(handles)
        start = len(block.operations)
        result = fn(*args, **kwargs)
        self.aux = None
        if has_aux:
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TracingError(f"{op}: with has_aux=True the function must return a pair (output, aux), "
                                   f"not {type(result).__name__} (at {_trace.user_site()})")
            result, self.aux = result
        leaves, self.out_tree = pytree.flatten(result)
        self.outputs = [as_tensor(x, op) for x in leaves]
        self.out = pytree.unflatten(self.out_tree, self.outputs)
        self.ops = core.block_ops(block, start)
        self.trace = _trace.current()

    def backward(self, cts) -> list:
        """Cotangents of the outputs (Tensors or None) -> one gradient tree per differentiated argument."""
        if _trace.current() is not self.trace:
            raise TracingError(f"{self.op}: a vjp function runs only inside the trace that made it "
                               f"(at {_trace.user_site()})")
        cotangents = {}
        for out, ct in zip(self.outputs, cts):
            if ct is not None and dtypes.is_inexact(out.dtype):
                core.accumulate(cotangents, out.value, ct, "the output")
        leaves = [t for handles in self.inputs for t in handles]
        core.backward(self.ops, cotangents, [t.value for t in leaves if dtypes.is_inexact(t.dtype)])
        grads = []
        for tree, handles in zip(self.trees, self.inputs):
            grads.append(pytree.unflatten(tree, [cotangents.get(t.value) if dtypes.is_inexact(t.dtype) and
                                                 t.value in cotangents else core.zeros_like(t) for t in handles]))
        return grads


def value_and_grad(fn, argnums=0, has_aux: bool = False):
    """f -> (f(*args), the gradient of f's float scalar output with respect to args[argnums]) (one tree,
    or a tuple of trees when argnums is a tuple); with has_aux, f returns (output, aux) and this gives
    ((output, aux), gradient)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if _trace.current() is None:
            return run.eager(*args, **kwargs)
        nums = _argnums("grad", argnums, len(args))
        lin = _Linearized("grad", fn, args, kwargs, nums, has_aux)
        if len(lin.outputs) != 1 or lin.outputs[0].shape != ():
            shown = ", ".join(describe(t) for t in lin.outputs) or "nothing"
            raise ShapeError(f"grad: {getattr(fn, '__name__', 'the function')} must return one scalar, not "
                             f"{shown} (at {_trace.user_site()}); reduce it (e.g. .sum()) or use hj.vjp")
        out = lin.outputs[0]
        if not dtypes.is_float(out.dtype):
            raise DTypeError(f"grad: the output must be a float scalar, not {describe(out)} "
                             f"(at {_trace.user_site()})")
        grads = lin.backward([_ones(out)])
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((lin.out, lin.aux) if has_aux else lin.out), grads
    run.eager = _LazyJit(run)
    return run


def _ones(t: Tensor) -> Tensor:
    from ..ops import ones
    return ones(t.shape, t.dtype)


class _LazyJit:
    """Builds the jit of a function on its first eager call (jit inspects the function's signature)."""

    def __init__(self, fn):
        self.fn, self.exec = fn, None

    def __call__(self, *args, **kwargs):
        if self.exec is None:
            self.exec = _eager(self.fn)
        return self.exec(*args, **kwargs)


def grad(fn, argnums=0, has_aux: bool = False):
    """The gradient of f's float scalar output with respect to args[argnums] (int or tuple); with
    has_aux, f returns (output, aux) and grad(f) returns (gradient, aux)."""
    both = value_and_grad(fn, argnums, has_aux)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if _trace.current() is None:
            return run.eager(*args, **kwargs)
        (value, grads) = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    run.eager = _LazyJit(run)
    return run


def vjp(fn, *primals, has_aux: bool = False):
    """(f(*primals), vjp_fn) where vjp_fn(cotangent of the output) gives a tuple of cotangents, one per
    primal (JAX's vjp); with has_aux, (output, vjp_fn, aux). Outside a trace, vjp_fn is jitted too."""
    if _trace.current() is None:
        return _eager_vjp(fn, primals, has_aux)
    lin = _Linearized("vjp", fn, primals, {}, tuple(range(len(primals))), has_aux)

    def vjp_fn(cotangent):
        leaves, tree = pytree.flatten(cotangent)
        if tree != lin.out_tree:
            raise TracingError(f"vjp: the cotangent is {pytree.describe(tree)} but the output is "
                               f"{pytree.describe(lin.out_tree)} (at {_trace.user_site()})")
        cts = []
        for out, ct in zip(lin.outputs, leaves):
            ct = as_tensor(ct, "vjp")
            if ct.shape != out.shape:
                raise ShapeError(f"vjp: a cotangent {describe(ct)} for an output {describe(out)} "
                                 f"(at {_trace.user_site()})")
            cts.append(convert(ct, out.dtype))
        return tuple(lin.backward(cts))
    return (lin.out, vjp_fn, lin.aux) if has_aux else (lin.out, vjp_fn)


def _eager_vjp(fn, primals, has_aux):
    forward = _eager(lambda *p: fn(*p))
    result = forward(*primals)
    backward = _eager(lambda p, ct: vjp(fn, *p, has_aux=has_aux)[1](ct))

    def vjp_fn(cotangent):
        return backward(tuple(primals), cotangent)
    if has_aux:
        return result[0], vjp_fn, result[1]
    return result, vjp_fn


def jvp(fn, primals, tangents):
    """(f(*primals), the directional derivative along `tangents`) (JAX's jvp), computed as the vjp of
    the (linear) vjp: reverse mode twice, no forward-mode rules."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TracingError(f"jvp: {len(primals)} primals but {len(tangents)} tangents (at {_trace.user_site()})")
    if _trace.current() is None:
        return _eager(lambda p, t: jvp(fn, p, t))(primals, tangents)
    out, vjp_fn = vjp(fn, *primals)
    leaves, tree = pytree.flatten(out)
    from ..ops import zeros
    seed = pytree.unflatten(tree, [zeros(t.shape, t.dtype) for t in leaves])
    _, transpose = vjp(vjp_fn, seed)
    (tangent_out,) = transpose(tangents)
    return out, tangent_out


def stop_gradient(x):
    """x, through which no gradient flows (the forward is unchanged; cotangents stop here). Pytrees too."""
    if _trace.current() is None:
        return x
    leaves, tree = pytree.flatten(x)
    out = []
    for leaf in leaves:
        t = as_tensor(leaf, "stop_gradient")
        if dtypes.is_inexact(t.dtype):
            held = core.identity(t)
            core.add_region(core.Region("stop_gradient", [t.value], [held.value], [], lambda res, cts: [None]))
            t = held
        out.append(t)
    return pytree.unflatten(tree, out)


class custom_vjp:  # noqa: N801  (JAX's name)
    """A function with a hand-written derivative (JAX's custom_vjp):

        @hj.custom_vjp
        def f(x): ...
        def f_fwd(x): return f(x), residuals        # residuals: a pytree of arrays
        def f_bwd(residuals, g): return (gx,)       # one cotangent (or None) per argument
        f.defvjp(f_fwd, f_bwd)
    """

    def __init__(self, fn):
        self.fn, self.fwd, self.bwd = fn, None, None
        functools.update_wrapper(self, fn)
        self._eager = _LazyJit(self)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if _trace.current() is None:
            return self._eager(*args)
        if self.fwd is None:
            raise TracingError(f"custom_vjp {self.__name__}: call f.defvjp(fwd, bwd) before using it "
                               f"(at {_trace.user_site()})")
        in_leaves, in_tree = pytree.flatten(args)
        inputs = [as_tensor(x, self.__name__) for x in in_leaves]
        result = self.fwd(*pytree.unflatten(in_tree, inputs))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TracingError(f"custom_vjp {self.__name__}: fwd must return (output, residuals) "
                               f"(at {_trace.user_site()})")
        out, res = result
        out_leaves, out_tree = pytree.flatten(out)
        outputs = [core.identity(as_tensor(x, self.__name__)) for x in out_leaves]
        res_leaves, res_tree = pytree.flatten(res)
        residuals = [as_tensor(x, self.__name__) for x in res_leaves]
        name, user_bwd, n_args = self.__name__, self.bwd, len(args)

        def bwd(res_tensors, cts):
            grads = user_bwd(pytree.unflatten(res_tree, res_tensors), pytree.unflatten(out_tree, cts))
            if not isinstance(grads, (tuple, list)) or len(grads) != n_args:
                raise TracingError(f"custom_vjp {name}: bwd must return a tuple of {n_args} cotangents, one "
                                   f"per argument, not {type(grads).__name__}")
            flat, offset = [], 0
            for arg, g in zip(args, grads):
                arg_tree = pytree.flatten(arg)[1]
                n = len(pytree.flatten(arg)[0])
                taken, offset = inputs[offset:offset + n], offset + n
                if g is None:
                    flat += [None] * n
                    continue
                g_leaves, g_tree = pytree.flatten(g)
                if g_tree != arg_tree:
                    raise TracingError(f"custom_vjp {name}: bwd returned {pytree.describe(g_tree)} for an "
                                       f"argument {pytree.describe(arg_tree)}")
                flat += [convert(as_tensor(x, name), t.dtype) for x, t in zip(g_leaves, taken)]
            return flat
        core.add_region(core.Region(name, [t.value for t in inputs], [t.value for t in outputs],
                                    [t.value for t in residuals], bwd))
        return pytree.unflatten(out_tree, outputs)
