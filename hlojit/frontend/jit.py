"""`hj.jit` / `hj.Exec`: trace on the first call per signature, compile, cache, and call fast afterwards.

The cache key is the pytree structure of the arguments, each leaf's shape, dtype and weak-typedness, and
the static arguments' values. A call whose arguments are all top-level arrays takes a fast path: one
tuple of (shape, dtype) looked up in a dict, then straight into the backend's executable.

Runtime options are per function: `driver=` picks the IREE CPU driver (default: by the work done), and
`donate_argnums=`/`donate_argnames=` give arguments' buffers up to the call (donation.py says when IREE
reuses them). The worker-thread count of local-task is process-wide: `hj.set_cpu_threads`.
"""
from __future__ import annotations

import collections
import collections.abc
import functools
import inspect
import operator
import os
import threading
import time
import warnings
from typing import NamedTuple

import numpy as np

from .. import backends
from ..backends.teardown import COMPILING
from ..dialects.types import abbreviated, short_signature
from ..errors import SignatureError
from ..pipeline import Program
from . import donation, dtypes, pytree, trace as _trace
from .ops._core import as_tensor
from .tensor import Tensor


# Argument types whose (type, shape, dtype) alone decide the signature (Tensors never take the fast path).
_FAST_TYPES = {np.ndarray, backends.Array}


class RecompileWarning(UserWarning):
    """A jit function keeps being traced and compiled for new signatures."""


class LeafSpec(NamedTuple):
    shape: tuple
    dtype: np.dtype
    weak: bool

    def __str__(self):
        return short_signature(self.shape, self.dtype) + (" (weak)" if self.weak else "")


class _NotALeaf(Exception):
    """A leaf jit cannot take; the caller names its path in the SignatureError."""


_ARRAY_SPECS: dict = {}   # (type, shape, dtype) of an array leaf -> its LeafSpec: a call's leaves, looked up once each
_ARRAY_TYPES = (np.ndarray, backends.Array)


def _leaf_spec(x) -> LeafSpec:
    """The LeafSpec of one argument leaf, else _NotALeaf. An array's is remembered by (type, shape, dtype): a
    training step's 25 leaves cost its call ~25 us to spec afresh each time."""
    kind = type(x)
    if kind in _ARRAY_TYPES:
        key = (kind, x.shape, x.dtype)
        spec = _ARRAY_SPECS.get(key)
        if spec is None:
            if len(_ARRAY_SPECS) > 4096:     # shapes a program stops calling with: let them go
                _ARRAY_SPECS.clear()
            spec = _ARRAY_SPECS[key] = _new_leaf_spec(x)
        return spec
    return _new_leaf_spec(x)


def _new_leaf_spec(x) -> LeafSpec:
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        dtype, weak = dtypes.python_scalar_dtype(x)
        return LeafSpec((), dtype, weak)
    if isinstance(x, Tensor):
        raise _NotALeaf("is a traced Tensor from another trace")
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dtype is None:
        raise _NotALeaf(f"is a {type(x).__name__}; arguments must be arrays, Python scalars, or pytrees of them "
                        "(tuples, lists, dicts, namedtuples, classes registered with hj.tree.register_dataclass "
                        "or register_pytree_node); mark other values static")
    try:
        return LeafSpec(tuple(shape), dtypes.canonical(dtype), False)
    except TypeError as e:
        raise _NotALeaf(f"has an unsupported dtype: {e}") from None


class _Paths(collections.abc.Sequence):
    """The path of each leaf of a call's arguments (`params['w']`, `p.w`), worked out only when a miss
    or a message needs them: the cached call path does not pay for the strings."""
    __slots__ = ("treedefs", "_paths")

    def __init__(self, treedefs):
        self.treedefs, self._paths = treedefs, None

    def _all(self) -> list:
        if self._paths is None:
            self._paths = [p for name, t in self.treedefs for p in pytree.leaf_paths(t, name)]
        return self._paths

    def __getitem__(self, i):
        return self._all()[i]

    def __len__(self):
        return len(self._all())


class _Entry:
    __slots__ = ("key", "fast_keys", "executable", "call", "finish", "run", "signature", "trace_seconds",
                 "compile_seconds", "single")

    def __init__(self, key, executable, out_tree, signature, trace_seconds, compile_seconds):
        self.key, self.signature = key, signature
        self.fast_keys = []             # (type, shape, dtype) per argument: keys of Exec._fast
        self.trace_seconds, self.compile_seconds = trace_seconds, compile_seconds
        self.single = pytree.is_leaf(out_tree)
        if self.single:
            self.finish = operator.itemgetter(0)
        else:
            self.finish = lambda outs: pytree.unflatten(out_tree, outs)
        self.use(executable)

    def use(self, executable):
        """Run `executable` from now on (at first; and tiered compilation's optimised build in place of the
        quick one: same signature, same outputs, same donations)."""
        self.executable, self.call = executable, executable.call
        if self.single:
            self.run = executable.call_single   # leaves -> the one result
        else:
            call = executable.call
            self.run = lambda leaves: self.finish(call(leaves))

    def describe(self) -> str:
        """The signature, and which build runs while tiered compilation's optimised one is still compiling."""
        pending = getattr(self.executable, "pending", None)
        if pending is None:
            return self.signature
        state = f"its optimised build failed: {pending.error}" if pending.error else "the optimised one compiling"
        return f"{self.signature} [quick build; {state}]"


class CacheInfo(NamedTuple):
    function: str
    hits: int
    misses: int
    maxsize: int
    entries: list          # the signature of each cached entry, least recently used first
    miss_reasons: list     # why each miss happened, in order

    @property
    def currsize(self) -> int:
        return len(self.entries)

    def __str__(self):
        lines = [f"{self.function}: {self.currsize} entries (max {self.maxsize}), {self.hits} hits, "
                 f"{self.misses} misses"]
        lines += [f"  entry: {e}" for e in self.entries]
        lines += [f"  miss {i + 1}: {r}" for i, r in enumerate(self.miss_reasons)]
        return "\n".join(lines)


class Lowered:
    """The traced program of one signature: `.mlir` (StableHLO text), `.module` (ir.Module)."""

    def __init__(self, program: Program, out_tree):
        self.program, self.out_tree = program, out_tree

    @property
    def module(self):
        return self.program.module

    @property
    def mlir(self) -> str:
        return str(self.program.module)

    def as_text(self, debug_info: bool = False) -> str:
        """The StableHLO text; with `debug_info=True` each op shows the user's file:line."""
        return self.program.module.operation.get_asm(enable_debug_info=debug_info)

    def __repr__(self):
        return f"<Lowered {self.program.name}: {len(self.program.inputs)} inputs, {len(self.program.outputs)} outputs>"


class Exec:
    """A function JIT-compiled per signature (GoMLX's Exec); `hj.jit` is the decorator form."""

    def __init__(self, fn, *, backend: str | None = None, static_argnums=(), static_argnames=(),
                 cache_size: int = 64, driver: str | None = None, donate_argnums=(), donate_argnames=(),
                 autotune: bool | None = None):
        if not callable(fn):
            raise TypeError(f"hj.jit needs a callable, not {type(fn).__name__}")
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self.backend = backends.get(backend)
        self.driver = backends.check_driver(self.backend, driver)
        self.autotune = _autotune_default() if autotune is None else bool(autotune)
        self.cache_size = cache_size
        self._signature = inspect.signature(fn)
        self._static = self._static_names(static_argnums, static_argnames)
        self._donated = self._parameter_names(donate_argnums, donate_argnames, "donate")
        if self._donated & self._static:
            raise ValueError(f"{sorted(self._donated & self._static)} cannot be both static and donated")
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._fast: dict = {}
        self._lock = threading.Lock()
        self._hits = self._misses = 0
        self._miss_reasons: list[str] = []
        self._evicted: set = set()
        functools.update_wrapper(self, fn)
        self.backend.expect_compile()   # the IREE backend's compile worker starts while the caller goes on

    def _static_names(self, argnums, argnames) -> frozenset:
        names = self._parameter_names(argnums, argnames, "static")
        params = list(self._signature.parameters)
        if params and params[0] == "self":  # a method: the instance is static (hashed by identity)
            names |= {"self"}
        return names

    def _parameter_names(self, argnums, argnames, what: str) -> frozenset:
        params = list(self._signature.parameters)
        argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
        names = set(argnames)
        for i in argnums:
            if not -len(params) <= i < len(params):
                raise ValueError(f"{what}_argnums {i} is out of range for {self.name}{self._signature}")
            names.add(params[i])
        unknown = names - set(params)
        if unknown:
            raise ValueError(f"{what}_argnames {sorted(unknown)} are not parameters of {self.name}{self._signature}")
        return frozenset(names)

    # --- calling ---
    def __call__(self, *args, **kwargs):
        if not kwargs and not dtypes.overrides_active:  # the fast path: positional arrays seen before
            try:
                if len(args) == 1:
                    a = args[0]
                    run = self._fast.get(type(a))  # a numpy scalar: its type is its whole signature
                    if run is None:
                        run = self._fast[(type(a), a.shape, a.dtype)]
                else:
                    run = self._fast[tuple([(type(a), a.shape, a.dtype) for a in args])]
            except (KeyError, AttributeError, TypeError):
                return self._call_slow(args, kwargs)
            self._hits += 1
            return run(args)
        return self._call_slow(args, kwargs)

    def _where(self) -> str:
        code = getattr(self.fn, "__code__", None)
        defined = f"; {self.name} is defined at {os.path.basename(code.co_filename)}:{code.co_firstlineno}" \
            if code else ""
        return f"called at {_trace.user_site()}{defined}"

    def _bind(self, args, kwargs):
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise SignatureError(f"{self.name}(): {e} ({self._where()})") from None
        statics, dynamic = [], []
        for name, value in bound.arguments.items():
            if name in self._static:
                try:
                    hash(value)
                except TypeError:
                    raise SignatureError(f"{self.name}(): static argument {name!r} must be hashable, got a "
                                         f"{type(value).__name__} ({self._where()}); pass a tuple instead of "
                                         "a list, or make it a traced argument") from None
                statics.append((name, value))
            else:
                dynamic.append((name, value))
        return bound, tuple(statics), dynamic

    def _signature_of(self, dynamic):
        leaves, treedefs = [], []
        for name, value in dynamic:
            treedefs.append((name, pytree.flatten(value, leaves)[1]))
        paths = _Paths(tuple(treedefs))
        try:
            specs = tuple([_leaf_spec(x) for x in leaves])
        except _NotALeaf:
            for path, x in zip(paths, leaves):   # again, to name the leaf that does not fit
                try:
                    _leaf_spec(x)
                except _NotALeaf as e:
                    raise SignatureError(f"{self.name}(): argument {path} {e}") from None
            raise
        for k, (x, spec) in enumerate(zip(leaves, specs)):
            if type(x) is np.ndarray and x.dtype is not spec.dtype and x.dtype != spec.dtype:
                leaves[k] = x.astype(spec.dtype)  # big-endian (`>f4`): its values in native order. Such an array
                # never takes the fast path (its dtype is no fast key), so the conversion costs that path nothing
        return leaves, paths, paths.treedefs, specs

    def _call_slow(self, args, kwargs):
        if _trace.current() is not None:       # called inside another trace: inline, as JAX does
            return self.fn(*args, **kwargs)
        entry, leaves = self._entry_for(args, kwargs)
        return entry.finish(entry.call(leaves))

    def _entry_for(self, args, kwargs) -> tuple[_Entry, list]:
        """The cache entry of this call's signature (traced and compiled on a miss), and the flat leaves."""
        bound, statics, dynamic = self._bind(args, kwargs)
        leaves, paths, treedef, specs = self._signature_of(dynamic)
        key = (treedef, specs, statics, dtypes.promotion_mode())
        with self._lock:
            try:
                entry = self._entries.get(key)
            except TypeError:   # the statics hash (checked in _bind): a registered node's aux data does not
                why = "; ".join(filter(None, (pytree.unhashable(t, name) for name, t in treedef))) or \
                    "the structure of the arguments cannot be hashed"
                raise SignatureError(f"{self.name}(): {why} ({self._where()})") from None
            if entry is not None:
                self._hits += 1
                self._entries.move_to_end(key)
            else:
                entry = self._miss(key, bound, paths)
            if not kwargs and not dtypes.overrides_active and len(dynamic) == len(args) \
                    and all(pytree.is_leaf(t) for _, t in treedef) \
                    and all(type(a) in _FAST_TYPES or isinstance(a, np.generic) for a in args):
                fast_key = tuple((type(a), s.shape, s.dtype) for a, s in zip(args, specs))
                if len(fast_key) == 1:  # one argument: its (type, shape, dtype) is the key; a numpy scalar's
                    fast_key = type(args[0]) if isinstance(args[0], np.generic) else fast_key[0]  # type says all
                if fast_key not in self._fast:
                    self._fast[fast_key] = entry.run
                    entry.fast_keys.append(fast_key)
        return entry, leaves

    def _miss(self, key, bound, paths) -> _Entry:
        """Trace and compile for a new signature. A miss counts (cache_info, RecompileWarning) once it compiled: a
        call whose trace raised (a ShapeError in the user's function) cached nothing, and calls that kept failing
        were warned of as recompiles ("pad to a few fixed shapes")."""
        reason = self._miss_reason(key, paths)
        start = time.perf_counter()
        self.backend.expect_compile()
        with COMPILING:  # MLIR's and IREE's C++ throughout: closed to daemon threads at exit (teardown.py)
            program, out_tree = self._trace(key, bound)
            program.why = reason
            traced = time.perf_counter()
            executable = self.backend.load(program, driver=self.driver, autotune=self.autotune,
                                           on_upgrade=functools.partial(self._upgraded, key))
        self._misses += 1
        self._miss_reasons.append(reason)
        if self._misses >= 8 and self._misses & (self._misses - 1) == 0:
            warnings.warn(f"hlojit: {self.name} has been traced and compiled {self._misses} times; the last "
                          f"time because {reason}. Shapes or static values that change on every call defeat "
                          "the cache: pad to a few fixed shapes, or make the changing value a traced argument",
                          RecompileWarning, stacklevel=_trace.user_stacklevel())
        signature = ", ".join(f"{p}: {s}" for p, s in zip(paths, key[1]))
        signature += "".join(f", {n}={v!r}" for n, v in key[2])
        entry = _Entry(key, executable, out_tree, signature, traced - start, time.perf_counter() - traced)
        self._entries[key] = entry
        while len(self._entries) > self.cache_size:
            _, old = self._entries.popitem(last=False)
            for fast_key in old.fast_keys:
                self._fast.pop(fast_key, None)
            self._evicted.add(old.key)
        return entry

    def _upgraded(self, key, quick, optimised):
        """Tiered compilation's optimised build is loaded (in a background thread): calls of this signature
        run it from now on. An entry evicted or cleared meanwhile is left alone (the persistent cache has it)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.executable is not quick:
                return
            entry.use(optimised)
            for fast_key in entry.fast_keys:
                self._fast[fast_key] = entry.run

    def wait_for_optimised(self, timeout: float | None = None) -> bool:
        """Wait until every cached entry runs its optimised build (tiered compilation compiles it in the
        background after a quick first build); False if `timeout` seconds passed first. Benchmarks and tests
        call it; nothing else needs to (the swap is automatic)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            pending = [e.executable.pending for e in self._entries.values()
                       if getattr(e.executable, "pending", None) is not None]
        for background in pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not background.wait(left):
                return False
        return True

    def _miss_reason(self, key, paths) -> str:
        treedef, specs, statics, mode = key
        if key in self._evicted:
            return f"it was evicted earlier (the cache holds {self.cache_size} entries)"
        if not self._entries:
            return "first call: " + abbreviated(f"{p}: {s}" for p, s in zip(paths, specs)) if specs else "first call"
        same_tree = [k for k in self._entries if k[0] == treedef]
        if not same_tree:
            last = next(reversed(self._entries))[0]
            changed = [f"{name}: {pytree.describe(old)} before, now {pytree.describe(new)}"
                       for (name, old), (_, new) in zip(last, treedef) if old != new]
            return "the structure of the arguments (their containers, or a registered class's static fields) " \
                "differs from every cached entry" + (f"; {changed[0]}" if changed else "")

        def differences(other):
            diffs = [f"{p}: {old} before, now {new}" for p, old, new in zip(paths, other[1], specs) if old != new]
            old_static = dict(other[2])
            diffs += [f"static {n}: {old_static.get(n)!r} before, now {v!r}" for n, v in statics
                      if old_static.get(n) != v]
            if other[3] != mode:
                diffs.append(f"promotion mode: {other[3]} before, now {mode}")
            return diffs
        nearest = min(reversed(same_tree), key=lambda k: len(differences(k)))
        return abbreviated(differences(nearest), sep="; ") or "a new signature"

    def _trace(self, key, bound) -> tuple[Program, object]:
        treedef, specs = key[:2]
        donated = []  # flat indices of the donated parameters' leaves
        with _trace.Trace([(s.shape, s.dtype) for s in specs]) as tr:
            tensors = iter([Tensor(v, s.shape, s.dtype, s.weak, tr) for v, s in zip(tr.arguments, specs)])
            start = 0
            for name, subtree in treedef:
                bound.arguments[name] = pytree.unflatten(subtree, tensors)
                count = len(pytree.flatten(bound.arguments[name])[0])
                if name in self._donated:
                    donated += range(start, start + count)
                start += count
            result = self.fn(*bound.args, **bound.kwargs)
            out_leaves, out_tree = pytree.flatten(result)
            outs = [as_tensor(x, f"{self.name} result") for x in out_leaves]
            tr.finish([t.value for t in outs])
            if not tr.module.operation.verify():  # pragma: no cover  (a builder bug, not a user error)
                raise RuntimeError(f"hlojit built invalid StableHLO for {self.name}:\n{tr.module}")
        aliases = donation.mark_donated(tr.module, tuple(donated)) if donated else {}
        program = Program(tr.module, [(s.shape, s.dtype) for s in specs],
                          [(t.shape, t.dtype) for t in outs], self.name, donated=tuple(donated), aliases=aliases)
        return program, out_tree

    # --- introspection ---
    def lower(self, *args, **kwargs) -> Lowered:
        """Trace for these arguments (no compiling): `.mlir` is the StableHLO text."""
        bound, statics, dynamic = self._bind(args, kwargs)
        leaves, paths, treedef, specs = self._signature_of(dynamic)
        program, out_tree = self._trace((treedef, specs, statics, dtypes.promotion_mode()), bound)
        return Lowered(program, out_tree)

    def explain(self, *args, target=None, **kwargs):
        """Every stage of compiling this signature for `target` (default: this backend's, else cpu; a name, "cpu",
        "vmvx", "cuda", is what that IREE backend's calls compile: on cpu the flag set measured for this machine):
        print it for the summary (op counts, dispatches with the ops and lines fused into each, compile
        time per phase, artifact size); `.stage("stablehlo" | "optimized" | "dispatches" | "llvm_ir" |
        "assembly")` for each stage's text. An autotuned function on iree:cpu (no `target` given) explains what
        its calls compile: the program and flag set tuning chose (`.tuning` says what, how and at what cost),
        read from its records where it has them, else measured now as a call would."""
        from ..backends.iree import call_timer
        from ..pipeline import explain, targets, tuning
        program = self.lower(*args, **kwargs).program
        if target is not None:   # a name: what that backend's calls compile (cpu: the machine's flag set)
            return explain.explain(program, target if isinstance(target, targets.Target) else
                                   backends.target_named(target, program))
        if not hasattr(self.backend, "target_for"):   # the reference backend (`target` would measure the machine)
            return explain.explain(program, targets.cpu())
        if self.autotune and self.backend.target.name == "cpu":   # as backend.load does
            choice = tuning.choose(program, self.backend.target, call_timer)
            return explain.explain(choice.source, choice.target, choice.report)
        return explain.explain(program, self.backend.target_for(program))

    def compile(self, *args, **kwargs):
        """The backend executable for these arguments' signature, compiled now if it is not cached yet.
        (IREE executables tell their `driver`, `vmfb` and `compiled.dispatch_count`; a big program compiled as
        two halves, pipeline/halves.py, is a Chain: its `parts` are two such executables.)"""
        return self._entry_for(args, kwargs)[0].executable

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self.name, self._hits, self._misses, self.cache_size,
                             [e.describe() for e in self._entries.values()], list(self._miss_reasons))

    def cache_clear(self):
        with self._lock:
            self._entries.clear()
            self._fast.clear()

    def __repr__(self):
        return f"<hj.Exec {self.name} on {self.backend.name}>"

    def __get__(self, instance, owner=None):  # methods: bind like a function would
        return self if instance is None else functools.partial(self, instance)


def _autotune_default() -> bool:
    return os.environ.get("HLOJIT_AUTOTUNE", "").strip().lower() in ("1", "true", "yes", "on")


def jit(fn=None, *, backend: str | None = None, static_argnums=(), static_argnames=(), cache_size: int = 64,
        driver: str | None = None, donate_argnums=(), donate_argnames=(), autotune: bool | None = None):
    """Compile `fn` just in time, once per argument signature. Usable as `@hj.jit` or `@hj.jit(backend=...)`.

    `autotune` (default: HLOJIT_AUTOTUNE=1): on iree:cpu, compile each signature with every candidate cpu
    flag set, time it, keep the fastest (remembered in the compile cache; pipeline/tuning.py). Otherwise
    iree:cpu uses the flag set measured fastest on this machine.

    `driver`: "local-sync" or "local-task" for the CPU targets (default None: local-sync for small work,
    local-task for big). `donate_argnums`/`donate_argnames`: arguments whose hj.Arrays the call consumes,
    so IREE may write a result into their buffers (numpy arguments are copied on upload anyway)."""
    options = dict(backend=backend, static_argnums=static_argnums, static_argnames=static_argnames,
                   cache_size=cache_size, driver=driver, donate_argnums=donate_argnums,
                   donate_argnames=donate_argnames, autotune=autotune)
    if fn is None:
        return functools.partial(jit, **options)
    return Exec(fn, **options)


def device_put(x, backend: str | None = None):
    """JAX's `device_put`: every array leaf of the pytree `x` (a numpy array or scalar, an hj.Array) copied once
    onto `backend`'s device as an hj.Array (backends.device_put says why that saves a copy a call); the tree's
    structure, and leaves that are no arrays (None, strings), stay as they are."""
    def place(leaf):
        arrays = (np.ndarray, np.generic, backends.Array, int, float, complex, bool)
        return backends.device_put(leaf, backend) if isinstance(leaf, arrays) else leaf
    leaves, treedef = pytree.flatten(x)
    return pytree.unflatten(treedef, [place(leaf) for leaf in leaves])
