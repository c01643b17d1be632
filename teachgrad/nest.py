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


# ---------------------------------------------------------------------------------------
# Pytrees, JAX's rules, for the function transformations (grad, vjp, jvp, the Jacobians,
# vmap): tuples, lists, namedtuples and dicts are nodes (a dict's children in sorted key
# order, an OrderedDict's in its own order), None is a node with no children, and
# everything else (a tensor, a number, a string) is a leaf.
# ---------------------------------------------------------------------------------------

class TreeDef:
    """The shape of a pytree without its leaves: what ``tree_unflatten`` rebuilds from.

    Two trees nest the same way exactly when their TreeDefs are equal. ``repr`` draws
    each leaf as ``*``, as JAX does: ``TreeDef((*, {'b': *, 'w': *}))``.
    """
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, tuple(children)

    @property
    def num_leaves(self):
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and (self.kind, self.meta, self.children) ==
                (other.kind, other.meta, other.children))

    def __hash__(self):
        return hash((self.kind, self.meta, self.children))

    def __repr__(self):
        return f"TreeDef({_draw(self)})"


def _draw(d):
    inner = [_draw(c) for c in d.children]
    if d.kind == "leaf":
        return "*"
    if d.kind == "none":
        return "None"
    if d.kind in ("dict", "odict"):
        return "{" + ", ".join(f"{k!r}: {s}" for k, s in zip(d.meta[1], inner)) + "}"
    if d.kind == "list":
        return "[" + ", ".join(inner) + "]"
    if d.kind == "namedtuple":
        return f"{d.meta.__name__}(" + ", ".join(inner) + ")"
    return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


def _node(tree):
    """``(kind, meta, children, child_keys)`` of one node; kind "leaf" for a leaf."""
    if tree is None:
        return "none", None, (), ()
    if isinstance(tree, dict):
        if type(tree).__name__ == "OrderedDict":
            keys = tuple(tree)
        else:
            try:
                keys = tuple(sorted(tree))
            except TypeError:
                raise TypeError(f"A dict in a pytree needs keys that sort (JAX's order), but "
                                f"got the keys {list(tree)!r}: use keys of one kind, e.g. "
                                f"all strings.") from None
        kind = "odict" if type(tree).__name__ == "OrderedDict" else "dict"
        return kind, (type(tree), keys), tuple(tree[k] for k in keys), tuple(f"[{k!r}]"
                                                                              for k in keys)
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return "namedtuple", type(tree), tuple(tree), tuple(f".{f}" for f in tree._fields)
    if isinstance(tree, (tuple, list)):
        kind = "list" if isinstance(tree, list) else "tuple"
        return kind, None, tuple(tree), tuple(f"[{i}]" for i in range(len(tree)))
    return "leaf", None, (), ()


def tree_flatten(tree):
    """``(leaves, treedef)``: the leaves of ``tree`` in JAX's order, and its shape."""
    leaves = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree, leaves):
    kind, meta, children, _ = _node(tree)
    if kind == "leaf":
        leaves.append(tree)
        return _LEAF
    return TreeDef(kind, meta, [_flatten_into(c, leaves) for c in children])


_LEAF = TreeDef("leaf", None, ())


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_unflatten(treedef, leaves):
    """The tree of shape ``treedef`` holding ``leaves`` (as many as it has places)."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tg.nest.tree_unflatten: {treedef!r} has {treedef.num_leaves} "
                         f"places for leaves, but got {len(leaves)} leaves.")
    return _unflatten(treedef, iter(leaves))


def _unflatten(d, leaves):
    if d.kind == "leaf":
        return next(leaves)
    children = [_unflatten(c, leaves) for c in d.children]
    if d.kind == "none":
        return None
    if d.kind in ("dict", "odict"):
        cls = d.meta[0] if d.kind == "odict" or d.meta[0] is dict else dict
        return cls(zip(d.meta[1], children))
    if d.kind == "namedtuple":
        return d.meta(*children)
    return children if d.kind == "list" else tuple(children)


def tree_map(fn, tree, *rest, where="tg.nest.tree_map", names=None):
    """``fn`` applied leaf by leaf: ``fn(leaf, *same_place_leaves_of_rest)``, in the shape
    of ``tree``. Each of ``rest`` must nest as ``tree`` does; where one does not, the
    error names the place (``names``: what the message calls ``tree`` and each of ``rest``).
    """
    leaves, treedef = tree_flatten(tree)
    names = names or ["tree"] + [f"rest[{i}]" for i in range(len(rest))]
    others = []
    for other, name in zip(rest, names[1:]):
        assert_same_tree(tree, other, where, names[0], name)
        others.append(tree_leaves(other))
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])


def assert_same_tree(a, b, where, name_a="a", name_b="b"):
    """Raise ValueError, naming the first place they differ, unless ``a`` and ``b`` are
    pytrees of the same shape."""
    problem = _first_difference(a, b, "")
    if problem is not None:
        path, what_a, what_b = problem
        raise ValueError(f"{where}: {name_b} does not have the structure of {name_a}: at "
                         f"{path or 'the top'}, {name_a} has {what_a} but {name_b} has "
                         f"{what_b}. Give {name_b} the same nesting (the same tuple/list "
                         f"lengths and dict keys).")


def _first_difference(a, b, path):
    kind_a, meta_a, children_a, keys = _node(a)
    kind_b, meta_b, children_b, _ = _node(b)
    if (kind_a, meta_a, len(children_a)) != (kind_b, meta_b, len(children_b)):
        return path, _describe(kind_a, meta_a, children_a), _describe(kind_b, meta_b,
                                                                      children_b)
    for key, x, y in zip(keys, children_a, children_b):
        problem = _first_difference(x, y, path + key)
        if problem is not None:
            return problem
    return None


def _describe(kind, meta, children):
    if kind == "leaf":
        return "a leaf"
    if kind == "none":
        return "None"
    if kind in ("dict", "odict"):
        return f"a dict with keys {list(meta[1])!r}"
    return f"a {meta.__name__ if kind == 'namedtuple' else kind} of {len(children)}"


def broadcast_prefix(prefix, tree, where, name="the prefix", of="the arguments"):
    """One entry of ``prefix`` per leaf of ``tree``: ``prefix`` is a *prefix* of ``tree``
    (JAX's in_axes/out_axes rule): where ``prefix`` has a leaf (None counts as a leaf
    here), that value stands for every leaf of the subtree of ``tree`` below it. A list
    and a tuple of the same length match each other."""
    out = []
    _broadcast(prefix, tree, "", out, where, name, of)
    return out


def _broadcast(prefix, tree, path, out, where, name, of):
    kind, meta, children, keys = ("leaf", None, (), ()) if prefix is None else _node(prefix)
    if kind == "leaf":
        out.extend([prefix] * len(tree_leaves(tree)))
        return
    kind_t, meta_t, children_t, _ = _node(tree)
    if kind == "list" and kind_t == "tuple" or kind == "tuple" and kind_t == "list":
        kind = kind_t   # a list of axes for a tuple of values, or the other way round
    if (kind, meta, len(children)) != (kind_t, meta_t, len(children_t)):
        raise ValueError(f"{where}: {name} is not a prefix of {of}: at {path or 'the top'}, "
                         f"{name} has {_describe(kind, meta, children)} but {of} have "
                         f"{_describe(kind_t, meta_t, children_t)}. Give one value (an int "
                         f"or None) for a whole subtree, or a tree nested as {of} are.")
    for key, p, t in zip(keys, children, children_t):
        _broadcast(p, t, path + key, out, where, name, of)


def leaf_paths(tree):
    """Where each leaf of ``tree`` sits, as JAX writes it: ``["[0]", "['w']", ".x"]``."""
    paths = []
    _paths(tree, "", paths)
    return paths


def _paths(tree, path, paths):
    kind, _, children, keys = _node(tree)
    if kind == "leaf":
        paths.append(path)
    for key, child in zip(keys, children):
        _paths(child, path + key, paths)
