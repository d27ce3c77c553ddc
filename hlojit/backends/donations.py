"""`check_donations`: the check every backend makes before a call that donates buffers. A module of its own: the
reference package is imported while backends/__init__.py is still running (it imports the pipeline, whose
constant folding evaluates with the reference's op tables), so the reference takes nothing from that file."""
from __future__ import annotations

from ..errors import BackendError
from .array import Array


def check_donations(leaves, donated, name: str):
    """Refuse, before anything runs (so nothing is consumed), a call that donates an hj.Array and passes the
    same Array again (donated twice, or also undonated), as JAX does ("Attempt to use a buffer that was
    previously donated in the same call"): the result may be written into the buffer another argument reads.
    Every backend calls this first when a function donates; calls without donation never reach it."""
    if len(set(map(id, leaves))) == len(leaves):  # the common case, at C speed: no object passed twice
        return
    for i in donated:
        for j, other in enumerate(leaves):
            if j != i and other is leaves[i] and type(other) is Array:
                a = leaves[i]
                raise BackendError(
                    f"{name}(): the hj.Array {a.dtype}{list(a.shape)} of flat argument {i} is donated "
                    f"(donate_argnums/donate_argnames) and passed again as flat argument {j} of the same call: a "
                    "donated buffer may receive the result while the other argument is read from it. Pass a copy "
                    "(hj.device_put(np.asarray(a))) for one of them, or do not donate it; nothing was consumed")
