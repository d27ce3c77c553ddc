"""pipeline/window_scatters.py: `stablehlo.select_and_scatter` (JAX's max-pool gradient) from a `from_mlir` module
on the IREE targets, which refused it before ("failed to legalize operation 'stablehlo.select_and_scatter'"),
against the reference backend (the spec's meaning) and numpy. Operands are arguments, so IREE computes them at run
time (constants would be folded by the reference interpreter before IREE sees them)."""
import numpy as np
import pytest

import hlojit as hj
from hlojit.pipeline import window_scatters

from conftest import BACKENDS
from test_legalize import rewritten, target_rewritten

IREE_BACKENDS = [b for b in BACKENDS if b != "reference"]


class Case:
    """One select_and_scatter of its arguments (operand, source, init): `line(k)` its op on %x<k>, %g<k>, %init<k>
    giving %r<k>."""

    def __init__(self, shape, source_shape, direction, scatter, window, strides, padding=None, init=0.0):
        self.shape, self.source_shape, self.init = shape, source_shape, init
        self.direction, self.scatter, self.window, self.strides, self.padding = (direction, scatter, window,
                                                                                 strides, padding)

    def types(self):
        t = lambda s: f"tensor<{'x'.join(map(str, s))}xf32>" if s else "tensor<f32>"  # noqa: E731
        return t(self.shape), t(self.source_shape), t(())

    def arguments(self, k: int) -> str:
        x, g, scalar = self.types()
        return f"%x{k}: {x}, %g{k}: {g}, %init{k}: {scalar}"

    def line(self, k: int) -> str:
        x, g, s = self.types()
        pad = "" if self.padding is None else \
            f", padding = dense<{[list(p) for p in self.padding]}> : tensor<{len(self.padding)}x2xi64>"
        ints = lambda v: ", ".join(map(str, v))  # noqa: E731
        return f"""  %r{k} = "stablehlo.select_and_scatter"(%x{k}, %g{k}, %init{k}) ({{
  ^bb0(%p: {s}, %q: {s}):
    %c = stablehlo.compare {self.direction}, %p, %q, FLOAT : ({s}, {s}) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }}, {{
  ^bb0(%p: {s}, %q: {s}):
    %s = stablehlo.{self.scatter} %p, %q : {s}
    stablehlo.return %s : {s}
  }}) {{window_dimensions = array<i64: {ints(self.window)}>, window_strides = array<i64: {ints(self.strides)}>{pad}}}
     : ({x}, {g}, {s}) -> {x}
"""

    def inputs(self):
        x = rng.integers(-3, 4, self.shape).astype(np.float32)       # small integers: many ties
        x.flat[::7] = -np.inf
        return x, rng.standard_normal(self.source_shape).astype(np.float32), np.float32(self.init)


def module(cases) -> str:
    """The cases' ops in one function of all their arguments (one compile per target)."""
    arguments = ", ".join(c.arguments(k) for k, c in enumerate(cases))
    types = ", ".join(c.types()[0] for c in cases)
    results = ", ".join(f"%r{k}" for k in range(len(cases)))
    return (f"func.func @main({arguments}) -> ({types}) {{\n" + "".join(c.line(k) for k, c in enumerate(cases))
            + f"  return {results} : {types}\n}}")


def max_pool_gradient(x, g, window, strides, padding):
    """numpy: each window's first largest element (never padding) gets the window's g."""
    out = np.zeros_like(x)
    for index in np.ndindex(*g.shape):
        best = None
        for offset in np.ndindex(*window):
            p = tuple(i * s + o - lo for i, s, o, (lo, _) in zip(index, strides, offset, padding))
            if all(0 <= q < n for q, n in zip(p, x.shape)) and (best is None or x[p] > x[best]):
                best = p
        if best is not None:
            out[best] += g[index]
    return out


rng = np.random.default_rng(5)
CASES = {
    # JAX's max pool 3x3/2 gradient, the padding in the op (never selected), ties (the first wins) and -inf
    "max 3x3/2 padded": Case((2, 3, 9, 8), (2, 3, 5, 4), "GE", "add", (1, 1, 3, 3), (1, 1, 2, 2),
                             [(0, 0), (0, 0), (1, 1), (1, 1)]),
    # a min pool whose contributions combine by maximum from a nonzero init; a window of 2 x 3, strides 1 x 2
    "min 2x3/1x2 maximum": Case((3, 7, 9), (3, 6, 4), "LE", "maximum", (1, 2, 3), (1, 1, 2), init=-5.0),
    # a window narrower than its stride: the positions no window covers keep the init value
    "max 1x1/2 padded": Case((5, 6), (3, 4), "GT", "add", (1, 1), (2, 2), [(0, 1), (1, 1)], init=2.0),
}


@pytest.mark.parametrize("backend", IREE_BACKENDS)
def test_select_and_scatter_runs_on_iree_as_the_spec_says(backend):
    arguments = [a for case in CASES.values() for a in case.inputs()]
    text = module(list(CASES.values()))
    want = hj.from_mlir(text, backend="reference")(*arguments)
    got = hj.from_mlir(text, backend=backend)(*arguments)
    for name, w, g in zip(CASES, want, got):   # overlapping windows add in another order
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6, err_msg=name)


def test_the_reference_backend_is_numpys_max_pool_gradient():
    case = CASES["max 3x3/2 padded"]
    x, g, init = case.inputs()
    got = np.asarray(hj.from_mlir(module([case]), backend="reference")(x, g, init))
    np.testing.assert_allclose(got, max_pool_gradient(x, g, (1, 1, 3, 3), (1, 1, 2, 2),
                                                      [(0, 0), (0, 0), (1, 1), (1, 1)]), rtol=1e-6, atol=1e-6)


def test_the_rewrite_leaves_no_select_and_scatter_and_every_iree_target_gets_it():
    count, text = rewritten(module([CASES["max 3x3/2 padded"]]), window_scatters.select_and_scatters_by_offset)
    assert count == 1 and "select_and_scatter" not in text
    assert text.count("stablehlo.map") == 2 * 9 - 1     # the select region for offsets 2..9, the scatter's for 1..9
    for target in ("cpu", "vmvx", "cuda"):
        applied, text = target_rewritten(module([CASES["min 2x3/1x2 maximum"]]), target)
        assert applied["select_and_scatters_by_offset"] == 1 and "select_and_scatter" not in text


def test_a_max_pool_gradient_compiles_for_cuda():
    """iree:cuda has no GPU here: hlojit's own max-pool gradient (select_and_scatter, rewritten) must compile."""
    from hlojit.pipeline import compile_program, cuda
    grad = hj.jit(hj.grad(lambda x, g: hj.ops.sum(hj.ops.max_pool(x, 3, 2, padding=1) * g)))
    lowered = grad.lower(np.zeros((2, 3, 9, 8), np.float32), np.zeros((2, 3, 5, 4), np.float32))
    assert "stablehlo.select_and_scatter" in lowered.mlir
    compile_program(lowered.program, cuda())
