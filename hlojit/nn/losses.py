"""Losses: softmax cross-entropy (integer or one-hot/soft labels) and mean squared error."""
from __future__ import annotations

from ..errors import ShapeError
from ..frontend import dtypes, ops
from ..frontend.ops._core import as_tensor, describe, fail

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(op: str, per_example, reduction: str):
    if reduction not in _REDUCTIONS:
        fail(ValueError, op, f"reduction must be one of {_REDUCTIONS}, not {reduction!r}")
    return per_example.mean() if reduction == "mean" else per_example.sum() if reduction == "sum" else per_example


def softmax_cross_entropy(logits, labels, reduction: str = "mean"):
    """-sum(p * log_softmax(logits)) over the class axis (the last).

    logits [..., classes]; labels either integers [...] (class indices) or floats [..., classes] (one-hot
    or any distribution). reduction "mean" (over the examples, the default), "sum" or "none" ([...]).
    Integer labels go through a one-hot mask rather than a gather, so the gradient is elementwise."""
    op = "nn.softmax_cross_entropy"
    logits, labels = as_tensor(logits, op), as_tensor(labels, op)
    if not dtypes.is_float(logits.dtype) or logits.ndim < 1:
        fail(ShapeError, op, f"logits must be floats [..., classes], not {describe(logits)}")
    classes = logits.shape[-1]
    if labels.dtype.kind in "iu" and labels.dtype != dtypes.bool_:
        if labels.shape != logits.shape[:-1]:
            fail(ShapeError, op, f"integer labels must have the logits' shape without the class axis, "
                                 f"{logits.shape[:-1]}; got labels {describe(labels)} for logits {describe(logits)}")
        labels = ops.one_hot(labels, classes, dtype=logits.dtype)
    elif labels.shape != logits.shape:
        fail(ShapeError, op, f"one-hot/soft labels must have the logits' shape; got labels {describe(labels)} "
                             f"for logits {describe(logits)} (integer class labels have shape {logits.shape[:-1]})")
    per_example = -(ops.astype(labels, logits.dtype) * ops.log_softmax(logits, axis=-1)).sum(axis=-1)
    return _reduce(op, per_example, reduction)


def mse(predictions, targets, reduction: str = "mean"):
    """Mean squared error: (predictions - targets)² averaged over every element ("mean"), summed ("sum"),
    or elementwise ("none"). Shapes must be equal (no silent broadcasting of a [N] target against [N, 1])."""
    op = "nn.mse"
    predictions, targets = as_tensor(predictions, op), as_tensor(targets, op)
    if predictions.shape != targets.shape:
        fail(ShapeError, op, f"predictions {describe(predictions)} and targets {describe(targets)} differ in shape")
    diff = predictions - targets
    return _reduce(op, diff * diff, reduction)
