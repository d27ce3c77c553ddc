"""Eager ops: an `hlojit.ops` function called outside a trace runs at once and returns an hj.Array.

Each call runs a one-op program: the op, traced by `hj.jit` on its array arguments, compiled once per
signature and kept in one process-wide cache (`cache_info()`, `cache_clear()`). The signature is the op,
the backend, the promotion mode, the structure of the arguments, each array's shape and dtype, and the
value of everything else (axis=, shape=, a slice, a branch function): those are static, baked into the
program, as JAX's eager ops bake theirs.

Which backend: an hj.Array argument's own (the first one's, by its driver), else the default one:
`with hj.eager.default_backend(name):`, else $HLOJIT_BACKEND as it was when hlojit was imported, else
iree:cpu (read once: a lookup of os.environ would cost a tenth of a cached call).

Python scalars are weakly typed, as in traced code (`a_f32 + 1.0` stays f32). In the elementwise table ops
(`ops.add`, `ops.sin`, `ops.less` ...: the ops that `a + 1` and `np.sin(a)` reach) a Python scalar is an
argument of the program, not a constant in it: `a + i` in a loop over i runs one program. Its argument
dtype is the one the op promotes it to (numpy converts the value on the call, exactly as a traced constant
is converted, and raises if an int does not fit). Elsewhere scalars are static.

The path of a cached call is short: one tuple of (shape, dtype, driver) per argument, one dict lookup, then
the backend executable's own fast path (benchmarks/eager_dispatch.py measures it against JAX's eager ops).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import threading
from typing import NamedTuple

import numpy as np

from .. import backends
from ..backends import Array
from ..backends.teardown import COMPILING
from ..dialects.types import astype
from ..errors import TracingError
from . import dtypes, pytree, trace as _trace
from .jit import Exec
from .ops import indexing as _indexing, updates as _updates  # (loaded: ops imports this module last)
from .tensor import Tensor

_MAX_ENTRIES = 1024                 # programs kept; the oldest go first beyond that
_ENTRIES: dict = {}                 # full signature -> run(leaves)
_FAST: list = []                    # per op: (default backend, per-argument spec) -> run(args)
_DEFAULT = contextvars.ContextVar("hlojit_eager_backend", default=os.environ.get("HLOJIT_BACKEND") or backends.DEFAULT)
_LOCK = threading.Lock()
_COUNTS = {"hits": 0, "misses": 0}
_SCALAR_TYPES = (bool, int, float)
_INDEX_SCALARS = frozenset({np.int32, np.int64})
_CPU_DRIVERS = frozenset({"local-sync", "local-task"})
_CPU_BACKENDS = frozenset({"iree:cpu", "iree:vmvx"})


class EagerCacheInfo(NamedTuple):
    hits: int            # eager calls that found their compiled program
    misses: int          # eager calls that traced and compiled one
    currsize: int        # programs in the cache
    maxsize: int


def cache_info() -> EagerCacheInfo:
    return EagerCacheInfo(_COUNTS["hits"], _COUNTS["misses"], len(_ENTRIES), _MAX_ENTRIES)


def cache_clear():
    with _LOCK:
        _ENTRIES.clear()
        _clear_fast()
        _COUNTS.update(hits=0, misses=0)


def _clear_fast():
    for fast in _FAST:
        fast.clear()


@contextlib.contextmanager
def default_backend(name: str):
    """`with hj.eager.default_backend("reference"):` eager ops on numpy arrays and scalars run on `name`
    in this block (JAX's `jax.default_device`); outside any such block, on $HLOJIT_BACKEND as it was when
    hlojit was imported, else iree:cpu. (An hj.Array operand still takes the op to its own backend.)"""
    backends.get(name)  # a clear error for an unknown name, here
    token = _DEFAULT.set(name)
    try:
        yield
    finally:
        _DEFAULT.reset(token)


# --- the wrapper every public op gets -----------------------------------------------------------------------

def dispatching(fn, scalars_are_arguments: bool = False, prepare=None):
    """`fn` as it is inside a trace, and eager outside one. `scalars_are_arguments`: Python scalars
    become arguments of the program (elementwise table ops, whose operands all promote together).
    `prepare(args, kwargs) -> (args, kwargs)`: rewrites the arguments of an eager call first (getitem
    turns concrete masks into indices)."""
    current, default = _trace.current, _DEFAULT.get
    fast = {}   # this op's calls of arrays and scalars seen before: _fast_key -> run(arguments)
    _FAST.append(fast)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if current() is not None:
            return fn(*args, **kwargs)
        with COMPILING:   # IREE's C++ throughout: closed to daemon threads at exit (backends/teardown.py)
            return eager(args, kwargs)

    def eager(args, kwargs):
        if prepare is not None:
            args, kwargs = prepare(args, kwargs)
        key = inputs = None
        if not dtypes.overrides_active:
            key, inputs = _fast_key(default(), args, kwargs, scalars_are_arguments)
            run = fast.get(key)
            if run is not None:
                _COUNTS["hits"] += 1
                return run(inputs)
        entry, result, arguments = _dispatch(fn, args, kwargs, scalars_are_arguments)
        if key is not None and arguments == len(inputs):  # (unless scalars were static: strict promotion)
            fast[key] = entry
        return result
    op.eager_fn = fn
    return op


def wrap_namespace(namespace: dict, names) -> None:
    """The functions `names` of a namespace of ops (its module's `globals()`) made eager where the namespace
    exports them, by the namespace itself, as its last line: `eager.wrap_namespace(globals(), __all__)`
    (ops.linalg, ops.fft). Inside the namespace's own modules the names stay the plain traced functions."""
    for name in names:
        if not hasattr(namespace[name], "eager_fn"):
            namespace[name] = dispatching(namespace[name])


def run(fn, *args, **kwargs):
    """fn(*args, **kwargs) as an eager op (a traced function of Tensors, run as a cached program)."""
    return _dispatch(fn, args, kwargs, False)[1]


def _fast_key(default: str, args, kwargs, scalars: bool):
    """(signature, program arguments) of a call whose arguments are arrays, Python scalars and None (no
    containers), else (None, None). Python types mark what follows: a static scalar is (type, value)."""
    key, inputs = [default], []
    for a in (*args, *kwargs.values()) if kwargs else args:
        kind = type(a)
        if kind is Array:
            key += (a.shape, a.dtype, a.driver)
            inputs.append(a)
        elif kind is np.ndarray:
            key += (a.shape, a.dtype, kind)
            inputs.append(a)
        elif kind in _SCALAR_TYPES:
            if scalars:
                key.append(kind)
                inputs.append(a)
            else:
                key += (kind, a)
        elif a is None:
            key.append(None)
        elif isinstance(a, np.generic):
            key.append(kind)
            inputs.append(a)
        elif kind is tuple and _static_items(a):   # an index of slices, None and ... (ints come as np.int32)
            key.append(tuple([(slice, i.start, i.stop, i.step) if type(i) is slice else i for i in a]))
            inputs += [i for i in a if isinstance(i, np.generic)]
        else:
            return None, None
    if kwargs:
        key.append(tuple(kwargs))
    return tuple(key), inputs


def _static_items(items) -> bool:
    return all(type(i) is slice or i is None or i is Ellipsis or type(i) in _INDEX_SCALARS for i in items)


# --- the slow path: a full signature, compiled on a miss ----------------------------------------------------

def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Array)) or (hasattr(type(x), "__array__") and
                                                              not isinstance(x, type))


def _static_key(x):
    """A hashable stand-in for a static argument (type included: 1, 1.0 and True hash alike)."""
    if isinstance(x, slice):  # (hashable only from Python 3.12)
        return slice, x.start, x.stop, x.step
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"eager op: a static argument must be hashable, not a {type(x).__name__} ({x!r:.60}) "
                        f"at {_trace.user_site()}") from None
    return type(x), x


def _dispatch(fn, args, kwargs, scalars: bool):
    """(the program of this call's signature, compiled on a miss; its result; how many arguments it took)."""
    leaves, treedef = pytree.flatten((args, kwargs))
    for x in leaves:
        if isinstance(x, Tensor):
            raise TracingError(f"{fn.__name__}: a traced Tensor is used outside its trace at {_trace.user_site()} "
                               "(it leaked out of a traced function, e.g. through a global or a closure)")
    scalar_dtype = _scalar_dtype(leaves) if scalars else None
    roles, specs, inputs = [], [], []
    for x in leaves:
        if _is_array(x):
            array = x if isinstance(x, Array) else np.asarray(x)
            roles.append(True)
            specs.append((array.shape, dtypes.canonical(array.dtype)))
            inputs.append(array)
        elif scalar_dtype is not None and type(x) in _SCALAR_TYPES:
            roles.append(True)
            specs.append((type(x),))
            inputs.append(astype(x, scalar_dtype))  # the program's argument: converted as the op's constant would be
        else:
            roles.append(False)
            specs.append(_static_key(x))
    backend = _backend_for(leaves, _DEFAULT.get())
    key = (fn, backend.name, dtypes.promotion_mode(), treedef, tuple(specs))
    entry = _ENTRIES.get(key)
    if entry is None:
        entry = _compile(fn, key, treedef, roles, leaves, inputs, backend)
    else:
        _COUNTS["hits"] += 1
    arguments = [x for x, role in zip(leaves, roles) if role]
    return entry, entry(arguments), len(arguments)


def _scalar_dtype(leaves):
    """The dtype the op's Python scalars promote to (None: keep them static, e.g. in strict promotion mode,
    where the trace must raise its own error)."""
    pairs = []
    for x in leaves:
        if type(x) in _SCALAR_TYPES:
            pairs.append(dtypes.python_scalar_dtype(x))
        elif _is_array(x):
            pairs.append((dtypes.canonical(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype), False))
        else:
            return None
    if dtypes.promotion_mode() != "standard":
        return None
    return dtypes.result_type(*pairs)[0]


def _backend_for(leaves, default: str):
    """The first hj.Array's backend, else the default one."""
    for x in leaves:
        if type(x) is Array and x.driver is not None:
            if x.driver == "reference":
                return backends.get("reference")
            if x.driver in _CPU_DRIVERS:
                return backends.get(default if default in _CPU_BACKENDS else "iree:cpu")
            return backends.get(f"iree:{x.driver}")
    return backends.get(default)


def _compile(fn, key, treedef, roles, leaves, inputs, backend):
    """Trace fn on the arguments (Tensors for arrays, the static values as they are) and compile it."""
    out_tree, static_out = [], []
    statics = [None if role else x for x, role in zip(leaves, roles)]  # (the arrays of this call: not kept)

    def one_op(*tensors):
        supplied = iter(tensors)
        rebuilt = [next(supplied) if role else x for x, role in zip(statics, roles)]
        args, kwargs = pytree.unflatten(treedef, rebuilt)
        result = fn(*args, **kwargs)
        out_leaves, tree = pytree.flatten(result)
        out_tree[:] = [tree]
        if all(isinstance(x, Tensor) for x in out_leaves):
            return result
        # a value the op returns as it is (cho_factor's `lower`) comes back as that value, not as an array;
        # None marks a Tensor (the program's outputs, in order)
        static_out[:] = [None if isinstance(x, Tensor) else (x,) for x in out_leaves]
        return [x for x in out_leaves if isinstance(x, Tensor)]
    one_op.__name__ = one_op.__qualname__ = fn.__name__
    with _LOCK:
        entry = _ENTRIES.get(key)
        if entry is not None:
            return entry
        executable = Exec(one_op, backend=backend.name).compile(*inputs)
        if static_out:
            entry = _with_static_outputs(executable.call, out_tree[0], static_out)
        elif pytree.is_leaf(out_tree[0]) and executable.call_single is not None:
            entry = executable.call_single
        else:
            call, tree = executable.call, out_tree[0]
            entry = lambda leaves: pytree.unflatten(tree, call(leaves))  # noqa: E731
        _COUNTS["misses"] += 1
        _ENTRIES[key] = entry
        while len(_ENTRIES) > _MAX_ENTRIES:
            _ENTRIES.pop(next(iter(_ENTRIES)))
            _clear_fast()  # (rare) fast keys point at entries: rebuilt on the next calls
    return entry


def _with_static_outputs(call, tree, static_out):
    """run(leaves) of a program whose op also returned values that are no Tensor: those are put back in place."""
    def run(leaves):
        arrays = iter(call(leaves))
        return pytree.unflatten(tree, [next(arrays) if x is None else x[0] for x in static_out])
    return run


# --- indexing: concrete indices, checked, then arguments ----------------------------------------------------

def prepare_index(args, kwargs):
    """getitem(x, index) outside a trace, where the index is concrete: a boolean mask becomes the indices
    of its true elements (what JAX does with a concrete mask; a traced one is refused); ints and integer
    arrays are checked against x's shape as static indices are (IndexError when out of range), then passed
    as arguments of the program, so `a[i]` in a loop and `for row in a` run one program."""
    x, index = _bind_index(args, kwargs)
    if not isinstance(x, Array):
        x = np.asarray(x)
    basic = _basic_index(x, index)
    if basic is not None:
        return (x, basic), {}
    items = []
    for item in (index if isinstance(index, tuple) else (index,)):
        if isinstance(item, Array) or isinstance(item, list) and not _is_static_list(item):
            item = np.asarray(item)
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            items += np.nonzero(item)
        else:
            items.append(item)
    _indexing.parse("getitem", Tensor(None, tuple(x.shape), x.dtype), tuple(items))  # the checks, no ops
    items = [np.asarray(item, np.int32 if -2**31 <= item < 2**31 else np.int64) if _is_int(item) else item
             for item in items]
    return (x, tuple(items)), {}


def _basic_index(x, index):
    """The common index (ints in range and slices, one per leading axis) prepared at once, else None."""
    items = index if type(index) is tuple else (index,)
    shape = x.shape
    if len(items) > len(shape):
        return None
    prepared = []
    for item, n in zip(items, shape):
        if type(item) is int and -n <= item < n:
            prepared.append(np.int32(item))
        elif type(item) is slice and all(type(b) is int or b is None for b in (item.start, item.stop, item.step)):
            prepared.append(item)
        else:
            return None
    return tuple(prepared)


def _bind_index(args, kwargs):
    names = ("x", "index")
    bound = dict(zip(names, args), **kwargs)
    if set(bound) != set(names) or len(args) > 2:
        raise TypeError(f"getitem(x, index) takes x and index, not {len(args)} arguments and {sorted(kwargs)}")
    return bound["x"], bound["index"]


def _is_int(item) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _is_static_list(item) -> bool:
    """A list holding a slice, None or ...: numpy 2 refuses those; left for getitem's own error."""
    return any(isinstance(i, slice) or i is None or i is Ellipsis for i in item)


class _EagerIndexed:
    """`a.at[index]` of an hj.Array outside a trace: each method runs the update as an eager op."""
    __slots__ = ("_x", "_index")

    def __init__(self, x, index):
        (self._x, self._index), _ = prepare_index((x, index), {})

    def get(self):
        return run(_indexing.getitem, self._x, self._index)

    def _update(self, values, mode: str):
        return run(_updates.update, self._x, self._index, values, mode)

    def set(self, values):
        return self._update(values, "set")

    def add(self, values):
        return self._update(values, "add")

    def multiply(self, values):
        return self._update(values, "multiply")

    def min(self, values):
        return self._update(values, "min")

    def max(self, values):
        return self._update(values, "max")


class _EagerAt:
    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index) -> _EagerIndexed:
        return _EagerIndexed(self._x, index)


def at(x):
    """`x.at`: traced updates on a Tensor (or on an hj.Array used inside a trace), eager ones on an hj.Array."""
    if isinstance(x, Array) and _trace.current() is None:
        return _EagerAt(x)
    return _updates.IndexUpdates(x)
