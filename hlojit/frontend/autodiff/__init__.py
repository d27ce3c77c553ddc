"""Reverse-mode automatic differentiation of traced functions: grad, value_and_grad, vjp, jvp,
stop_gradient, custom_vjp. The rules live in one table (`core.RULES`, one entry per StableHLO op),
filled by the rules_* modules, one per op family."""
from . import rules_control, rules_elementwise, rules_indexing, rules_reduce, rules_shape  # noqa: F401
from .api import custom_vjp, grad, jvp, stop_gradient, value_and_grad, vjp
from .core import RULES

__all__ = ["RULES", "custom_vjp", "grad", "jvp", "stop_gradient", "value_and_grad", "vjp"]
