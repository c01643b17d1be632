"""Flatten nested lists, tuples and dicts of tensors, and rebuild them.

``tape.gradient(loss, {"w": w, "b": b})`` returns ``{"w": dw, "b": db}``: the
sources are flattened into a list for the engine and the gradients packed back
into the same structure.
"""


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))


def flatten(structure):
    """The leaves of ``structure`` in order (dicts in key insertion order)."""
    if isinstance(structure, dict):
        structure = [structure[key] for key in structure]
    elif not isinstance(structure, (list, tuple)):
        return [structure]
    leaves = []
    for item in structure:
        if isinstance(item, (list, tuple, dict)):
            leaves.extend(flatten(item))
        else:   # a leaf, the usual item: appended here, without a call per leaf
            leaves.append(item)
    return leaves


def pack_sequence_as(structure, leaves):
    """Rebuild ``structure`` with ``leaves`` (as many as ``flatten`` gives) in its places."""
    if isinstance(leaves, (str, bytes, dict)) or not hasattr(leaves, "__iter__"):
        raise TypeError(f"tg.nest.pack_sequence_as: `leaves` must be a list or tuple of "
                        f"leaves, but got {type(leaves).__name__} {leaves!r:.60}.")
    leaves = list(leaves)
    places = len(flatten(structure))
    if len(leaves) != places:
        raise ValueError(f"tg.nest.pack_sequence_as: `leaves` has {len(leaves)} leaves, but "
                         f"`structure` has {places} places for them.")
    return _build(structure, iter(leaves))


def _build(node, leaves):
    # A plain recursive function, not a closure over itself: a self-referencing
    # closure would keep every result alive in a reference cycle.
    if isinstance(node, dict):
        return type(node)((key, _build(node[key], leaves)) for key in node)
    if isinstance(node, tuple) and hasattr(node, "_fields"):  # namedtuple
        return type(node)(*(_build(item, leaves) for item in node))
    if isinstance(node, (list, tuple)):
        return type(node)([_build(item, leaves) if isinstance(item, (list, tuple, dict))
                           else next(leaves) for item in node])
    return next(leaves)


def assert_same_structure(a, b, what="structures `a` and `b`"):
    """Raise ValueError unless ``a`` and ``b`` nest the same way (``what`` names them in the
    message)."""
    def shape_of(node):
        if isinstance(node, dict):
            return ("dict", tuple((k, shape_of(v)) for k, v in node.items()))
        if isinstance(node, (list, tuple)):
            return ("seq", tuple(shape_of(v) for v in node))
        return "leaf"
    if shape_of(a) != shape_of(b):
        raise ValueError(f"The {what} do not have the same nested structure: {a!r} vs {b!r}.")
