"""Saying in words how an input was broadcast, and what its cotangent must do about it."""


def broadcast_axes(in_shape, out_shape):
    """The axes of ``out_shape`` that broadcasting added or stretched for ``in_shape``:
    ``(added, stretched)``, or None when ``in_shape`` does not broadcast to ``out_shape``."""
    lead = len(out_shape) - len(in_shape)
    if lead < 0:
        return None
    added = tuple(range(lead))
    stretched = []
    for k, n in enumerate(in_shape):
        m = out_shape[lead + k]
        if n == m:
            continue
        if n != 1:
            return None
        stretched.append(lead + k)
    return added, tuple(stretched)


def vjp_shape_story(index, got, in_shape, out_shape):
    """Why a VJP result of shape ``got`` is wrong for an input of shape ``in_shape``."""
    text = (f"the cotangent for input {index} has shape {got}, but input {index} has shape "
            f"{in_shape}: a VJP rule returns one number per entry of its input.")
    axes = broadcast_axes(in_shape, out_shape)
    if got == tuple(out_shape) and axes is not None and any(axes):
        added, stretched = axes
        parts = []
        if added:
            parts.append(f"{len(added)} leading axis{'es' if len(added) > 1 else ''} "
                         f"({', '.join(map(str, added))}) added")
        if stretched:
            parts.append(f"axis {', '.join(map(str, stretched))} stretched from size 1")
        copies = 1
        for k in added + stretched:
            copies *= out_shape[k]
        summed = added + stretched
        text += (f" Input {index} was broadcast to the output's shape {tuple(out_shape)} "
                 f"({' and '.join(parts)}), so each of its entries was used {copies} times, "
                 f"and its cotangent is the sum of the cotangents of all its copies: sum g "
                 f"over axis {summed if len(summed) > 1 else summed[0]}"
                 f"{' with keepdims=True for the stretched axes' if stretched else ''} "
                 f"(tg.ops.grad_util.unbroadcast(g, x) does exactly this).")
    return text


def jvp_shape_story(index, got, in_shape, out_shape):
    """Why a JVP result of shape ``got`` is wrong (it must have the output's shape)."""
    text = (f"the tangent contribution of input {index} has shape {got}, but the output has "
            f"shape {tuple(out_shape)}: a JVP rule returns a tangent of the output.")
    axes = broadcast_axes(in_shape, out_shape)
    if got == tuple(in_shape) and axes is not None and any(axes):
        text += (f" Input {index} (shape {tuple(in_shape)}) was broadcast to the output's "
                 f"shape, so its tangent must be broadcast the same way "
                 f"(tg.broadcast_to(x_dot, ans.shape)).")
    return text
