"""The one table of complex composites: numpy name -> what elementwise.unary builds for a complex operand of the op
(the functions StableHLO has no complex op for, or whose StableHLO op's values are not numpy's). Its own module:
complex_math builds the parts that complex_inverse_trig's formulas use, and both build from elementwise's ops, so
elementwise reads this table when a complex operand first asks, and neither of them imports the other's table.
Ops neither here nor taking complex in their elementwise row are a DTypeError."""
from __future__ import annotations

from . import complex_inverse_trig, complex_math

COMPOSITES = {**complex_math.FUNCTIONS, **complex_inverse_trig.FUNCTIONS}
