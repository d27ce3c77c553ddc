"""hj.optim: every optimizer over several steps in one traced program against hand-written numpy updates,
schedules against their closed forms (traced and concrete), the eager path, and errors."""
import math

import numpy as np
import pytest

import hlojit as hj
from hlojit import optim

RNG = np.random.default_rng(0)
PARAMS = {"w": RNG.standard_normal((3, 4)).astype(np.float32),
          "b": [RNG.standard_normal(4).astype(np.float32), np.arange(2, dtype=np.int32)]}
STEPS = 4
GRADS = [{"w": RNG.standard_normal((3, 4)).astype(np.float32),
          "b": [RNG.standard_normal(4).astype(np.float32), np.zeros(2, np.int32)]} for _ in range(STEPS)]
SCHEDULE = optim.exponential_decay(0.1, 0.5, 2)
OPTIMIZERS = {
    "sgd": (optim.sgd(0.1), dict(lr=0.1)),
    "sgd_momentum_wd": (optim.sgd(0.05, momentum=0.9, weight_decay=0.01), dict(lr=0.05, momentum=0.9, wd=0.01)),
    "sgd_nesterov": (optim.sgd(SCHEDULE, momentum=0.8, nesterov=True), dict(lr=SCHEDULE, momentum=0.8, nesterov=True)),
    "adam": (optim.adam(1e-2), dict(lr=1e-2, adam=True)),
    "adam_cosine": (optim.adam(optim.cosine_decay(1e-2, 3), b1=0.8, b2=0.99, eps=1e-6),
                    dict(lr=optim.cosine_decay(1e-2, 3), adam=True, b1=0.8, b2=0.99, eps=1e-6)),
    "adamw": (optim.adamw(1e-2, weight_decay=0.1), dict(lr=1e-2, adam=True, wd=0.1)),
}


def numpy_updates(p, grads, lr, momentum=0.0, nesterov=False, wd=0.0, adam=False, b1=0.9, b2=0.999, eps=1e-8):
    """The textbook update rules in float64 (PyTorch's SGD, Kingma & Ba's Adam, Loshchilov & Hutter's AdamW)."""
    p = p.astype(np.float64)
    v, m, s = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for step, g in enumerate(grads):
        rate = lr(step) if callable(lr) else lr
        if adam:
            t = step + 1
            m, s = b1 * m + (1 - b1) * g, b2 * s + (1 - b2) * g * g
            p = p - rate * ((m / (1 - b1 ** t)) / (np.sqrt(s / (1 - b2 ** t)) + eps) + wd * p)
            continue
        g = g + wd * p
        if momentum:
            v = momentum * v + g
            p = p - rate * (g + momentum * v if nesterov else v)
        else:
            p = p - rate * g
    return p


def run_all(params, grads):
    out = {}
    for name, (opt, _) in OPTIMIZERS.items():
        p, state = params, opt.init(params)
        for g in grads:
            p, state = opt.update(p, g, state)
        out[name] = (p, state)
    big = {"a": params["w"] * 100.0, "c": params["b"][0]}
    out["norm"] = (optim.global_norm(big), optim.global_norm(optim.clip_by_global_norm(big, 2.0)))
    return out


@pytest.mark.parametrize("backend", ["reference", "iree:cpu"])
def test_optimizers_match_numpy_over_several_steps(backend):
    got = hj.jit(run_all, backend=backend)(PARAMS, GRADS)
    for name, (_, reference) in OPTIMIZERS.items():
        params, state = got[name]
        for leaf in ("w", "b0"):
            pick = (lambda t: t["w"]) if leaf == "w" else (lambda t: t["b"][0])
            want = numpy_updates(pick(PARAMS), [pick(g) for g in GRADS], **reference)
            np.testing.assert_allclose(np.asarray(pick(params)), want, rtol=2e-5, atol=2e-6, err_msg=f"{name} {leaf}")
            assert np.asarray(pick(params)).dtype == np.float32
        np.testing.assert_array_equal(np.asarray(params["b"][1]), PARAMS["b"][1])   # int leaves stay
        assert int(state["step"]) == STEPS and np.asarray(state["step"]).dtype == np.int32
    norm, clipped = (float(v) for v in got["norm"])
    squares = (PARAMS["w"].astype(np.float64) ** 2 * 1e4).sum() + (PARAMS["b"][0] ** 2).sum()
    assert norm == pytest.approx(np.sqrt(squares), rel=1e-5)
    assert clipped == pytest.approx(2.0, rel=1e-5)


def test_adam_first_step_is_lr_times_sign():
    """Closed form: after one step m̂ = g and v̂ = g², so the step is lr * g / (|g| + eps)."""
    p, _ = hj.jit(lambda p, g: optim.adam(0.1).update(p, g, optim.adam(0.1).init(p)),
                  backend="reference")(PARAMS["w"], GRADS[0]["w"])
    np.testing.assert_allclose(np.asarray(p), PARAMS["w"] - 0.1 * np.sign(GRADS[0]["w"]), rtol=1e-6, atol=1e-6)


SCHEDULES = {
    "constant": (optim.constant(0.3), lambda t: 0.3),
    "exponential": (optim.exponential_decay(1.0, 0.5, 4), lambda t: 0.5 ** (t / 4)),
    "staircase": (optim.exponential_decay(1.0, 0.5, 4, staircase=True, transition_begin=2, end_value=0.3),
                  lambda t: max(0.5 ** (max(t - 2, 0) // 4), 0.3)),
    "cosine": (optim.cosine_decay(2.0, 10, alpha=0.1),
               lambda t: 2 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(t, 10) / 10)) + 0.1)),
    "warmup_cosine": (optim.warmup_cosine_decay(0.0, 1.0, 4, 12, end_value=0.1),
                      lambda t: t / 4 if t < 4 else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(t - 4, 8) / 8))),
}


def test_schedules_closed_forms_traced_and_concrete():
    steps = np.arange(16, dtype=np.int32)
    traced = hj.jit(lambda s: {name: sched(s) + 0.0 * s for name, (sched, _) in SCHEDULES.items()},
                    backend="reference")(steps)
    for name, (sched, closed) in SCHEDULES.items():
        want = np.array([closed(int(t)) for t in steps])
        np.testing.assert_allclose([float(sched(int(t))) for t in steps], want, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(np.asarray(traced[name]), want, rtol=1e-6, atol=1e-7, err_msg=name)


def test_eager_update_compiles_once_and_matches_traced():
    opt = optim.sgd(0.1, momentum=0.9)
    params, state = PARAMS, opt.init(PARAMS)
    for g in GRADS:
        params, state = opt.update(params, g, state)       # outside hj.jit: its own compiled program
    want = numpy_updates(PARAMS["w"], [g["w"] for g in GRADS], lr=0.1, momentum=0.9)
    np.testing.assert_allclose(np.asarray(params["w"]), want, rtol=2e-5, atol=2e-6)
    assert opt._compiled.cache_info().misses == 1 and int(state["step"]) == STEPS


def test_errors():
    opt = optim.adam(1e-3)
    with pytest.raises(ValueError, match=r"optim.adam.update: grads have structure \{'b': \[\*, \*\]\} but params "
                                         r"have \{'b': \[\*, \*\], 'w': \*\}.*test_optim.py:"):
        hj.jit(lambda p, g: opt.update(p, g, opt.init(p)), backend="reference")(PARAMS, {"b": GRADS[0]["b"]})
    with pytest.raises(ValueError, match=r"state must be what adam.init\(params\) returned"):
        hj.jit(lambda p, g: opt.update(p, g, optim.sgd(0.1).init(p)), backend="reference")(PARAMS, GRADS[0])
    with pytest.raises(ValueError, match="nesterov needs a momentum"):
        optim.sgd(0.1, nesterov=True)
    with pytest.raises(ValueError, match="warmup_steps < decay_steps"):
        optim.warmup_cosine_decay(0.0, 1.0, 10, 10)


def test_training_step_is_one_program_and_the_loss_falls():
    """Synthetic 3-class data through dense-layer_norm-relu-dropout-dense, AdamW with warmup+cosine: forward,
    backward and update in one hj.jit program (a 64x512x64 weight gradient: the shape that made IREE fuse
    the Adam update into the matmul and fail, before the optimizer's barrier)."""
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((3, 512)).astype(np.float32)
    labels = rng.integers(0, 3, 64).astype(np.int32)
    x = centres[labels] + 2.0 * rng.standard_normal((64, 512)).astype(np.float32)
    # drawn on the reference backend, whose zero biases are broadcast (non-contiguous) views: the IREE call
    # path must copy those rather than fail
    params = hj.jit(lambda k: [hj.nn.init_dense(k, 512, 64), {"scale": np.ones(64, np.float32)},
                               hj.nn.init_dense(hj.random.fold_in(k, 1), 64, 3)], backend="reference")(hj.random.key(0))
    opt = optim.adamw(optim.warmup_cosine_decay(0.0, 1e-2, 5, 40))

    @hj.jit
    def step(params, opt_state, x, y):
        def loss_fn(params):
            h = hj.nn.layer_norm(hj.nn.dense(x, params[0]["w"], params[0]["b"]), params[1]["scale"])
            h = hj.nn.dropout(hj.ops.relu(h), 0.1, hj.random.fold_in(hj.random.key(2), opt_state["step"]))
            return hj.nn.softmax_cross_entropy(hj.nn.dense(h, params[2]["w"], params[2]["b"]), y)
        loss, grads = hj.value_and_grad(loss_fn)(params)
        params, opt_state = opt.update(params, grads, opt_state)
        return params, opt_state, loss

    opt_state, losses = opt.init(params), []
    for _ in range(30):
        params, opt_state, loss = step(params, opt_state, x, labels)
        losses.append(float(loss))
    assert step.cache_info().misses == 1 and int(opt_state["step"]) == 30
    assert losses[-1] < 0.1 * losses[0], losses
