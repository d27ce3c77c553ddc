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


def leaf_paths(treedef, path="") -> list[str]:
    """The path of each leaf, in flatten order, as `flatten(..., paths=)` would name them."""
    tag = treedef[0]
    if tag == "*":
        return [path]
    if tag == "None":
        return []
    keys = treedef[1] if tag == "dict" else range(len(treedef[1]))
    children = treedef[2] if tag == "dict" else treedef[1]
    return [p for k, child in zip(keys, children) for p in leaf_paths(child, f"{path}[{k!r}]")]


def describe(treedef, leaves=None) -> str:
    """A short picture of a structure for messages: `{'b': *, 'w': *}`, `(*, [*, None])`; with `leaves`
    (strings, in flatten order) each `*` is replaced by one of them."""
    leaves = iter(leaves) if leaves is not None else None
    tag = treedef[0]
    if tag == "*":
        return next(leaves) if leaves is not None else tag
    if tag == "None":
        return tag
    if tag == "dict":
        return "{" + ", ".join(f"{k!r}: {describe(c, leaves)}" for k, c in zip(treedef[1], treedef[2])) + "}"
    inner = ", ".join(describe(c, leaves) for c in treedef[1])
    return f"({inner},)" if tag == "tuple" and len(treedef[1]) == 1 else \
        f"({inner})" if tag == "tuple" else f"[{inner}]"


# Dict keys a JSON manifest can hold without changing their type.
_JSON_KEYS = (str, int, float, bool, type(None))


def to_json(treedef):
    """A JSON-ready form of a treedef (for artifact manifests): `"*"` a leaf, `null` None,
    `{"tuple": [...]}`, `{"list": [...]}`, `{"dict": [[key, child], ...]}`."""
    tag = treedef[0]
    if tag == "*":
        return "*"
    if tag == "None":
        return None
    if tag == "dict":
        bad = [k for k in treedef[1] if type(k) not in _JSON_KEYS]
        if bad:
            raise ValueError(f"dict key {bad[0]!r} ({type(bad[0]).__name__}) cannot be written to a manifest; "
                             "use str, int, float, bool or None keys")
        return {"dict": [[k, to_json(c)] for k, c in zip(treedef[1], treedef[2])]}
    return {tag: [to_json(c) for c in treedef[1]]}


def from_json(obj):
    """The treedef that `to_json` wrote."""
    if obj == "*":
        return _LEAF
    if obj is None:
        return ("None",)
    if isinstance(obj, dict) and len(obj) == 1:
        (tag, children), = obj.items()
        if tag in ("tuple", "list") and isinstance(children, list):
            return (tag, tuple(from_json(c) for c in children))
        if tag == "dict" and isinstance(children, list) and all(len(c) == 2 for c in children):
            return ("dict", tuple(k for k, _ in children), tuple(from_json(c) for _, c in children))
    raise ValueError(f"not a pytree structure: {obj!r}")
