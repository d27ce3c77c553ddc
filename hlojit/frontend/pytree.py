"""Pytrees: containers around leaves (arrays, scalars, Tensors), with one registry of node types.

Nodes: tuple, list, dict (keys sorted by repr), None (a node without children), every namedtuple (a tuple
subclass with `_fields`), and the classes in the registry: OrderedDict and defaultdict (insertion order,
sorted keys, as JAX), dataclasses given to `register_dataclass`, and any class given to
`register_pytree_node` (JAX's convention: `flatten(x) -> (children, aux_data)`, `unflatten(aux_data,
children) -> x`). Anything else is a leaf.

A treedef is a nested tuple, hashable and comparable, so it can be part of a jit cache key:
`("*",)` a leaf, `("None",)`, `("tuple", children)`, `("list", children)`, `("dict", keys, children)`,
`("namedtuple", cls, children)`, `("node", cls, aux_data, children)`. A registered class's treedef
holds the class and its aux data (a dataclass's meta fields), so those are static: they take part in
the hash, and a change of them is a new signature.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, NamedTuple

_LEAF = ("*",)
_NONE = ("None",)


class _Node(NamedTuple):
    """How the walker takes a registered class apart and puts it back together."""
    flatten: Callable          # x -> (children, aux_data)
    unflatten: Callable        # (aux_data, children tuple) -> x
    keys: Callable | None      # aux_data -> the path suffix of each child (`.w`, `['a']`); None: `[i]`
    kind: str                  # for messages: "a Params (registered with register_dataclass)" ...
    meta: tuple = ()           # a dataclass's meta field names: aux_data holds their values


_REGISTRY: dict[type, _Node] = {}


def _register(cls, node: _Node):
    if not isinstance(cls, type):
        raise TypeError(f"a pytree node type must be a class, not {cls!r}")
    if cls in (tuple, list, dict, type(None)) or cls in _REGISTRY:
        raise ValueError(f"{cls.__qualname__} is already a pytree node type")
    _REGISTRY[cls] = node


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Make `nodetype` a pytree node (JAX's signature): `flatten_func(x)` returns `(children, aux_data)`
    (aux_data hashable: it is part of the treedef and so of jit's cache key), `unflatten_func(aux_data,
    children)` rebuilds it."""
    name = getattr(nodetype, "__qualname__", repr(nodetype))   # _register says what is wrong with a non-class
    _register(nodetype, _Node(flatten_func, unflatten_func, None, f"a {name} (registered with register_pytree_node)"))


def register_pytree_node_class(cls):
    """Class decorator (JAX's): `cls.tree_flatten(self) -> (children, aux_data)` and the classmethod
    `cls.tree_unflatten(aux_data, children)`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """A dataclass (or any class built by keyword arguments) as a pytree node, JAX's signature: the
    `data_fields` are children, the `meta_fields` static (hashable, part of the treedef). For a
    dataclass both may be omitted: fields with `metadata={"static": True}` are meta, the rest data.
    Usable as a decorator; returns the class."""
    if (data_fields is None) != (meta_fields is None):
        raise TypeError(f"register_dataclass({nodetype.__qualname__}): give both data_fields and meta_fields, "
                        f"or neither (got data_fields={data_fields!r}, meta_fields={meta_fields!r})")
    is_dataclass = dataclasses.is_dataclass(nodetype)
    if data_fields is None:
        if not is_dataclass:
            raise TypeError(f"register_dataclass({nodetype.__qualname__}): data_fields and meta_fields are "
                            "required for a class that is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if set(data) & set(meta):
        raise ValueError(f"register_dataclass({nodetype.__qualname__}): fields {sorted(set(data) & set(meta))} "
                         "are both data and meta fields")
    if is_dataclass:
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        if set(data) | set(meta) != init:
            missing, unknown = init - set(data) - set(meta), (set(data) | set(meta)) - init
            raise ValueError(f"register_dataclass({nodetype.__qualname__}): data_fields and meta_fields must "
                             f"name every field of the constructor and only those"
                             + (f"; missing {sorted(missing)} (drop_fields= leaves them out)" if missing else "")
                             + (f"; not constructor fields: {sorted(unknown)}" if unknown else ""))

    def flatten_one(x):
        return tuple([getattr(x, f) for f in data]), tuple([getattr(x, f) for f in meta])

    def unflatten_one(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    keys = tuple(f".{f}" for f in data)
    _register(nodetype, _Node(flatten_one, unflatten_one, lambda aux: keys,
                              f"a {nodetype.__qualname__} (registered with register_dataclass)", meta))
    return nodetype


def _sorted_keys(d) -> tuple:
    """A dict's keys in flatten order: sorted by repr, as hlojit always has (files written before keep
    their leaf order). JAX sorts by value: the same for identifier-like str keys, but not for ints of
    different lengths (repr puts 10 before 9), and JAX refuses keys that do not compare (1 and 'a')."""
    return tuple(sorted(d, key=repr))


def _keyed(keys: tuple) -> tuple:
    return tuple(f"[{k!r}]" for k in keys)


_REGISTRY[collections.OrderedDict] = _Node(
    lambda d: (tuple(d.values()), tuple(d)), lambda keys, children: collections.OrderedDict(zip(keys, children)),
    _keyed, "an OrderedDict")
_REGISTRY[collections.defaultdict] = _Node(
    lambda d: (tuple(d[k] for k in _sorted_keys(d)), (d.default_factory, _sorted_keys(d))),
    lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children)),
    lambda aux: _keyed(aux[1]), "a defaultdict")


# --- flattening ---

def flatten(tree, leaves=None, path="", paths=None, is_leaf=None):
    """(leaves, treedef); with `paths` (a list) also the path of each leaf, e.g. `x[0]['w']`, `p.w`;
    `is_leaf(subtree)` true makes that subtree a leaf (JAX's is_leaf=)."""
    if leaves is None:
        leaves = []
    return leaves, _walk(tree, leaves, path if paths is not None else None, paths, is_leaf)


def _walk(tree, leaves, path, paths, is_leaf):
    """The treedef of `tree`, appending its leaves (and their paths when `path` is not None)."""
    if is_leaf is not None and is_leaf(tree):
        return _leaf(tree, leaves, path, paths)
    if tree is None:
        return _NONE
    kind = type(tree)
    if kind is tuple or kind is list:
        return (kind.__name__, tuple([_walk(item, leaves, None if path is None else f"{path}[{i}]", paths,
                                            is_leaf) for i, item in enumerate(tree)]))
    if kind is dict:
        keys = _sorted_keys(tree)
        return ("dict", keys, tuple([_walk(tree[k], leaves, None if path is None else f"{path}[{k!r}]", paths,
                                           is_leaf) for k in keys]))
    node = _REGISTRY.get(kind)
    if node is not None:
        children, aux = node.flatten(tree)
        keys = _child_keys(node, aux, len(children)) if path is not None else ()
        return ("node", kind, aux, tuple([_walk(c, leaves, None if path is None else path + keys[i], paths,
                                                is_leaf) for i, c in enumerate(children)]))
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):
        return ("namedtuple", kind, tuple([_walk(item, leaves, None if path is None else f"{path}.{name}", paths,
                                                 is_leaf) for name, item in zip(kind._fields, tree)]))
    return _leaf(tree, leaves, path, paths)


def _leaf(tree, leaves, path, paths):
    leaves.append(tree)
    if paths is not None:
        paths.append(path)
    return _LEAF


def _child_keys(node: _Node, aux, count: int) -> tuple:
    keys = node.keys(aux) if node.keys is not None else ()
    return tuple(keys) if len(keys) == count else tuple(f"[{i}]" for i in range(count))


def unflatten(treedef, leaves):
    """Rebuild the tree from an iterator or list of leaves (an iterator may hold more: the rest is left)."""
    return _build(treedef, iter(leaves))


def _build(treedef, leaves):
    tag = treedef[0]
    if tag == "*":
        return next(leaves)
    if tag == "None":
        return None
    if tag == "tuple":
        return tuple([_build(child, leaves) for child in treedef[1]])
    if tag == "list":
        return [_build(child, leaves) for child in treedef[1]]
    if tag == "dict":
        return {k: _build(child, leaves) for k, child in zip(treedef[1], treedef[2])}
    if tag == "namedtuple":
        return treedef[1](*[_build(child, leaves) for child in treedef[2]])
    _, cls, aux, children = treedef
    return _REGISTRY[cls].unflatten(aux, tuple([_build(child, leaves) for child in children]))


def is_leaf(treedef) -> bool:
    return treedef == _LEAF


def children_of(treedef) -> tuple:
    """The child treedefs of a node (none for a leaf or None)."""
    tag = treedef[0]
    return () if tag in ("*", "None") else treedef[-1]


def num_leaves(treedef) -> int:
    return 1 if treedef[0] == "*" else sum(num_leaves(c) for c in children_of(treedef))


def _keys_of(treedef) -> tuple:
    """The path suffix of each child of a node, as flatten names them."""
    tag = treedef[0]
    if tag in ("tuple", "list"):
        return tuple(f"[{i}]" for i in range(len(treedef[1])))
    if tag == "dict":
        return _keyed(treedef[1])
    if tag == "namedtuple":
        return tuple(f".{name}" for name in treedef[1]._fields)
    if tag == "node":
        return _child_keys(_REGISTRY[treedef[1]], treedef[2], len(treedef[3]))
    return ()


def leaf_paths(treedef, path="") -> list[str]:
    """The path of each leaf, in flatten order, as `flatten(..., paths=)` would name them."""
    if treedef[0] == "*":
        return [path]
    return [p for key, child in zip(_keys_of(treedef), children_of(treedef)) for p in leaf_paths(child, path + key)]


def describe(treedef, leaves=None) -> str:
    """A short picture of a structure for messages: `{'b': *, 'w': *}`, `(*, [*, None])`,
    `Params(w=*, b=*)`; with `leaves` (strings, in flatten order) each `*` is replaced by one of them."""
    return _describe(treedef, iter(leaves) if leaves is not None else None)


def _describe(treedef, leaves) -> str:
    tag = treedef[0]
    if tag == "*":
        return next(leaves) if leaves is not None else tag
    if tag == "None":
        return tag
    inner = [_describe(c, leaves) for c in children_of(treedef)]
    if tag == "tuple":
        return f"({inner[0]},)" if len(inner) == 1 else f"({', '.join(inner)})"
    if tag == "list":
        return f"[{', '.join(inner)}]"
    keys = _dict_keys(treedef)
    if keys is not None:
        items = "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(keys, inner)) + "}"
        return items if tag == "dict" else f"{treedef[1].__name__}({items})"
    named = all(k.startswith(".") for k in _keys_of(treedef))
    parts = [f"{k[1:]}={c}" if named else c for k, c in zip(_keys_of(treedef), inner)]
    head = treedef[1].__qualname__
    if tag == "node":   # the static part: a dataclass's meta fields by name, other aux data in brackets
        meta, aux = _REGISTRY[treedef[1]].meta, treedef[2]
        parts += [f"{k}={v!r}" for k, v in zip(meta, aux)] if meta else []
        head += f"[{aux!r}]" if not meta and not named and aux is not None else ""
    return f"{head}({', '.join(parts)})"


def _dict_keys(treedef):
    """The keys of a dict-like node (dict, OrderedDict, defaultdict) in flatten order, else None."""
    tag = treedef[0]
    if tag == "dict":
        return treedef[1]
    if tag == "node" and treedef[1] is collections.OrderedDict:
        return treedef[2]
    if tag == "node" and treedef[1] is collections.defaultdict:
        return treedef[2][1]
    return None


def kind_of(treedef) -> str:
    """What a node is, for messages: "a list of 3", "a Params (registered with register_dataclass)"."""
    tag = treedef[0]
    if tag == "*":
        return "a leaf"
    if tag == "None":
        return "None"
    if tag in ("tuple", "list"):
        return f"a {tag} of {len(treedef[1])}"
    if tag == "dict":
        return f"a dict with keys {list(treedef[1])}"
    if tag == "namedtuple":
        return f"a {treedef[1].__qualname__} (namedtuple)"
    return _REGISTRY[treedef[1]].kind


# --- JSON, for artifact manifests and checkpoints ---

# Dict keys a JSON manifest can hold without changing their type.
_JSON_KEYS = (str, int, float, bool, type(None))


def has_classes(treedef) -> bool:
    """Whether a structure holds namedtuples or registered classes (OrderedDict aside): what `to_json`
    cannot write."""
    if treedef[0] == "namedtuple" or (treedef[0] == "node" and treedef[1] is not collections.OrderedDict):
        return True
    return any(has_classes(c) for c in children_of(treedef))


def to_json(treedef, where: str = ""):
    """A JSON-ready form of a treedef: `"*"` a leaf, `null` None, `{"tuple": [...]}`, `{"list": [...]}`,
    `{"dict": [[key, child], ...]}`, `{"OrderedDict": [[key, child], ...]}`. Namedtuples and registered
    classes raise ValueError naming the node at `where`: a file is read without the Python classes, so
    it could not rebuild them (JAX's export refuses them too)."""
    tag = treedef[0]
    if tag == "*":
        return "*"
    if tag == "None":
        return None
    if tag in ("tuple", "list"):
        return {tag: [to_json(c, f"{where}[{i}]") for i, c in enumerate(treedef[1])]}
    ordered = tag == "node" and treedef[1] is collections.OrderedDict
    if tag == "dict" or ordered:
        keys, children = treedef[-2:]
        bad = [k for k in keys if type(k) not in _JSON_KEYS]
        if bad:
            raise ValueError(f"{where or 'the tree'}: dict key {bad[0]!r} ({type(bad[0]).__name__}) cannot be "
                             "written to a manifest; use str, int, float, bool or None keys")
        return {"OrderedDict" if ordered else "dict": [[k, to_json(c, f"{where}[{k!r}]")]
                                                       for k, c in zip(keys, children)]}
    raise ValueError(f"{where or 'the tree'} is {kind_of(treedef)}, which a file cannot hold: it is read "
                     "without the Python classes that would rebuild it; pass and return tuples, lists and "
                     "dicts there (e.g. dataclasses.asdict(x), x._asdict())")


def from_json(obj):
    """The treedef that `to_json` wrote."""
    if obj == "*":
        return _LEAF
    if obj is None:
        return _NONE
    if isinstance(obj, dict) and len(obj) == 1:
        (tag, children), = obj.items()
        if tag in ("tuple", "list") and isinstance(children, list):
            return (tag, tuple(from_json(c) for c in children))
        if tag in ("dict", "OrderedDict") and isinstance(children, list) and all(len(c) == 2 for c in children):
            keys, subtrees = tuple(k for k, _ in children), tuple(from_json(c) for _, c in children)
            return ("dict", keys, subtrees) if tag == "dict" else \
                ("node", collections.OrderedDict, keys, subtrees)
    raise ValueError(f"not a pytree structure: {obj!r}")


def unhashable(treedef, path: str = "") -> str:
    """Why a treedef does not hash: the first registered node whose aux data does not, for messages."""
    if treedef[0] == "node":
        try:
            hash(treedef[2])
        except TypeError as e:
            return (f"{path or 'the argument'} is {kind_of(treedef)} whose static part {treedef[2]!r} cannot be "
                    f"hashed ({e}); jit keys its cache by it: make it hashable (tuples, not lists), or data")
    for key, child in zip(_keys_of(treedef), children_of(treedef)):
        found = unhashable(child, path + key)
        if found:
            return found
    return ""
