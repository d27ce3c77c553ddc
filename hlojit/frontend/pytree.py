"""Pytrees: nested tuples, lists, dicts and None around leaves (arrays, scalars, Tensors).

A treedef is a hashable nested tuple, so it can be part of a cache key.
"""
from __future__ import annotations

_LEAF = ("*",)


def flatten(tree, leaves=None, path="", paths=None):
    """(leaves, treedef); with `paths` (a list) also the path of each leaf, e.g. `x[0]['w']`."""
    if leaves is None:
        leaves = []
    if tree is None:
        return leaves, ("None",)
    kind = type(tree)
    if kind is tuple or kind is list:
        children = tuple(flatten(item, leaves, f"{path}[{i}]", paths)[1] for i, item in enumerate(tree))
        return leaves, (kind.__name__, children)
    if kind is dict:
        keys = sorted(tree, key=repr)
        children = tuple(flatten(tree[k], leaves, f"{path}[{k!r}]", paths)[1] for k in keys)
        return leaves, ("dict", tuple(keys), children)
    leaves.append(tree)
    if paths is not None:
        paths.append(path)
    return leaves, _LEAF


def unflatten(treedef, leaves):
    """Rebuild the tree from an iterator or list of leaves."""
    return _build(treedef, iter(leaves))


def _build(treedef, leaves):
    tag = treedef[0]
    if tag == "*":
        return next(leaves)
    if tag == "None":
        return None
    if tag == "dict":
        return {k: _build(child, leaves) for k, child in zip(treedef[1], treedef[2])}
    items = [_build(child, leaves) for child in treedef[1]]
    return tuple(items) if tag == "tuple" else items


def is_leaf(treedef) -> bool:
    return treedef == _LEAF
