"""How ``tg.print`` writes values: tensors as TensorFlow's ``tf.print`` writes them.

A tensor is written like numpy without commas, ``[0 1 2]``, rows on lines of
their own, ``[[1 2]\\n [3 4]]``. Along each axis longer than twice ``summarize``
only the first and last ``summarize`` entries are written, with ``...`` between
(``[0 1 2 ... 7 8 9]``, summarize 3, the default); ``summarize=-1`` writes them all.
Numbers are written as C++'s streams write them, which is what TensorFlow's
kernel uses: floats with six significant digits (``0.3``, ``3.14159``), booleans
as ``1`` and ``0``.

Python values around the tensors are written as Python writes them (``[23, 5]``,
``{'a': ...}`` with the keys sorted, strings quoted inside a list), except that
a string given on its own is written as it is: ``tg.print("loss:", x)``.
"""
import numpy as np

#: How many entries at each end of an axis are written when ``summarize`` is None.
DEFAULT_SUMMARIZE = 3


def format_element(value):
    """One entry of a tensor, as C++'s ``ostream << value`` writes it."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (np.complexfloating, complex)):
        return f"({format_element(value.real)},{format_element(value.imag)})"
    if isinstance(value, (np.floating, float)):
        return f"{float(value):g}"
    if isinstance(value, (bytes, np.bytes_)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    return str(value)


def format_array(array, summarize=None):
    """``array`` written as ``tf.print`` writes a tensor."""
    edge = DEFAULT_SUMMARIZE if summarize is None else summarize
    array = np.asarray(array)
    if array.ndim == 0:
        return format_element(array[()])
    quote = array.dtype.kind in "SU"
    return _rows(array, edge, 1, quote)


def _rows(array, edge, depth, quote):
    """``array`` (ndim >= 1) as nested brackets, at nesting ``depth``."""
    if array.ndim == 1:
        cells = [f'"{format_element(v)}"' if quote else format_element(v) for v in array]
        return "[" + " ".join(_summarized(cells, edge)) + "]"
    parts = [row if row is ELLIPSIS else _rows(row, edge, depth + 1, quote)
             for row in _summarized(list(array), edge)]
    gap = "\n" * (array.ndim - 1) + " " * depth
    return "[" + gap.join(parts) + "]"


#: What stands for the entries left out in the middle of a long axis.
ELLIPSIS = "..."


def _summarized(items, edge):
    """``items`` with the middle replaced by ``...`` when longer than ``2 * edge``."""
    if edge < 0 or len(items) <= 2 * edge:
        return items
    return items[:edge] + [ELLIPSIS] + items[len(items) - edge:]


def format_value(value, summarize=None, top=True):
    """A value given to ``tg.print`` (an array, or a Python structure holding arrays)."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return format_array(value, summarize)
    if isinstance(value, str):
        return value if top else repr(value)
    if isinstance(value, dict):
        try:
            items = sorted(value.items())
        except TypeError:   # keys that do not compare: in the order given
            items = list(value.items())
        return "{" + ", ".join(f"{k!r}: {format_value(v, summarize, False)}"
                               for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v, summarize, False) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(format_value(v, summarize, False) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value) if not top else str(value)
