"""One source per argument slot, as JAX and PyTorch count them.

``tg.grad(f, argnums=(0, 1))(x, x)`` asks for two derivatives: one for each
*slot* that ``x`` fills. A tape, though, knows tensors, not slots: watching
``x`` and asking for its gradient adds up every use of ``x``, so with
``f(a, b) = a + 5 * b`` both answers would come out as 6 instead of 1 and 5.
The cure is to give every slot that shares its tensor with another slot a
tensor of its own, ``identity(x)``, made before ``f`` runs: ``f`` reads the
copies, the tape watches the copies, and each copy's gradient holds only the
uses of its slot. A tensor that fills one slot is passed on as it is.
"""
from collections import Counter

from ..ops import identity
from ..tensor import Tensor


def repeated(values):
    """The ids of the tensors that occur more than once among ``values``."""
    counts = Counter(id(v) for v in values if isinstance(v, Tensor))
    return {k for k, n in counts.items() if n > 1}


def own_slot(value, shared):
    """``value``, or a fresh ``identity(value)`` if its id is in ``shared``."""
    return identity(value) if id(value) in shared else value
