"""Checking that a loop body or a cond branch returns what it must.

``while_loop`` needs the body to hand back the loop variables in the same
nested structure, with the same dtypes and (unless a shape invariant relaxes
them) the same shapes; ``cond`` needs both branches to agree. A mismatch is
named by its path in the structure, e.g. ``loop_vars[1]['h']``.
"""
from .. import nest


def paths(structure, root):
    """The path of each leaf of ``structure``, in ``nest.flatten`` order."""
    if isinstance(structure, dict):
        return [p for key in structure for p in paths(structure[key], f"{root}[{key!r}]")]
    if isinstance(structure, (list, tuple)):
        return [p for i, item in enumerate(structure) for p in paths(item, f"{root}[{i}]")]
    return [root]


def align(result, like):
    """``result`` with its dicts' keys in the order of ``like``'s (when the keys agree)."""
    if isinstance(result, dict) and isinstance(like, dict) and set(result) == set(like):
        return type(result)((k, align(result[k], like[k])) for k in like)
    if (isinstance(result, (list, tuple)) and isinstance(like, (list, tuple))
            and len(result) == len(like)):
        items = [align(r, l) for r, l in zip(result, like)]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


def check_same_structure(expected, got, what, expected_name, got_name):
    """Raise a ValueError naming both structures unless they nest alike."""
    try:
        nest.assert_same_structure(expected, got)
    except ValueError:
        raise ValueError(f"{what}: {got_name} has a different structure than {expected_name}. "
                         f"{expected_name}: {_describe(expected)}; {got_name}: "
                         f"{_describe(got)}. Return the same nesting of tensors.") from None


def check_dtype(path, expected, got, what):
    if expected != got:
        raise TypeError(f"{what}: {path} enters as {expected} but comes back as {got}. "
                        f"Keep its dtype (cast inside the function with tg.cast).")


def check_shape(path, invariant, got, what):
    """``got`` must fit ``invariant`` (None matches any size, a None shape any rank)."""
    if invariant is None or got is None:
        return
    if len(invariant) != len(got) or any(
            d is not None and g is not None and d != g for d, g in zip(invariant, got)) or any(
            d is not None and g is None for d, g in zip(invariant, got)):
        raise ValueError(
            f"{what}: {path} enters with shape {_pretty(invariant)} but comes back with shape "
            f"{_pretty(got)}. Keep its shape, or relax it with shape_invariants= "
            f"(None for a size that may change).")


def _pretty(shape):
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def _describe(structure):
    if isinstance(structure, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in structure.items()) + "}"
    if isinstance(structure, (list, tuple)):
        inner = ", ".join(_describe(v) for v in structure)
        return f"[{inner}]" if isinstance(structure, list) else f"({inner}{',' if len(structure) == 1 else ''})"
    return "tensor"
