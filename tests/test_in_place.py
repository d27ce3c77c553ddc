"""A compiled function never changes its arguments: IREE 3.13 computes sort, scatter and dynamic_update_slice in
their operand's buffer, an argument's buffer included (iree-org/iree#16168): `jit(lambda x: x.at[1].set(9))(a)`
changed the device Array a. The backend hands such programs copies of device-resident Arrays."""
import numpy as np
import pytest

import hlojit as hj
from hlojit import ops

from conftest import BACKENDS

FUNCTIONS = [
    ("scatter", lambda x: x.at[1].set(9.0)),
    ("sort", lambda x: ops.sort(x)),
    ("dynamic_update_slice", lambda x: ops.dynamic_update_slice(x, np.float32([7.0]), (np.int32(2),))),
    ("inside_a_loop", lambda x: ops.fori_loop(0, 2, lambda i, c: c.at[i].add(1.0), x)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, fn", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_arguments_are_unchanged(backend, name, fn):
    original = np.float32([3.0, 1.0, 2.0, 0.5])
    x = hj.device_put(original, backend=backend)
    expected = np.asarray(hj.jit(fn, backend="reference")(original))
    for _ in range(2):   # the first call compiles; the second is the cached call path
        np.testing.assert_array_equal(np.asarray(hj.jit(fn, backend=backend)(x)), expected)
        np.testing.assert_array_equal(np.asarray(x), original)


def test_donated_arguments_still_take_the_result():
    f = hj.jit(lambda p: p.at[0].set(5.0), donate_argnums=0, backend="iree:cpu")
    out = f(hj.device_put(np.zeros(3, np.float32)))
    np.testing.assert_array_equal(np.asarray(out), [5, 0, 0])
