"""The one helper every broadcasting VJP shares.

When ``x`` of shape (3, 1) is broadcast against (4, 3, 5), each entry of ``x``
was used many times, so its gradient is the *sum* of the cotangents of all its
copies: sum over the added leading axes and over the axes where ``x`` had
size 1, then reshape back to ``x.shape``.
"""

def unbroadcast(g, x):
    """Sum ``g`` down to ``x``'s shape, and cast it to ``x``'s dtype."""
    if g is None:
        return None
    if g.shape != x.shape:
        lead = g.ndim - x.ndim
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(x.shape) if n == 1 and g.shape[lead + i] != 1)
        if axes:
            g = sum(g, axis=axes, keepdims=False)
        if g.shape != x.shape:
            g = reshape(g, x.shape)
    if g.dtype != x.dtype:
        g = cast(g, x.dtype)
    return g


# Imported last: these modules use unbroadcast in their own rules.
from .misc import cast  # noqa: E402
from .reduction import sum  # noqa: E402
from .shape import reshape  # noqa: E402
