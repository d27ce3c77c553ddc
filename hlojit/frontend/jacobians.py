"""`jacfwd`, `jacrev`, `hessian`: JAX's names, argnums, has_aux, pytrees in and out, and JAX's layout.

jacrev(f)(x) is vmap of f's vjp over the rows of an identity (one cotangent basis vector per output
element); jacfwd(f)(x) is vmap of f's jvp (here the transpose of the vjp) over the columns of an identity
(one tangent per input element). Either way the whole Jacobian is one batched program, and under jit one
compiled module. Each Jacobian leaf has the output leaf's shape followed by the input leaf's shape
(jacrev(f)(x) of f: R^{5x3} -> R^{5x2} has shape (5, 2, 5, 3)); with several outputs or inputs the leaves
are nested as JAX nests them: the output's tree outside, the inputs' tree (a tuple for tuple argnums)
inside. hessian(f) = jacfwd(jacrev(f)).
"""
from __future__ import annotations

import functools

from ..errors import DTypeError
from . import dtypes, ops, pytree, trace as _trace
from .autodiff.api import _argnums, _LazyJit, vjp
from .batching import vmap
from .ops._core import as_tensor, describe

__all__ = ["jacfwd", "jacrev", "hessian"]


def _basis(t):
    """The rows of the identity over t's elements, each shaped like t: (t.size, *t.shape)."""
    return ops.reshape(ops.eye(t.size, dtype=t.dtype), (t.size, *t.shape))


def _floats(op: str, leaves, what: str):
    for t in leaves:
        if not dtypes.is_float(t.dtype):
            raise DTypeError(f"{op}: {what} must be floats, not {describe(t)} (at {_trace.user_site()})")


class _Linear:
    """f's output, aux and vjp at the differentiated arguments, with the other arguments fixed."""

    def __init__(self, op, fn, args, argnums, has_aux):
        self.nums = _argnums(op, argnums, len(args))
        self.single = isinstance(argnums, int)

        def partial(*diff):
            full = list(args)
            for i, d in zip(self.nums, diff):
                full[i] = d
            return fn(*full)
        primals = [args[i] for i in self.nums]
        self.in_leaves, self.in_tree = pytree.flatten(tuple(primals))
        self.in_leaves = [as_tensor(x, op) for x in self.in_leaves]
        _floats(op, self.in_leaves, "the differentiated arguments")
        primals = pytree.unflatten(self.in_tree, self.in_leaves)
        found = vjp(partial, *primals, has_aux=has_aux)
        self.out, self.vjp_fn = found[0], found[1]
        self.aux = found[2] if has_aux else None
        self.out_leaves, self.out_tree = pytree.flatten(self.out)
        self.out_leaves = [as_tensor(x, op) for x in self.out_leaves]
        _floats(op, self.out_leaves, "the outputs")

    def per_argument(self, grads):
        """A tuple of per-argument trees -> one tree, or the tuple (tuple argnums)."""
        return grads[0] if self.single else tuple(grads)


def _public(transform):
    """The eager form (jit on the default backend) around a transformation that runs inside a trace."""
    def make(fn, argnums=0, has_aux=False):
        @functools.wraps(fn)
        def run(*args, **kwargs):   # keyword arguments pass through, not differentiated (JAX's rule)
            if _trace.current() is None:
                return run.eager(*args, **kwargs)
            return transform(functools.partial(fn, **kwargs) if kwargs else fn, args, argnums, has_aux)
        run.eager = _LazyJit(run)
        return run
    make.__name__, make.__doc__ = transform.__name__.lstrip("_"), transform.__doc__
    return make


def _reshape_leaves(tree, shape_of_leaf):
    leaves, treedef = pytree.flatten(tree)
    return pytree.unflatten(treedef, [ops.reshape(x, shape_of_leaf(x)) for x in leaves])


def _jacrev(fn, args, argnums, has_aux):
    """The Jacobian of f by reverse mode: one vjp per output element, batched by vmap."""
    lin = _Linear("jacrev", fn, args, argnums, has_aux)
    per_output = []
    for j, out in enumerate(lin.out_leaves):
        def pull(ct, j=j):
            cts = [ct if k == j else ops.zeros_like(o) for k, o in enumerate(lin.out_leaves)]
            return lin.vjp_fn(pytree.unflatten(lin.out_tree, cts))
        rows = vmap(pull)(_basis(out))       # per argument: trees of (out.size, *in_shape)
        rows = _reshape_leaves(rows, lambda r, out=out: out.shape + r.shape[1:])
        per_output.append(lin.per_argument(rows))
    jac = pytree.unflatten(lin.out_tree, per_output)
    return (jac, lin.aux) if has_aux else jac


def _jacfwd(fn, args, argnums, has_aux):
    """The Jacobian of f by forward mode: one jvp per input element, batched by vmap."""
    lin = _Linear("jacfwd", fn, args, argnums, has_aux)
    seed = pytree.unflatten(lin.out_tree, [ops.zeros_like(o) for o in lin.out_leaves])
    _, push_forward = vjp(lin.vjp_fn, seed)        # the transpose of the (linear) vjp: the jvp
    columns = []                                    # per input leaf: out-tree of (in.size, *out_shape)
    for k, leaf in enumerate(lin.in_leaves):
        def push(t, k=k):
            tangents = [t if m == k else ops.zeros_like(x) for m, x in enumerate(lin.in_leaves)]
            (out,) = push_forward(pytree.unflatten(lin.in_tree, tangents))
            return out
        columns.append(pytree.flatten(vmap(push)(_basis(leaf)))[0])
    per_output = []
    for j, out in enumerate(lin.out_leaves):
        leaves = [ops.reshape(ops.moveaxis(cols[j], 0, -1), out.shape + leaf.shape)
                  for cols, leaf in zip(columns, lin.in_leaves)]
        per_output.append(lin.per_argument(pytree.unflatten(lin.in_tree, leaves)))
    jac = pytree.unflatten(lin.out_tree, per_output)
    return (jac, lin.aux) if has_aux else jac


jacrev = _public(_jacrev)
jacfwd = _public(_jacfwd)


def hessian(fn, argnums=0, has_aux=False):
    """The Hessian of a scalar f: jacfwd(jacrev(f)), with leaves of shape in_shape + in_shape."""
    if has_aux:
        inner = jacrev(fn, argnums, has_aux=True)
        return jacfwd(inner, argnums, has_aux=True)
    return jacfwd(jacrev(fn, argnums), argnums)

