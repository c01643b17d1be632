"""Words and numbers for the steppers and drawings: short, rounded, deterministic.

This is the one place numbers become text: the steppers' frames, the drawings'
node labels and the local Jacobian's tables all write them here, so a value
reads the same in a drawing and in the sentence beside it. Small tensors are
written out, rounded to 4 significant digits (``[0.9845, 1.969]``); large ones
by dtype and shape (``float64[64, 10]``); complex numbers as ``a + bi``
(``1 - 0.5i``); a symbolic tensor of a graph, which
has no value until a Session runs it, by its name. The same inputs always give
the same text, so a notebook's saved output compares equal under nbval.
"""
from .. import backend
from ..ops import IndexedSlices
from ..tensor import SymbolicTensor, Tensor

#: Arrays with at most this many entries are written out; larger ones are summarised.
SMALL = 6


def format_value(value, digits=4):
    """``value`` (a Tensor, IndexedSlices, symbolic tensor or None) in a few characters."""
    if value is None:
        return "None"
    if not hasattr(value, "numpy"):   # a plain array (a graph loop's values as it runs)
        value = Tensor(backend.xp.asarray(value))
    if isinstance(value, IndexedSlices):
        rows = backend.to_numpy(value.indices).tolist()
        shown = rows if len(rows) <= SMALL else rows[:SMALL] + ["..."]
        return (f"IndexedSlices(rows {', '.join(map(str, shown))} of "
                f"{value.dtype}{list(value.dense_shape)})")
    if isinstance(value, SymbolicTensor):
        return value.name
    shape = tuple(value.shape)
    size = 1
    for d in shape:
        size *= d
    if size > SMALL:
        return f"{value.dtype}{list(shape)}"
    return format_array(value.numpy(), digits)


#: Arrays with at most this many entries are also written out in full, as a block of
#: rows, where there is room for it (a stepper's table of gradients).
READABLE = 64


def format_block(value, digits=4):
    """A tensor too big for ``format_value`` but small enough to read (at most
    ``READABLE`` entries), written out as rows, its axes of length 1 left out
    (a ``(1, 4, 4, 1)`` image as a 4x4 grid, said in a first line); None for
    others (small ones, big ones, symbolic ones, IndexedSlices)."""
    if value is None or isinstance(value, (IndexedSlices, SymbolicTensor)) \
            or not hasattr(value, "numpy"):
        return None
    array = value.numpy()
    if not SMALL < array.size <= READABLE or array.dtype.kind not in "fciub":
        return None
    shown = array.squeeze() if array.ndim > 2 else array
    if shown.ndim > 2:
        shown = shown.reshape(-1, shown.shape[-1])
    rows = shown.reshape(1, -1) if shown.ndim == 1 else shown
    head = (f"{array.dtype}{list(array.shape)}, shown as {rows.shape[0]}x{rows.shape[1]}:"
            if rows.shape != array.shape else f"{array.dtype}{list(array.shape)}:")
    width = max(len(format_number(v, digits)) for v in rows.ravel().tolist())
    lines = ["  ".join(format_number(v, digits).rjust(width) for v in row)
             for row in rows.tolist()]
    return "\n".join([head] + lines)


def format_array(array, digits=4):
    """A numpy array as nested lists on one line: floats rounded (``[[1, 2.5]]``), complex
    numbers as ``a + bi`` (``[1 + 2i, -0.5i]``), integers and bools as they are
    (``[True, False]``)."""
    if array.dtype.kind in "fc":
        if not array.shape:
            return format_number(array.item(), digits)
        return _nested(array.tolist(), digits)
    return str(array.tolist())


def format_number(x, digits=4):
    """One number rounded to ``digits`` significant digits: ``1.969``, ``2.5e-07``;
    never ``-0``. A complex number reads ``a + bi`` (``1 - 2i``; ``2i`` with no real part)."""
    if isinstance(x, complex):
        return _complex_number(x, digits)
    text = f"{x:.{digits}g}"
    return "0" if text == "-0" else text


def _complex_number(z, digits):
    re, im = format_number(z.real, digits), format_number(z.imag, digits)
    if im == "0":
        return re
    if re == "0":
        return f"{im}i"
    return f"{re} - {im[1:]}i" if im.startswith("-") else f"{re} + {im}i"


def format_sum(texts):
    """Numbers written as a sum, for reading: ``0.5 - 0.4444``, not ``0.5 + -0.4444``
    (arrays keep their ``+``)."""
    out = ""
    for i, text in enumerate(texts):
        if i == 0:
            out = text
        elif text.startswith("-") and not text.startswith("-["):
            out += " - " + text[1:]
        else:
            out += " + " + text
    return out


def _nested(items, digits):
    if isinstance(items, list):
        return "[" + ", ".join(_nested(i, digits) for i in items) + "]"
    return format_number(items, digits)


def node_label(node, drawing_name=None):
    """How sentences name a node: a graph node by its unique name (``mul_1``); a
    tape node, whose own name carries a process-wide counter, by its op and
    its drawing name (``multiply (n0)``), which are the same in every run."""
    if node is None:
        return "nothing"
    if getattr(node, "label", None):
        return node.label
    op = getattr(getattr(node, "op", None), "name", type(node).__name__)
    return f"{op} ({drawing_name})" if drawing_name else op


def loop_label(loop, labels=None):
    """How sentences name a while loop: its node's label, or for an eager loop
    (an ``EagerLoop`` record, which is not a node) ``while_loop 'name'``."""
    if labels and loop in labels:
        return labels[loop]
    if getattr(loop, "label", None) or hasattr(loop, "op"):
        return node_label(loop)
    return f"while_loop {getattr(loop, 'name', None) or ''!r}"


def join_words(words):
    """``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def plural(count, one, many=None):
    """``1 op lies``, ``3 ops lie``: ``one`` after 1, ``many`` (default ``one + "s"``) otherwise."""
    return f"{count} {one if count == 1 else (many or one + 's')}"
