"""Hand-written llvm-cpu dispatches for hlojit's composites (frontend/composites.py): where StableHLO can only say
"a loop of small dispatches", one dispatch whose loops run inside it.

A Cholesky factorization written in StableHLO is n column steps of a few dispatches each; at 256 x 256 those
~500 dispatches took ~1.5 ms where LAPACK takes ~0.4 (the dispatches' own cost, not the arithmetic). A
`hal.executable.source` may hold any MLIR the llvm-cpu backend lowers (scf loops, memref loads, vector ops), and
`flow.dispatch` calls it like a fused dispatch of IREE's own. Each kernel is a text template of that MLIR
(factorization_kernels.py, qr_kernels.py, eigh_kernel.py, svd_kernel.py), one workgroup per matrix of a batch (a
batch spreads over local-task's workers; eigh's and svd's rotations take a workgroup per chunk of columns of each
matrix, orgqr from 512 columns four; eigh with vectors is four dispatches, svd five, orgqr's among them,
rotation_buffer.py's last); this module wraps each in its executable and
claims a composite only for the dtypes and shapes its kernel was written and tested for; every other composite
is inlined (legalize.calls_inlined),
so the reference backend, vmvx and cuda run the decomposition, as do shapes a kernel does not take. The LU,
Cholesky and QR kernels are blocked inside, their updates register-tiled (register_tiles.py); blocked forms of
Cholesky and QR around the kernels' calls (matmuls on every core between kernels on narrow panels) ran slower
than these one-kernel forms on the 2-vCPU Xeon at every size the kernels take, and compiled for long (git log of
blocked_kernels.py, removed 2026-12-06).

The cpu target's first two rewrites: `calls_inlined_but_kernels` (every other composite inlined), then
`kernel_dispatches` (each claimed composite becomes a call of its kernel, inlined; the decompositions left
uncalled are dropped before any other rewrite reads them: solve 256²'s first call 0.73 s against 1.26 when they
went through every rewrite, svd's 4.7 against 5.7). No later rewrite touches a flow.dispatch.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple

import numpy as np
from iree.compiler import ir

from ..dialects.types import composite_attributes, dtype_of, shape_of
from .eigh_kernel import eigenvalues_body, ql_body, rotations_body, tridiagonal_body
from .factorization_kernels import cholesky_body, lu_body, substitution_body
from .kernel_text import executable
from .legalize import call_of_source, composites_as_calls, inline_calls, walk
from .qr_kernels import form_q_body, form_q_bounds, householder_body
from .register_tiles import padded_row
from .rotation_buffer import buffer_shapes, chunk_columns
from .svd_kernel import reflector_counts, rotation_chunks, rotations_body as svd_rotations_body, svd_body

_ELEMENT = {np.dtype(np.float32): ("f32", 16, "0x7FC00000"), np.dtype(np.float64): ("f64", 8, "0x7FF8000000000000")}
MAX_WORKGROUPS = 65535   # one workgroup per matrix
MAX_N = 2048             # above, one core's loops would lose to the decomposition's matmuls on all cores


def _kernel_sized(op, columns: int) -> bool:
    """Whether the first operand's dtype has a kernel, its batch (all but the last two dimensions) is 1 to
    MAX_WORKGROUPS matrices, and `columns` (what sizes the kernel's rows and scratch) is 1 to MAX_N."""
    shape, dtype = shape_of(op.operands[0].type), dtype_of(op.operands[0].type)
    return dtype in _ELEMENT and 1 <= columns <= MAX_N and 1 <= math.prod(shape[:-2]) <= MAX_WORKGROUPS


def _matrices_claim(op) -> bool:
    """A batch of square f32 or f64 matrices (..., n, n) with 1 <= n <= MAX_N, at most MAX_WORKGROUPS."""
    return _kernel_sized(op, shape_of(op.operands[0].type)[-1])


def _dispatch(symbol: str, arguments: list[str], operands: list[str], results: list[str], name: str) -> str:
    """`%{name}:k = flow.dispatch` of @symbol's executable: arguments [SSA value], operands / results [flat type]."""
    return (f"    %{name}:{len(results)} = flow.dispatch @{symbol}_executable::@{symbol}({', '.join(arguments)}) : "
            f"({', '.join(operands)}) -> ({', '.join(results)})")


def _assembled(aliases: list[str], inners: list[str]) -> str:
    return "\n".join(aliases) + "\nmodule {\n" + "\n".join(inners) + "\n}"


def _parts(symbol: str, batch: int, operands: list[tuple[str, str]], results: list[tuple[str, str]],
           body: str, returned: int | None = None, parts: int = 1) -> tuple[list[str], list[str]]:
    """(aliases, inner texts) of a kernel's executable (`parts` workgroups a matrix of the batch) and
    `func.func private @symbol(operands) -> results` that dispatches it (its first `returned` results only, where
    the rest are the kernel's scratch). `operands`, `results`: [(the dispatch's type, its batch flattened; the
    function's type)]."""
    kept = results[:returned]
    alias, text = executable(symbol, batch * parts, len(operands), len(results), body)
    arguments = ", ".join(f"%a{i}: {outer}" for i, (_, outer) in enumerate(operands))
    flatten = "\n".join(f"    %f{i} = stablehlo.reshape %a{i} : ({outer}) -> {flat}"
                         for i, (flat, outer) in enumerate(operands))
    reshapes = "\n".join(f"    %out{i} = stablehlo.reshape %k#{i} : ({flat}) -> {outer}"
                          for i, (flat, outer) in enumerate(kept))
    out_types = ", ".join(outer for _, outer in kept)
    dispatch = _dispatch(symbol, [f"%f{i}" for i in range(len(operands))], [flat for flat, _ in operands],
                         [flat for flat, _ in results], "k")
    function = f"""  func.func private @{symbol}({arguments}) -> ({out_types}) {{
{flatten}
{dispatch}
{reshapes}
    return {", ".join(f"%out{i}" for i in range(len(kept)))} : {out_types}
  }}"""
    return [alias], [text, function]


def _module(symbol: str, batch: int, operands: list[tuple[str, str]], results: list[tuple[str, str]],
            body: str, returned: int | None = None) -> str:
    """A module holding a kernel's executable and the function dispatching it (_parts)."""
    return _assembled(*_parts(symbol, batch, operands, results, body, returned))


def _types(batch_shape: tuple, dims: tuple, element: str) -> tuple[str, str]:
    """(flat, outer) tensor types of a batch of `dims`-shaped values (flat: the batch as one dimension)."""
    flat = "x".join(map(str, (math.prod(batch_shape), *dims)))
    outer = "x".join(map(str, (*batch_shape, *dims)))
    return f"tensor<{flat}x{element}>", f"tensor<{outer}{'x' if outer else ''}{element}>"


def _flat(batch: int, dims: tuple, element: str) -> str:
    """The flat tensor type of a batch of `dims`-shaped values (a dispatch's operand or result)."""
    return _types((batch,), dims, element)[0]


def _cholesky_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """A module holding the Cholesky kernel's executable and `func.func private @symbol(a) -> L`."""
    element, lanes, nan = _ELEMENT[dtype]
    shape = shapes[0]
    n, batch = shape[-1], math.prod(shape[:-2])
    matrix = _types(shape[:-2], (n, n), element)
    work = _types(shape[:-2], (n, padded_row(n, element)), element)
    return _module(symbol, batch, [matrix], [matrix, work], cholesky_body(batch, n, element, lanes, nan), returned=1)


def _lu_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """The LU kernel's module: `func.func private @symbol(a) -> (lu, pivots, order, swaps)` as lu.factor's."""
    element, lanes, _ = _ELEMENT[dtype]
    shape = shapes[0]
    n, batch, lead = shape[-1], math.prod(shape[:-2]), shape[:-2]
    matrix = _types(lead, (n, n), element)
    results = [matrix, _types(lead, (n,), "i32"), _types(lead, (n,), "i32"), _types(lead, (), "i32")]
    work = _types(lead, (n, padded_row(n, element)), element)
    return _module(symbol, batch, [matrix], results + [work], lu_body(batch, n, element, lanes), returned=4)


def _householder_claims(op) -> bool:
    shape = shape_of(op.operands[0].type)
    return shape[-2] >= 1 and _kernel_sized(op, shape[-1])


def _householder_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """`func.func private @symbol(a) -> (r, v, tau)` as qr.householder's."""
    element, lanes, _ = _ELEMENT[dtype]
    (*lead, m, n), k = shapes[0], min(shapes[0][-2:])
    batch = math.prod(lead)
    results = [_types(tuple(lead), (m, n), element), _types(tuple(lead), (m, k), element),
               _types(tuple(lead), (1, k), element)]
    scratch = [_types(tuple(lead), (lanes, n), element), _types(tuple(lead), (m, lanes), element),
               _types(tuple(lead), (m, padded_row(n, element)), element)]
    return _module(symbol, batch, [_types(tuple(lead), (m, n), element)], results + scratch,
                   householder_body(batch, m, n, element, lanes), returned=3)


def _form_q_claims(op) -> bool:
    m, k = shape_of(op.operands[0].type)[-2:]
    return min(m, k) >= 1 and _kernel_sized(op, composite_attributes(op)["columns"])


def _form_q_parts(symbol: str, shapes: list, dtype, attributes: dict) -> tuple[list[str], list[str]]:
    element, lanes, _ = _ELEMENT[dtype]
    (*lead, m, k), columns = shapes[0], attributes["columns"]
    batch = math.prod(lead)
    operands = [_types(tuple(lead), (m, k), element), _types(tuple(lead), (1, k), element)]
    parts = len(form_q_bounds(m, k, columns, lanes)) - 1
    results = [_types(tuple(lead), (m, columns), element), _types(tuple(lead), (lanes, columns), element),
               _types(tuple(lead), (parts * m, lanes), element),    # a panel's reflectors, a copy a workgroup
               _types(tuple(lead), (m, padded_row(columns, element)), element)]
    return _parts(symbol, batch, operands, results, form_q_body(batch, m, k, columns, element, lanes), returned=1,
                  parts=parts)


def _form_q_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """`func.func private @symbol(v, tau) -> q` as qr.form_q's."""
    return _assembled(*_form_q_parts(symbol, shapes, dtype, attributes))


SCRATCH_BYTES = 16384   # a kernel's stack scratch (IREE's llvm-cpu allows 32 KiB a workgroup)


def _by_dots(n: int, r: int, dtype, lanes: int) -> bool:
    return r < lanes and r * n * np.dtype(dtype).itemsize <= SCRATCH_BYTES


def _solve_claims(op) -> bool:
    """A batch of square f32/f64 matrices and right-hand sides of the same batch (the last operand)."""
    matrix, rhs = shape_of(op.operands[0].type), shape_of(op.operands[-1].type)
    return rhs[:-2] == matrix[:-2] and rhs[-1] >= 1 and _kernel_sized(op, matrix[-1])


def _lu_solve_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """`func.func private @symbol(lu, order, b) -> x` as lu.solve_factored's (not transposed)."""
    element, lanes, _ = _ELEMENT[dtype]
    (*lead, n, _), r = shapes[0], shapes[2][-1]
    batch, lead = math.prod(lead), tuple(lead)
    rhs = _types(lead, (n, r), element)
    body = substitution_body(batch, n, r, element, lanes, True, [(True, True), (False, False)],
                              _by_dots(n, r, dtype, lanes))
    return _module(symbol, batch, [_types(lead, (n, n), element), _types(lead, (n,), "i32"), rhs], [rhs], body)


def _triangular_solve_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """`func.func private @symbol(t, b) -> x` as triangular.substitute's (lower and unit attributes)."""
    element, lanes, _ = _ELEMENT[dtype]
    (*lead, n, _), r = shapes[0], shapes[1][-1]
    batch, lead = math.prod(lead), tuple(lead)
    rhs = _types(lead, (n, r), element)
    phases = [(bool(attributes["lower"]), bool(attributes["unit"]))]
    body = substitution_body(batch, n, r, element, lanes, False, phases, _by_dots(n, r, dtype, lanes))
    return _module(symbol, batch, [_types(lead, (n, n), element), rhs], [rhs], body)


def _eigh_claims(op) -> bool:
    """_matrices_claim; with vectors, n >= 2 (the reflections' orgqr has n - 1 columns)."""
    n = shape_of(op.operands[0].type)[-1]
    return _matrices_claim(op) and (n >= 2 or not composite_attributes(op)["vectors"])


def _eigh_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """`func.func private @symbol(a) -> (w, v)` (w alone without `vectors`) as spectral.symmetric_eigen's.
    Eigenvalues alone: one dispatch (eigenvalues_body). With vectors, four: tred2's reduction, its reflections
    accumulated by the QR kernels' orgqr (compact WY panels), tql2 buffering its rotations, the rotations applied
    by a workgroup per chunk of columns (eigh_kernel.py, rotation_buffer.py)."""
    element, lanes, _ = _ELEMENT[dtype]
    (*lead, n, _), vectors = shapes[0], bool(attributes["vectors"])
    batch, lead = math.prod(lead), tuple(lead)
    matrix = _types(lead, (n, n), element)
    w = _types(lead, (n,), element)
    reduction_vectors = _types(lead, (3, n), element)
    if not vectors:   # W and the reduction's vectors are scratch: results nobody reads, dropped after the dispatch
        return _module(symbol, batch, [matrix], [w, matrix, reduction_vectors],
                       eigenvalues_body(batch, n, element, lanes), returned=1)
    flat = functools.partial(_flat, batch, element=element)
    tri, ql, form_q, rotations = (f"{symbol}_{part}" for part in ("tridiagonal", "ql", "form_q", "rotations"))
    tri_results = [flat((n,)), flat((n,)), flat((n - 1, n - 1)), flat((1, n - 1)), flat((n, n)), flat((3, n))]
    ql_operands = [flat((n - 1, n - 1)), flat((n,)), flat((n,))]
    work = flat((n, padded_row(n, element)))
    buffer_dims, record_dims = buffer_shapes(batch, n, element, pairs=1)
    ql_results = [flat((n,)), work, flat(buffer_dims[1:]), _flat(batch, record_dims[1:], "i32")]
    rotations_results = [matrix[0], work]
    aliases, inners = _form_q_parts(form_q, [(batch, n - 1, n - 1), (batch, 1, n - 1)], dtype, {"columns": n - 1})
    for name, body, workgroups, operand_count, result_count in (
            (tri, tridiagonal_body(batch, n, element, lanes), batch, 1, len(tri_results)),
            (ql, ql_body(batch, n, element, lanes), batch, len(ql_operands), len(ql_results)),
            (rotations, rotations_body(batch, n, element, lanes), batch * -(-n // chunk_columns(lanes, (n,))), 3, 2)):
        alias, text = executable(name, workgroups, operand_count, result_count, body)
        aliases.append(alias)
        inners.append(text)
    inners.append(f"""  func.func private @{symbol}(%a: {matrix[1]}) -> ({w[1]}, {matrix[1]}) {{
    %f = stablehlo.reshape %a : ({matrix[1]}) -> {matrix[0]}
{_dispatch(tri, ["%f"], [matrix[0]], tri_results, "t")}
    %q = func.call @{form_q}(%t#2, %t#3) : ({tri_results[2]}, {tri_results[3]}) -> {ql_operands[0]}
{_dispatch(ql, ["%q", "%t#0", "%t#1"], ql_operands, ql_results, "k")}
{_dispatch(rotations, ["%k#1", "%k#2", "%k#3"], ql_results[1:], rotations_results, "r")}
    %w = stablehlo.reshape %k#0 : ({w[0]}) -> {w[1]}
    %v = stablehlo.reshape %r#0 : ({matrix[0]}) -> {matrix[1]}
    return %w, %v : {w[1]}, {matrix[1]}
  }}""")
    return _assembled(aliases, inners)


def _svd_claims(op) -> bool:
    """A batch of f32/f64 (..., m, n) with m >= n >= 1 (the frontend transposes wide ones); with vectors n >= 2
    (V's orgqr has n - 1 columns)."""
    m, n = shape_of(op.operands[0].type)[-2:]
    return m >= n and _kernel_sized(op, n) and (n >= 2 or not composite_attributes(op)["vectors"])


def _svd_source(symbol: str, shapes: list, dtype, attributes: dict) -> str:
    """`func.func private @symbol(a) -> (u, s, vh)` (s alone without `vectors`) as spectral's svd of a tall a.
    Singular values alone: one dispatch. With vectors, five: the bidiagonalization, orgqr (the QR kernels' form_q)
    forming U and V from its reflections, the QR steps buffering their rotations, the rotations applied by a
    workgroup per chunk of U^T's and V^T's columns (svd_kernel.py, rotation_buffer.py)."""
    element, lanes, nan = _ELEMENT[dtype]
    (*lead, m, n), vectors, columns = shapes[0], bool(attributes["vectors"]), attributes["columns"]
    batch, lead = math.prod(lead), tuple(lead)
    a, s = _types(lead, (m, n), element), _types(lead, (n,), element)
    if not vectors:
        scratch = [_types(lead, (n, m), element), s, _types(lead, (2, m), element)]
        body = svd_body(batch, m, n, columns, element, lanes, nan, "values")
        return _module(symbol, batch, [a], [s] + scratch, body, returned=1)
    flat = functools.partial(_flat, batch, element=element)
    ku, kv = reflector_counts(m, n)
    bidiagonal, steps, form_u, form_v, rotations = (f"{symbol}_{part}" for part in
                                                    ("bidiagonal", "steps", "form_u", "form_v", "rotations"))
    bidiagonal_results = [flat((n,)), flat((n,)), flat((m, ku)), flat((1, ku)), flat((n - 1, kv)), flat((1, kv)),
                          flat((n, m)), flat((2, m)), flat((n, n))]
    steps_operands = [flat((n,)), flat((n,)), flat((m, columns)), flat((n - 1, n - 1))]
    buffer_dims, record_dims = buffer_shapes(batch, n, element, pairs=2)
    buffer = [flat(buffer_dims[1:]), _flat(batch, record_dims[1:], "i32")]
    steps_results = [flat((n,)), flat((columns, m)), flat((n, n)), flat((n,)), *buffer]
    rotations_operands = [flat((columns, m)), flat((n, n)), *buffer]
    rotations_results = [flat((m, columns)), flat((n, n)), flat((n, padded_row(m, element))),
                         flat((n, padded_row(n, element)))]
    aliases, inners = _form_q_parts(form_u, [(batch, m, ku), (batch, 1, ku)], dtype, {"columns": columns})
    more = _form_q_parts(form_v, [(batch, n - 1, kv), (batch, 1, kv)], dtype, {"columns": n - 1})
    aliases += more[0]
    inners += more[1]
    chunks = sum(rotation_chunks(m, n, lanes))
    for name, workgroups, operand_count, result_count, body in (
            (bidiagonal, batch, 1, len(bidiagonal_results),
             svd_body(batch, m, n, columns, element, lanes, nan, "bidiagonal")),
            (steps, batch, len(steps_operands), len(steps_results),
             svd_body(batch, m, n, columns, element, lanes, nan, "steps")),
            (rotations, batch * chunks, len(rotations_operands), len(rotations_results),
             svd_rotations_body(batch, m, n, columns, element, lanes))):
        alias, text = executable(name, workgroups, operand_count, result_count, body)
        aliases.append(alias)
        inners.append(text)
    u, vh = _types(lead, (m, columns), element), _types(lead, (n, n), element)
    inners.append(f"""  func.func private @{symbol}(%a: {a[1]}) -> ({u[1]}, {s[1]}, {vh[1]}) {{
    %f = stablehlo.reshape %a : ({a[1]}) -> {a[0]}
{_dispatch(bidiagonal, ["%f"], [a[0]], bidiagonal_results, "t")}
    %qu = func.call @{form_u}(%t#2, %t#3) : ({bidiagonal_results[2]}, {bidiagonal_results[3]}) -> {steps_operands[2]}
    %qv = func.call @{form_v}(%t#4, %t#5) : ({bidiagonal_results[4]}, {bidiagonal_results[5]}) -> {steps_operands[3]}
{_dispatch(steps, ["%t#0", "%t#1", "%qu", "%qv"], steps_operands, steps_results, "k")}
{_dispatch(rotations, ["%k#1", "%k#2", "%k#4", "%k#5"], rotations_operands, rotations_results, "r")}
    %u = stablehlo.reshape %r#0 : ({u[0]}) -> {u[1]}
    %s = stablehlo.reshape %k#0 : ({s[0]}) -> {s[1]}
    %vh = stablehlo.reshape %r#1 : ({vh[0]}) -> {vh[1]}
    return %u, %s, %vh : {u[1]}, {s[1]}, {vh[1]}
  }}""")
    return _assembled(aliases, inners)


class Kernel(NamedTuple):
    claims: Callable      # claims(composite op) -> bool: the kernel was written for its shapes and dtypes
    source: Callable      # source(symbol, operand shapes, dtype, composite attributes) -> module text


KERNELS = {"hlojit.cholesky": Kernel(_matrices_claim, _cholesky_source),
           "hlojit.lu": Kernel(_matrices_claim, _lu_source),
           "hlojit.lu_solve": Kernel(_solve_claims, _lu_solve_source),
           "hlojit.triangular_solve": Kernel(_solve_claims, _triangular_solve_source),
           "hlojit.eigh": Kernel(_eigh_claims, _eigh_source),
           "hlojit.svd": Kernel(_svd_claims, _svd_source),
           "hlojit.householder": Kernel(_householder_claims, _householder_source),
           "hlojit.form_q": Kernel(_form_q_claims, _form_q_source)}


def _name(op) -> str:
    return ir.StringAttr(op.attributes["name"]).value


def claimed(op) -> bool:
    """Whether a kernel takes this composite op."""
    kernel = KERNELS.get(_name(op))
    return kernel is not None and kernel.claims(op)


def calls_inlined_but_kernels(module: ir.Module) -> int:
    """legalize.calls_inlined, except the composites a kernel claims (kernel_dispatches, next, takes them)."""
    return composites_as_calls(module, keep=claimed)


def _symbol(name: str, shapes: list, dtype, attributes: dict) -> str:
    return "_".join([f"{name.replace('.', '_')}_kernel", *("x".join(map(str, s)) for s in shapes), dtype.name,
                     *(f"{k}{v}" for k, v in sorted(attributes.items()))])


def kernel_dispatches(module: ir.Module) -> int:
    """Each composite a kernel claims as a call of the kernel's dispatch function; the decompositions left uncalled
    are dropped, and the calls inlined."""
    count = 0
    for op in [op for op in walk(module.operation) if op.name == "stablehlo.composite" and claimed(op)]:
        name, shapes, dtype = _name(op), [shape_of(v.type) for v in op.operands], dtype_of(op.operands[0].type)
        attributes = composite_attributes(op)
        call_of_source(module, op, _symbol(name, shapes, dtype, attributes),
                       lambda symbol: KERNELS[name].source(symbol, shapes, dtype, attributes))
        count += 1
    if count:
        inline_calls(module)
    return count
