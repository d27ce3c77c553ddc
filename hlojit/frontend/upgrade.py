"""Newer StableHLO, spelt as the StableHLO that hlojit's MLIR (iree-base-compiler 3.13) parses.

A module from a newer StableHLO than the bundled parser knows fails to parse although its meaning is
expressible in older ops. `upgrade(text)` rewrites those forms in the text, before the parse, into older ops
with the same semantics:

- `stablehlo.square x` (StableHLO took it over from CHLO, with CHLO's definition) is `stablehlo.multiply x, x`
  on integers and floats; on complex numbers it becomes `chlo.square x`: ((re - im) (re + im), 2 re im), whose
  real part does not overflow where re**2 - im**2 would.
- `stablehlo.compare DIR, a, b, WEAKORDER` orders floats as numpy sorts them: -0 equals +0, every NaN (of
  either sign, any payload) equals every NaN and is above +inf. On floats it becomes FLOAT compares of a with
  b and of each operand with itself (true for a NaN), joined by and/or/not; on integers and booleans, whose
  order is total anyway, a compare without a type. On complex operands it is left alone.

- Shardy's attributes (`sdy.sharding_rule = #sdy.op_sharding_rule<...>`, `sdy.sharding = #sdy.sharding<...>`:
  JAX puts a sharding rule on each of its LAPACK custom calls) name a dialect the bundled MLIR does not register;
  they say how to split an op across devices, not what it computes, and hlojit runs on one: they are dropped.

Forms not listed here stay as they are, and the parser names them.
"""
from __future__ import annotations

import re

_VALUE = r"%[\w$.\-]+(?:#\d+)?"
_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def upgrade(text: str) -> str:
    """`text` with the newer forms above in older spelling; unchanged (the same object) when it has none."""
    text = _upgrade_square(text)
    if "WEAKORDER" in text:
        text = _upgrade_weak_order(text)
    if "#sdy." in text:
        text = _without_shardy_attributes(text)
    return text


_SHARDY_ATTRIBUTE = re.compile(r",?\s*sdy\.\w+\s*=\s*#sdy\.\w+<")


def _without_shardy_attributes(text: str) -> str:
    """`text` less each `sdy.NAME = #sdy.KIND<...>` entry of an attribute dictionary (its comma too)."""
    out, at = [], 0
    for match in _SHARDY_ATTRIBUTE.finditer(text):
        if match.start() < at:
            continue
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {"<": 1, ">": -1 if text[i - 1] != "-" else 0}.get(text[i], 0)
            i += 1
        if not match.group(0).startswith(","):      # the dictionary's first entry: the comma after it goes
            i = re.match(r"\s*,?\s*", text[i:]).end() + i
        out.append(text[at:match.start()])
        at = i
    return "".join(out) + text[at:]


def _type_end(text: str, start: int) -> int:
    """Where the type that starts at `start` ends: the first space, comma, parenthesis or brace outside <>."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
        elif depth == 0 and (c.isspace() or c in ",(){}"):
            break
        i += 1
    return i


def _signature(text: str, start: int) -> tuple[list[str], list[str], int]:
    """The operand and result types of `: T` or `: (T, ...) -> R` starting at `start` (after the colon)."""
    i = _skip_spaces(text, start)
    if text[i] != "(":
        end = _type_end(text, i)
        return [text[i:end]], [text[i:end]], end
    operands, i = [], i + 1
    while True:
        i = _skip_spaces(text, i)
        if text[i] == ")":
            i += 1
            break
        end = _type_end(text, i)
        operands.append(text[i:end])
        i = _skip_spaces(text, end)
        i += text[i] == ","
    i = _skip_spaces(text, i)
    if not text.startswith("->", i):
        raise ValueError(f"expected '->' after the operand types at: {text[i:i + 40]!r}")
    i = _skip_spaces(text, i + 2)
    end = _type_end(text, i)
    return operands, [text[i:end]], end


def _skip_spaces(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


_SQUARE = re.compile(r"(?:\bstablehlo\.square\s+|\"stablehlo\.square\"\(\s*)(" + _VALUE + r")\s*\)?\s*:")


def _upgrade_square(text: str) -> str:
    matches = list(_SQUARE.finditer(text))
    if not matches:
        return text
    out, at = [], 0
    for match in matches:
        operands, results, end = _signature(text, match.end())
        x = match.group(1)
        out.append(text[at:match.start()])
        if _element(operands[0]).startswith("complex"):
            out.append(f"chlo.square {x} : {operands[0]} -> {results[0]}")
        else:
            out.append(f"stablehlo.multiply {x}, {x} : {results[0]}")
        at = end
    return "".join(out) + text[at:]


_CUSTOM_COMPARE = re.compile(r"(" + _VALUE + r")\s*=\s*stablehlo\.compare\s+(\w+)\s*,\s*(" + _VALUE + r")\s*,\s*("
                             + _VALUE + r")\s*,\s*WEAKORDER\s*:")
_GENERIC_COMPARE = re.compile(r"(" + _VALUE + r")\s*=\s*\"stablehlo\.compare\"\(\s*(" + _VALUE + r")\s*,\s*("
                              + _VALUE + r")\s*\)\s*<\{([^{}]*comparison_type\s+WEAKORDER[^{}]*)\}>\s*:")
_DIRECTION = re.compile(r"comparison_direction\s+(\w+)")


def _upgrade_weak_order(text: str) -> str:
    edits = []
    for match in _CUSTOM_COMPARE.finditer(text):
        result, direction, a, b = match.groups()
        edits.append((match, result, direction, a, b))
    for match in _GENERIC_COMPARE.finditer(text):
        result, a, b, properties = match.groups()
        direction = _DIRECTION.search(properties)
        if direction:
            edits.append((match, result, direction.group(1), a, b))
    out, at = [], 0
    for n, (match, result, direction, a, b) in enumerate(sorted(edits, key=lambda e: e[0].start())):
        operands, results, end = _signature(text, match.end())
        lines = _weak_compare(f"%__weakorder{n}", result, direction, a, b, operands[0], results[0])
        if lines is None:
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        indent = re.match(r"\s*", text[line_start:match.start()]).group(0)
        out.append(text[at:match.start()])
        out.append(("\n" + indent).join(lines))
        at = end
    return "".join(out) + text[at:]


def _element(tensor_type: str) -> str:
    match = re.match(r"tensor<(?:(?:\d+|\?)x)*([^,>]+)", tensor_type)
    return match.group(1) if match else ""


def _weak_compare(fresh: str, result: str, direction: str, a: str, b: str, operand: str, boolean: str):
    """The lines that define `result` as `a DIRECTION b` in weak order (None where not upgraded: complex)."""
    element = _element(operand)
    if direction not in _DIRECTIONS or element.startswith("complex") or not element:
        return None
    functional = f"({operand}, {operand}) -> {boolean}"
    if not (element.startswith("f") or element.startswith("bf")):
        return [f"{result} = stablehlo.compare {direction}, {a}, {b} : {functional}"]

    def compare(name, d, x, y):
        return f"{name} = stablehlo.compare {d}, {x}, {y}, FLOAT : {functional}"

    def logical(name, op, *xs):
        return f"{name} = stablehlo.{op} {', '.join(xs)} : {boolean}"
    ordered, a_nan, b_nan = f"{fresh}_ordered", f"{fresh}_a_nan", f"{fresh}_b_nan"
    lines = [compare(ordered, direction, a, b), compare(a_nan, "NE", a, a), compare(b_nan, "NE", b, b)]
    if direction in ("LE", "GE"):               # a <= NaN and NaN >= b always
        return lines + [logical(result, "or", ordered, b_nan if direction == "LE" else a_nan)]
    both = f"{fresh}_both_nan"
    if direction == "EQ":
        return lines + [logical(both, "and", a_nan, b_nan), logical(result, "or", ordered, both)]
    if direction == "NE":                        # FLOAT NE is true for two NaNs, which are equal here
        return lines + [logical(both, "and", a_nan, b_nan), logical(f"{fresh}_not_both", "not", both),
                        logical(result, "and", ordered, f"{fresh}_not_both")]
    greater_nan, lesser = (b_nan, a_nan) if direction == "LT" else (a_nan, b_nan)
    return lines + [logical(f"{fresh}_not_nan", "not", lesser),                   # a < NaN when a is none
                    logical(f"{fresh}_above", "and", greater_nan, f"{fresh}_not_nan"),
                    logical(result, "or", ordered, f"{fresh}_above")]
