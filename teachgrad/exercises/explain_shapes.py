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
                 f"(teachgrad.ops.shape.reshape.unbroadcast(g, x) does exactly this).")
    elif reduction_story(in_shape, got):
        text += " " + reduction_story(in_shape, got)
    elif len(got) >= 2 and len(in_shape) >= 2 and got == tuple(in_shape[:-2]) + (in_shape[-1], in_shape[-2]):
        text += (" Its shape is the input's with the last two axes swapped: the product is "
                 "transposed. Swap the factors and transpose them (the transpose of A B is "
                 "B^T A^T).")
    return text


def reduction_story(in_shape, out_shape):
    """How a cotangent of a reduction (``sum`` over an axis) gets back to its input's
    shape, when ``out_shape`` is ``in_shape`` with axes removed or kept as 1."""
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    if len(out_shape) < len(in_shape):
        for axis in range(len(in_shape)):
            if in_shape[:axis] + in_shape[axis + 1:] == out_shape:
                return (f"f removed axis {axis} of the input, so g has one entry for each "
                        f"slice along it, shared by all the entries of that slice: put the "
                        f"axis back (tg.expand_dims(g, {axis}), or keepdims=True) and "
                        f"broadcast to the input's shape (tg.broadcast_to(..., x.shape)).")
    axes = broadcast_axes(out_shape, in_shape)
    if axes is not None and any(axes) and len(out_shape) == len(in_shape):
        return ("g has the shape of the reduced output (the axis kept with size 1): "
                "broadcast it to the input's shape (tg.broadcast_to(..., x.shape)).")
    return ""


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
