"""`einsum` and `einsum_path`: numpy's subscripts, contracted pairwise in the order that costs fewest FLOPs.

Each operand first loses what only it has: a label repeated within it becomes a diagonal, a label no other
operand and not the output has is summed away. Then operands are contracted two at a time by one
`dot_general` each: labels both share and something later still needs are batch dimensions, labels both
share and nothing later needs are contracted, the rest are free. The order is chosen on the static shapes:
`optimize="optimal"` (the default, as JAX's) searches every order by dynamic programming over subsets of
operands (exact up to 8 operands: 3^n splits; greedy beyond), `"greedy"` joins the cheapest pair each time,
`False` goes left to right, and an explicit path (numpy's `einsum_path` format) is taken as given.
"""
from __future__ import annotations

import functools
import itertools
import math
import string

from ...errors import ShapeError
from ..tensor import Tensor
from . import _core
from ._core import fail
from .matmul import dot_general
from .reductions import sum as _sum
from .shape import diagonal, transpose

_LETTERS = set(string.ascii_letters)


def _parse(subscripts: str, shapes: list[tuple]) -> tuple[list[str], str]:
    """Explicit per-operand label strings and the output's, with `...` replaced by upper-case-free labels."""
    if not isinstance(subscripts, str):
        fail(TypeError, "einsum", f"subscripts must be a string, not {type(subscripts).__name__}")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        fail(ShapeError, "einsum", f"{subscripts!r} names {len(terms)} operands, {len(shapes)} were given")
    used = set(spec) & _LETTERS
    spare = iter(sorted(_LETTERS - used, reverse=True))   # labels for the dimensions `...` covers
    ellipsis_rank = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            ellipsis_rank = max(ellipsis_rank, len(shape) - (len(term) - 3))
    broadcast = "".join(next(spare) for _ in range(ellipsis_rank))[::-1]
    labels = []
    for term, shape in zip(terms, shapes):
        bad = set(term.replace("...", "")) - _LETTERS
        if bad or term.count("...") > 1:
            fail(ValueError, "einsum", f"invalid subscripts {subscripts!r}")
        if "..." in term:
            rank = len(shape) - (len(term) - 3)
            if rank < 0:
                fail(ShapeError, "einsum", f"operand {term!r} has rank {len(shape)}, fewer than its labels")
            term = term.replace("...", broadcast[len(broadcast) - rank:])
        if len(term) != len(shape):
            fail(ShapeError, "einsum", f"operand subscripts {term!r} do not match its shape {shape}")
        labels.append(term)
    if arrow:
        if set(output.replace("...", "")) - _LETTERS or output.count("...") > 1:
            fail(ValueError, "einsum", f"invalid output subscripts {output!r}")
        output = output.replace("...", broadcast)
        missing = set(output) - set("".join(labels))
        if missing or len(set(output)) != len(output):
            fail(ValueError, "einsum", f"output subscripts {output!r} name labels that are repeated or not in "
                                       "any operand")
    else:   # implicit mode: the broadcast dimensions, then the labels that appear once, in order
        counts = {}
        for c in "".join(labels):
            counts[c] = counts.get(c, 0) + 1
        output = broadcast + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in broadcast))
    return labels, output


def _sizes(labels: list[str], shapes: list[tuple]) -> dict:
    """Each label's size; a size-1 dimension broadcasts against a larger one, as numpy allows."""
    sizes: dict = {}
    for term, shape in zip(labels, shapes):
        for c, d in zip(term, shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                fail(ShapeError, "einsum", f"label {c!r} has size {sizes[c]} in one operand and {d} in another")
    return sizes


def _pair_cost(a: frozenset, b: frozenset, sizes: dict) -> int:
    return math.prod(sizes[c] for c in a | b)


def _contracted(a: str, b: str, keep: set) -> str:
    """Labels of the product of operands labelled a and b when `keep` labels are still needed after."""
    return "".join(dict.fromkeys(c for c in a + b if c in keep))


def contraction_path(labels: list[str], output: str, sizes: dict, optimize="optimal") -> list[tuple[int, int]]:
    """Pairs of positions in the list of remaining operands, numpy's `einsum_path` convention: each step
    removes the two and appends their product."""
    n = len(labels)
    if n < 2:
        return []
    if optimize is False or optimize is None:
        return [(0, 1)] * (n - 1)
    if isinstance(optimize, (list, tuple)):
        path = [tuple(p) for p in (optimize[1:] if optimize and optimize[0] == "einsum_path" else optimize)]
        if len(path) != n - 1 or any(len(p) != 2 for p in path):
            fail(ValueError, "einsum", f"optimize path {optimize!r} does not contract {n} operands pairwise")
        return path
    if optimize is True:
        optimize = "optimal"
    if optimize not in ("optimal", "greedy", "auto"):
        fail(ValueError, "einsum", f"optimize must be 'optimal', 'greedy', True, False or a path, not {optimize!r}")
    if optimize == "greedy" or n > 8:
        return _greedy(labels, output, sizes)
    return _optimal(labels, output, sizes)


def _needed(subset: frozenset, labels: list[str], output: str) -> set:
    """Labels that something outside `subset` (other operands, the output) still needs."""
    outside = set(output).union(*(labels[i] for i in range(len(labels)) if i not in subset))
    return outside


def _optimal(labels: list[str], output: str, sizes: dict) -> list[tuple[int, int]]:
    """Exact search over subsets: best[S] = min over splits S = A + B of best[A] + best[B] + cost(A, B)."""
    n = len(labels)
    full = frozenset(range(n))

    @functools.lru_cache(maxsize=None)
    def term(subset: frozenset) -> str:
        if len(subset) == 1:
            return labels[next(iter(subset))]
        keep = _needed(subset, labels, output)
        return "".join(dict.fromkeys(c for i in sorted(subset) for c in labels[i] if c in keep))

    @functools.lru_cache(maxsize=None)
    def best(subset: frozenset) -> tuple[int, tuple]:
        if len(subset) == 1:
            return 0, ()
        items = sorted(subset)
        first, rest = items[0], items[1:]
        choice = None
        for r in range(0, len(rest)):   # splits with `first` in A, so each split is seen once
            for others in itertools.combinations(rest, r):
                a = frozenset((first, *others))
                b = subset - a
                cost = best(a)[0] + best(b)[0] + _pair_cost(frozenset(term(a)), frozenset(term(b)), sizes)
                if choice is None or cost < choice[0]:
                    choice = (cost, (a, b))
        return choice

    steps = []   # (A, B) in an order where both halves are done before their join

    def schedule(subset):
        if len(subset) == 1:
            return
        a, b = best(subset)[1]
        schedule(a), schedule(b)
        steps.append((a, b))
    schedule(full)
    return _as_positions(steps, n)


def _greedy(labels: list[str], output: str, sizes: dict) -> list[tuple[int, int]]:
    groups = [frozenset((i,)) for i in range(len(labels))]
    terms = list(labels)
    steps = []
    while len(groups) > 1:
        def cost(pair):
            i, j = pair
            return _pair_cost(frozenset(terms[i]), frozenset(terms[j]), sizes)
        i, j = min(itertools.combinations(range(len(groups)), 2), key=cost)
        merged = groups[i] | groups[j]
        keep = _needed(merged, labels, output)
        steps.append((groups[i], groups[j]))
        terms.append(_contracted(terms[i], terms[j], keep))
        groups.append(merged)
        for k in (j, i):
            del groups[k], terms[k]
    return _as_positions(steps, len(labels))


def _as_positions(steps, n: int) -> list[tuple[int, int]]:
    """Joins of operand subsets as numpy-style positions in the shrinking list of operands."""
    current = [frozenset((i,)) for i in range(n)]
    path = []
    for a, b in steps:
        i, j = sorted((current.index(a), current.index(b)))
        path.append((i, j))
        del current[j], current[i]
        current.append(a | b)
    return path


def flop_count(labels: list[str], output: str, sizes: dict, path) -> int:
    """Multiply-adds of contracting along `path` (each pairwise step: the product of all its labels' sizes)."""
    terms = list(labels)
    total = 0
    for i, j in path:
        a, b = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = set(output).union(*rest)
        total += _pair_cost(frozenset(a), frozenset(b), sizes)
        for k in sorted((i, j), reverse=True):
            del terms[k]
        terms.append(_contracted(a, b, keep))
    return total


def _reduce_alone(x: Tensor, term: str, keep: set) -> tuple[Tensor, str]:
    """Take the diagonal of labels repeated within one operand, and sum labels nothing else needs."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        first, second = term.index(c), term.index(c, term.index(c) + 1)
        x = diagonal(x, 0, first, second)          # the diagonal becomes the last axis
        term = "".join(t for k, t in enumerate(term) if k not in (first, second)) + c
    alone = tuple(k for k, c in enumerate(term) if c not in keep)
    if alone:
        x = _sum(x, axis=alone)
        term = "".join(c for k, c in enumerate(term) if k not in alone)
    return x, term


def _broadcast_ones(x: Tensor, term: str, sizes: dict) -> Tensor:
    target = tuple(sizes[c] for c in term)
    return x if x.shape == target else _core.broadcast_to(x, target, "einsum")


def _contract_pair(x: Tensor, xt: str, y: Tensor, yt: str, keep: set) -> tuple[Tensor, str]:
    shared = [c for c in xt if c in yt]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    out = dot_general(x, y, (tuple(xt.index(c) for c in contract), tuple(yt.index(c) for c in contract)),
                      (tuple(xt.index(c) for c in batch), tuple(yt.index(c) for c in batch)))
    free_x = [c for c in xt if c not in shared]
    free_y = [c for c in yt if c not in shared]
    return out, "".join(batch + free_x + free_y)


def einsum(subscripts: str, *operands, optimize="optimal", dtype=None) -> Tensor:
    """numpy/jax.numpy einsum: `einsum("bij,bjk->bik", a, b)`, implicit output, `...`, repeated labels
    (diagonals), any number of operands, contracted in the cheapest order (`optimize`, see the module)."""
    tensors, _, _ = _core.promote("einsum", *operands, dtype=dtype)
    labels, output = _parse(subscripts, [t.shape for t in tensors])
    sizes = _sizes(labels, [t.shape for t in tensors])
    terms = []
    for i, (x, term) in enumerate(zip(tensors, labels)):
        others = set(output).union(*(labels[k] for k in range(len(labels)) if k != i))
        x, term = _reduce_alone(x, term, others)
        tensors[i], terms_i = x, term
        terms.append(terms_i)
    path = contraction_path(terms, output, sizes, optimize)
    tensors = [_broadcast_ones(x, t, sizes) for x, t in zip(tensors, terms)]
    for i, j in path:
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = set(output).union(*rest)
        product, term = _contract_pair(tensors[i], terms[i], tensors[j], terms[j], keep)
        for k in (j, i):
            del tensors[k], terms[k]
        tensors.append(product)
        terms.append(term)
    (x,), (term,) = tensors, terms
    x, term = _reduce_alone(x, term, set(output))
    return transpose(x, [term.index(c) for c in output]) if term != output else x


def einsum_path(subscripts: str, *operands, optimize="optimal"):
    """numpy's einsum_path: (["einsum_path", (i, j), ...], a report with the naive and optimized FLOPs).
    Takes arrays or shapes-carrying objects; nothing is traced."""
    shapes = [tuple(getattr(x, "shape", ())) for x in operands]
    labels, output = _parse(subscripts, shapes)
    sizes = _sizes(labels, shapes)
    path = contraction_path(labels, output, sizes, optimize)
    naive = math.prod(sizes.values()) * max(len(labels) - 1, 1)
    report = (f"  Complete contraction:  {subscripts}\n  Naive FLOP count:  {naive:.4g}\n"
              f"  Optimized FLOP count:  {flop_count(labels, output, sizes, path):.4g}")
    return ["einsum_path", *path], report
