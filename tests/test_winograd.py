"""pipeline/winograd.py: the rewrite's text on a tiny module (golden), what it leaves alone, and its numbers on
every backend against a float64 direct convolution, within the f32 error bound the module doc states."""
from __future__ import annotations

import os

import numpy as np
import pytest
from iree.compiler import ir

import hlojit as hj
from hlojit.pipeline import winograd

from conftest import LIBRARY_BACKENDS

GOLDEN = os.path.join(os.path.dirname(__file__), "data", "winograd_f2_golden.mlir")
NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
NCHW = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"


def _t(shape, dtype="f32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"


def conv_op(name, lhs, rhs, out, spec, pad, stride=(1, 1), dilation=(1, 1), groups=1, dtype="f32") -> str:
    (t, b), (l, r) = pad
    return (f"%{name} = stablehlo.convolution(%{lhs[0]}, %{rhs[0]}) dim_numbers = {spec}, window = {{stride = "
            f"[{stride[0]}, {stride[1]}], pad = [[{t}, {b}], [{l}, {r}]], rhs_dilate = [{dilation[0]}, {dilation[1]}]}}"
            f" {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : "
            f"({_t(lhs[1], dtype)}, {_t(rhs[1], dtype)}) -> {_t(out, dtype)}")


def module(cases, dtype="f32") -> str:
    """One function: two arguments per case (input, kernel), one convolution and one result per case."""
    args, body, results = [], [], []
    for k, (spec, xs, ws, out, pad, *rest) in enumerate(cases):
        args += [f"%x{k}: {_t(xs, dtype)}", f"%w{k}: {_t(ws, dtype)}"]
        body.append("  " + conv_op(f"y{k}", (f"x{k}", xs), (f"w{k}", ws), out, spec, pad, *rest, dtype=dtype))
        results.append((f"%y{k}", _t(out, dtype)))
    return (f"func.func @main({', '.join(args)}) -> ({', '.join(t for _, t in results)}) {{\n" + "\n".join(body) +
            f"\n  return {', '.join(n for n, _ in results)} : {', '.join(t for _, t in results)}\n}}")


def rewritten(text: str, m: int = 2) -> tuple[int, str]:
    with ir.Context() as context:
        context.load_all_available_dialects()
        parsed = ir.Module.parse(text)
        count = winograd.winograd_convolutions(parsed, m)
        assert parsed.operation.verify()
        return count, str(parsed)


def test_golden_f2_on_a_tiny_module():
    before = module([(NHWC, (1, 4, 4, 1), (3, 3, 1, 1), (1, 2, 2, 1), ((0, 0), (0, 0)))])
    count, after = rewritten(before)
    assert count == 1 and "stablehlo.convolution" not in after
    with open(GOLDEN) as f:
        assert after == f.read()


@pytest.mark.parametrize("case", [
    (NHWC, (1, 8, 8, 2), (3, 3, 2, 2), (1, 3, 3, 2), ((0, 0), (0, 0)), (2, 2)),          # stride 2
    (NHWC, (1, 8, 8, 2), (3, 3, 2, 2), (1, 4, 4, 2), ((0, 0), (0, 0)), (1, 1), (2, 2)),  # dilated
    (NHWC, (1, 8, 8, 2), (5, 5, 2, 2), (1, 4, 4, 2), ((0, 0), (0, 0))),                  # 5x5
    (NHWC, (1, 8, 8, 4), (3, 3, 2, 4), (1, 6, 6, 4), ((0, 0), (0, 0)), (1, 1), (1, 1), 2),  # grouped
], ids=["stride2", "dilated", "5x5", "grouped"])
def test_other_convolutions_are_left_alone(case):
    count, after = rewritten(module([case]))
    assert count == 0 and "stablehlo.convolution" in after


def test_f16_convolutions_are_left_alone():
    count, _ = rewritten(module([(NHWC, (1, 6, 6, 2), (3, 3, 2, 2), (1, 4, 4, 2), ((0, 0), (0, 0)))], "f16"))
    assert count == 0


# (dimension numbers, input, kernel, output, padding): NHWC and NCHW, SAME and VALID, odd and uneven sizes,
# one at a ResNet-like channel count (64 in and out)
CASES = [
    (NHWC, (2, 7, 9, 5), (3, 3, 5, 6), (2, 7, 9, 6), ((1, 1), (1, 1))),
    (NCHW, (2, 5, 7, 9), (6, 5, 3, 3), (2, 6, 5, 7), ((0, 0), (0, 0))),
    (NCHW, (1, 3, 6, 5), (4, 3, 3, 3), (1, 4, 5, 6), ((0, 1), (1, 2))),
    (NHWC, (1, 3, 3, 2), (3, 3, 2, 3), (1, 1, 1, 3), ((0, 0), (0, 0))),
    (NHWC, (1, 10, 10, 64), (3, 3, 64, 64), (1, 10, 10, 64), ((1, 1), (1, 1))),
]


def _as_nhwc_hwio(spec, x, w):
    return (x, w) if spec == NHWC else (x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0))


def _direct(x, w, pad, absolute=False):
    """NHWC x HWIO, float64 (of |x|, |w| if absolute)."""
    x, w = (np.abs(x), np.abs(w)) if absolute else (x, w)
    x = np.pad(x.astype(np.float64), ((0, 0), *pad, (0, 0)))
    h, wd = x.shape[1] - 2, x.shape[2] - 2
    return sum(np.einsum("nhwc,co->nhwo", x[:, i:i + h, j:j + wd], w[i, j].astype(np.float64))
               for i in range(3) for j in range(3))


def error_bound(x, w, pad, m):
    """(Cin + 24) * eps32 times Winograd F(m, 3) computed in float64 on |x|, |w| and the transforms' absolute
    values: each stage (two transforms of up to 6 terms per side, the Cin-long products, two output
    transforms) rounds at most a few times per term, and each term is no larger than its absolute value."""
    T = winograd.TRANSFORMS[m]
    BT, G, AT = (np.abs(T[k]) for k in ("BT", "G", "AT"))
    t = BT.shape[0]
    xp = np.pad(np.abs(x).astype(np.float64), ((0, 0), *pad, (0, 0)))
    out_h, out_w = xp.shape[1] - 2, xp.shape[2] - 2
    th, tw = -(-out_h // m), -(-out_w // m)
    xp = np.pad(xp, ((0, 0), (0, th * m + 2 - xp.shape[1]), (0, tw * m + 2 - xp.shape[2]), (0, 0)))
    tiles = np.array([[xp[:, a:a + m * th:m, b:b + m * tw:m] for b in range(t)] for a in range(t)])
    v = np.einsum("pa,qb,abnhwc->pqnhwc", BT, BT, tiles)
    u = np.einsum("pi,qj,ijco->pqco", G, G, np.abs(w).astype(np.float64))
    mm = np.einsum("pqnhwc,pqco->pqnhwo", v, u)
    y = np.einsum("ip,jq,pqnhwo->nhiwjo", AT, AT, mm).reshape(x.shape[0], th * m, tw * m, w.shape[-1])
    return (x.shape[-1] + 24) * np.finfo(np.float32).eps * y[:, :out_h, :out_w]


# The cases each tile runs: F(2,3) every one; F(4,3) NCHW with uneven padding and the 64-channel layer (both end
# in partial tiles, as the first case does), where its amplification is checked. Why not all: the tiling is one
# code for both tiles, and on llvm-cpu each small odd-channel case cost F(4,3)'s module ~3.5 s of compile (all
# five 17.2 s, these two ~8; a 2-vCPU Zen 3, 2026-12-07).
CASES_OF_TILE = {2: CASES, 4: [CASES[2], CASES[4]]}


def _inputs(cases):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32) for case in cases for shape in case[1:3]]


# Not vmvx (conftest.LIBRARY_BACKENDS): the transforms are dot_generals, pads and elementwise ops, which the op
# tables check there, and only llvm-cpu gets the rewrite (its F(2,3) module took ~6 s of the suite on vmvx)
@pytest.mark.parametrize("backend, m", [(b, m) for b in LIBRARY_BACKENDS for m in (2, 4)])
def test_winograd_is_within_its_error_bound_on_every_backend(backend, m):
    cases = CASES_OF_TILE[m]
    count, text = rewritten(module(cases), m)
    assert count == len(cases)
    inputs = _inputs(cases)
    results = hj.from_mlir(text, backend=backend)(*inputs)
    for k, (spec, _, _, _, pad) in enumerate(cases):
        x, w = _as_nhwc_hwio(spec, inputs[2 * k], inputs[2 * k + 1])
        got = np.asarray(results[k])
        got = got if spec == NHWC else got.transpose(0, 2, 3, 1)
        error = np.abs(got - _direct(x, w, pad))
        bound = error_bound(x, w, pad, m)
        assert np.all(error <= bound), (k, float(np.max(error / bound)))
        # the bound's amplification over sum |x||w| (a direct convolution's), measured on these cases: 7.5-20x for
        # F(2,3), 16-383x for F(4,3), whose transform constants (up to 8 and 1/24) cost f32 digits
        amplification = bound / ((x.shape[-1] + 24) * np.finfo(np.float32).eps * _direct(x, w, pad, absolute=True))
        assert np.max(amplification) <= {2: 25, 4: 400}[m]


@pytest.mark.parametrize("value, m", [("", 0), ("0", 0), ("1", 2), ("2", 2), ("4", 4)])
def test_hlojit_winograd_chooses_the_tile_or_off(monkeypatch, value, m):
    monkeypatch.setenv("HLOJIT_WINOGRAD", value)
    text = module([(NHWC, (1, 6, 6, 2), (3, 3, 2, 2), (1, 4, 4, 2), ((0, 0), (0, 0)))])
    with ir.Context() as context:
        context.load_all_available_dialects()
        parsed = ir.Module.parse(text)
        assert winograd.requested_winograd(parsed) == (1 if m else 0)
        assert ("stablehlo.convolution" in str(parsed)) == (m == 0)


def test_hlojit_winograd_rejects_other_values(monkeypatch):
    monkeypatch.setenv("HLOJIT_WINOGRAD", "yes")
    with pytest.raises(hj.errors.ConfigError, match="HLOJIT_WINOGRAD"):
        winograd.mode()


# three shapes, one of them twice (once channels first): what tuning marks each convolution by
MARKED = [(NHWC, (1, 6, 6, 2), (3, 3, 2, 3), (1, 6, 6, 3), ((1, 1), (1, 1))),
          (NHWC, (2, 5, 5, 3), (3, 3, 3, 3), (2, 3, 3, 3), ((0, 0), (0, 0))),
          (NCHW, (1, 2, 6, 6), (3, 2, 3, 3), (1, 3, 6, 6), ((1, 1), (1, 1))),
          (NHWC, (1, 4, 4, 2), (3, 3, 2, 2), (1, 4, 4, 2), ((1, 1), (1, 1)))]


def test_signatures_are_the_distinct_shapes_whatever_the_layout():
    with ir.Context() as context:
        context.load_all_available_dialects()
        shapes = winograd.signatures(ir.Module.parse(module(MARKED)))
    assert shapes == [(1, 6, 6, 2, 3, 1, 1, 1, 1), (2, 5, 5, 3, 3, 0, 0, 0, 0), (1, 4, 4, 2, 2, 1, 1, 1, 1)]
    assert [winograd.describe(s) for s in shapes] == ["2->3ch 6x6 b1", "3->3ch 5x5 b2 pad 0,0,0,0", "2->2ch 4x4 b1"]


@pytest.mark.parametrize("forced, rewritten_count", [("", 3), ("0", 0), ("4", 4)])
def test_each_convolution_follows_its_mark_unless_hlojit_winograd_forces(monkeypatch, forced, rewritten_count):
    """Unset: the marked tile per shape (the NCHW twin of the first shape too), none where marked 0; a forced
    value for all. The marks never reach IREE."""
    monkeypatch.setenv("HLOJIT_WINOGRAD", forced)
    with ir.Context() as context:
        context.load_all_available_dialects()
        parsed = ir.Module.parse(module(MARKED))
        first, second, third = winograd.signatures(parsed)
        assert winograd.mark(parsed, {first: 2, second: 4, third: 0}) == 4
        assert str(parsed).count(winograd.CHOICE_ATTRIBUTE) == 4
        assert winograd.requested_winograd(parsed) == rewritten_count
        assert parsed.operation.verify()
        text = str(parsed)
    assert winograd.CHOICE_ATTRIBUTE not in text and text.count("stablehlo.convolution") == 4 - rewritten_count
