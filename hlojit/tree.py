"""`hj.tree`: jax.tree's functions over hlojit's pytrees, and the registration of node types.

    hj.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    leaves, treedef = hj.tree.flatten(params)
    hj.tree.register_dataclass(Params, data_fields=["w", "b"], meta_fields=["activation"])

Nodes are tuples, lists, dicts (sorted keys), None (no children), namedtuples, OrderedDicts and
defaultdicts, and the classes registered here; everything else is a leaf. The same registry serves
`hj.jit` (arguments, results, cache keys), `grad`/`vjp`, the optimizers, checkpoints and `hj.testing`.
"""
from __future__ import annotations

import functools

from .frontend import pytree
from .frontend.pytree import register_dataclass, register_pytree_node, register_pytree_node_class

__all__ = ["TreeDef", "all", "flatten", "leaves", "map", "reduce", "structure", "unflatten", "register_dataclass",
           "register_pytree_node", "register_pytree_node_class"]

_builtin_all = all
_MISSING = object()


class TreeDef(tuple):
    """A pytree's structure: the nested-tuple treedef (hashable, comparable, equal to the one jit keys
    its cache by) with jax's PyTreeDef methods."""
    __slots__ = ()

    @property
    def num_leaves(self) -> int:
        return pytree.num_leaves(self)

    def unflatten(self, leaves):
        return unflatten(self, leaves)

    def children(self) -> list:
        return [TreeDef(c) for c in pytree.children_of(self)]

    def __repr__(self):
        return f"TreeDef({pytree.describe(self)})"


def flatten(tree, is_leaf=None) -> tuple[list, TreeDef]:
    """(leaves, treedef), leaves in the order jit passes them; `is_leaf(x)` true stops the walk at x."""
    leaves, treedef = pytree.flatten(tree, is_leaf=is_leaf)
    return leaves, TreeDef(treedef)


def leaves(tree, is_leaf=None) -> list:
    return pytree.flatten(tree, is_leaf=is_leaf)[0]


def structure(tree, is_leaf=None) -> TreeDef:
    return TreeDef(pytree.flatten(tree, is_leaf=is_leaf)[1])


def unflatten(treedef, leaves):
    """The tree of `treedef` with these leaves (exactly as many as it has)."""
    leaves = list(leaves)
    expected = pytree.num_leaves(treedef)
    if len(leaves) != expected:
        raise ValueError(f"hj.tree.unflatten: {pytree.describe(treedef)} has {expected} leaves, got {len(leaves)}")
    return pytree.unflatten(treedef, leaves)


def map(f, tree, *rest, is_leaf=None):
    """`f` of each leaf of `tree` and the matching subtrees of `rest` (which have tree's structure, or
    tree's as a prefix: a leaf of tree matches a whole subtree), in tree's structure."""
    leaves, treedef = pytree.flatten(tree, is_leaf=is_leaf)
    others = [flatten_up_to(treedef, other, f"tree {i + 2}") for i, other in enumerate(rest)]
    return pytree.unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def reduce(function, tree, initializer=_MISSING, is_leaf=None):
    """functools.reduce of `function` over the leaves (TypeError on no leaves and no initializer)."""
    items = leaves(tree, is_leaf=is_leaf)
    return functools.reduce(function, items) if initializer is _MISSING else \
        functools.reduce(function, items, initializer)


def all(tree, is_leaf=None) -> bool:
    """Whether every leaf is truthy (True for no leaves)."""
    return _builtin_all(leaves(tree, is_leaf=is_leaf))


def flatten_up_to(treedef, tree, name: str = "tree") -> list:
    """The subtrees of `tree` at the leaves of `treedef` (a prefix of tree's structure), or a ValueError
    naming the first path where the two differ."""
    out: list = []
    _up_to(treedef, tree, "", name, out)
    return out


def _up_to(treedef, tree, path, name, out):
    if pytree.is_leaf(treedef):
        out.append(tree)
        return
    children: list = []
    shallow = pytree.flatten(tree, children, is_leaf=lambda x: x is not tree)[1]  # tree's node, its children
    expected = _shallow(treedef)
    if shallow != expected:
        got = "a leaf" if pytree.is_leaf(shallow) else pytree.kind_of(shallow)
        raise ValueError(f"hj.tree: {name} has {got} at {path or 'the root'} where the first tree has "
                         f"{pytree.kind_of(expected)}")
    keys = pytree.leaf_paths(shallow)
    for key, child, subtree in zip(keys, pytree.children_of(treedef), children):
        _up_to(child, subtree, path + key, name, out)


def _shallow(treedef):
    """The node of a treedef with each child a leaf: what flattening one level gives."""
    if pytree.is_leaf(treedef) or treedef == ("None",):
        return treedef
    return treedef[:-1] + (tuple(("*",) for _ in pytree.children_of(treedef)),)
