"""The shape helpers every VJP rule shares.

When ``x`` of shape (3, 1) is broadcast against (4, 3, 5), each entry of ``x``
was used many times, so its gradient is the *sum* of the cotangents of all its
copies: sum over the added leading axes and over the axes where ``x`` had
size 1, then reshape back to ``x.shape`` (``unbroadcast``).

In a graph a dimension may be unknown (None) until the graph runs. Then the
helpers use ops that read the shape at run time (``sum_like``,
``reshape_like``, ``broadcast_like``) instead of a shape fixed now.
"""


def known(shape):
    """Is every dimension of ``shape`` known?"""
    return shape is not None and None not in shape


def compatible(a, b):
    """Could shapes ``a`` and ``b`` (None = unknown) be the same?"""
    if a is None or b is None or a == b:
        return True
    return len(a) == len(b) and all(p is None or q is None or p == q for p, q in zip(a, b))


def require_same_shape(op_name, first, second, names):
    """Raise a ValueError unless tensors ``first`` and ``second`` (called ``names``) could
    have one shape: the fused gradient ops (tanh_grad, relu_grad...) take no broadcasting."""
    if not compatible(first.shape, second.shape):
        raise ValueError(f"{op_name}: {names[0]} and {names[1]} must have the same shape, got "
                         f"{first.shape} and {second.shape}.")


def unbroadcast(g, x):
    """Sum ``g`` down to ``x``'s shape, and cast it to ``x``'s dtype."""
    if g is None:
        return None
    if g.shape == x.shape and g.dtype == x.dtype and known(x.shape):
        return g   # the common case: nothing was broadcast
    if not (known(g.shape) and known(x.shape)):
        g = sum_like(g, x)
    elif g.shape != x.shape:
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


def reshape_as(g, x):
    """``g`` reshaped to ``x``'s shape."""
    return reshape(g, x.shape) if known(x.shape) else reshape_like(g, x)


def broadcast_as(g, x):
    """``g`` broadcast to ``x``'s shape."""
    if g.shape == x.shape and known(x.shape):
        return g
    return broadcast_to(g, x.shape) if known(x.shape) else broadcast_like(g, x)


# Imported last: these modules use the helpers above in their own rules.
from .misc import cast  # noqa: E402
from .reduction import sum  # noqa: E402
from .shape import broadcast_like, broadcast_to, reshape, reshape_like, sum_like  # noqa: E402
