"""What the golden-text tests of hlojit.dialects build and check (test_dialects.py, test_dialects_regions.py): one
op inside `func.func @main` in a fresh context, its printed line(s), the result types the builder computed (shape,
element type spelling, numpy dtype), and that the module verifies."""
from __future__ import annotations

from typing import NamedTuple

import ml_dtypes
import numpy as np
from iree.compiler import ir
import iree.compiler.dialects.func as func

from hlojit.dialects.types import dtype_of

BF16 = np.dtype(ml_dtypes.bfloat16)


class Built(NamedTuple):
    lines: list        # the function body as printed, each line stripped, without the `return`
    results: list      # (shape, element type spelling, numpy dtype) of each value the builder returned
    asm: str           # the module printed with locations


def build(args, make, location=None) -> Built:
    """`func.func @main(args)` whose body is `make(*block_arguments)`; args are MLIR type bodies like
    "2x3xf32" (tensor<...>). `location` (file, line, col) is the ambient location, else unknown."""
    with ir.Context():
        loc = ir.Location.file(*location) if location else ir.Location.unknown()
        with loc:
            module = ir.Module.create()
            types = [ir.Type.parse(f"tensor<{a}>") for a in args]
            with ir.InsertionPoint(module.body):
                fn = func.FuncOp("main", ir.FunctionType.get(types, []))
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                out = make(*block.arguments)
                out = list(out) if isinstance(out, (list, tuple)) else [out]
                func.ReturnOp(out)
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [v.type for v in out]))
            assert module.operation.verify() is True
            results = []
            for v in out:
                t = ir.RankedTensorType(v.type)
                results.append((tuple(t.shape), str(t.element_type), dtype_of(v.type)))
            text = str(module)
            asm = module.operation.get_asm(enable_debug_info=True)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "func.func @main" in line)
    end = max(i for i, line in enumerate(lines) if line.strip().startswith("return"))
    return Built([line.strip() for line in lines[start + 1:end]], results, asm)


# MLIR element type spelling -> numpy dtype, written out here (not taken from hlojit.dialects.types).
SPELLINGS = {
    "i1": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64), "ui8": np.dtype(np.uint8), "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32), "ui64": np.dtype(np.uint64), "f16": np.dtype(np.float16), "bf16": BF16,
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "complex<f32>": np.dtype(np.complex64), "complex<f64>": np.dtype(np.complex128),
}


def expected_result(spec: str):
    """"4x2x3xf32" -> ((4, 2, 3), "f32", float32); "f32" -> ((), "f32", float32)."""
    *dims, elt = spec.replace("complex", "C").split("x")
    elt = elt.replace("C", "complex")
    return tuple(int(d) for d in dims), elt, SPELLINGS[elt]


def check(built: Built, lines, results):
    assert built.lines == ([lines] if isinstance(lines, str) else list(lines))
    assert built.results == [expected_result(r) for r in results]
