"""What a drawn node says: its name, its op, its outputs' shapes and dtypes, and
their values when they are small.

Every piece of text goes through ``escape.html``; the markup around it (bold
title, smaller detail lines) is the only HTML this module writes.
"""
import re
from dataclasses import dataclass

from .. import backend
from ..graph.graph import const_p
from ..tensor import SymbolicTensor
from .escape import Html, html
from .values import format_array

_NUMBERED = re.compile(r"_\d+$")
MAX_OUTPUT_LINES = 4     # a node with more outputs (a split, say) lists the first few


@dataclass(frozen=True)
class LabelOptions:
    """Which details a node label shows (``draw``'s show_* arguments)."""
    show_shapes: bool = True
    show_dtypes: bool = True
    show_values: bool = True
    max_value_size: int = 6     # values with more entries than this are not shown


def format_shape(shape):
    """``(2, 3)``; an unknown dimension is ``?``, an unknown rank ``(?)``; a scalar ``()``."""
    if shape is None:
        return "(?)"
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def tensor_value(tensor, max_size):
    """The value of a concrete tensor, as the steppers write it (``[1, 2.5]``), if it has
    at most ``max_size`` entries; None for a graph tensor."""
    if isinstance(tensor, SymbolicTensor) or tensor.shape is None:
        return None
    if tensor.size is None or tensor.size > max_size:
        return None
    return format_array(tensor.numpy())


def node_title(node, scoped):
    """The name shown on an op node.

    A graph node shows its name; inside a name-scope cluster only the last part
    (the cluster shows the rest). A tape node has no name of its own: it shows
    its op (its ``node.name`` holds a global counter that changes from run to run).
    """
    if node.label is None:
        return node.op.name
    return node.label.rsplit("/", 1)[-1] if scoped else node.label


def op_label(node, options, scoped):
    """The label of an op node: its name, its op (when the name does not say it),
    then one line per output (shape, dtype, small value)."""
    title = node_title(node, scoped)
    lines = []
    if _NUMBERED.sub("", title).lower() != node.op.name.lower():
        lines.append(node.op.name)
    outputs = node.outputs
    values = [_output_value(node, i, options) for i in range(len(outputs))]
    if len(outputs) == 1:
        lines += [line for line in (_describe(outputs[0], options), values[0]) if line]
    else:
        for i, (t, value) in enumerate(zip(outputs[:MAX_OUTPUT_LINES], values)):
            detail = " ".join(part for part in (_describe(t, options), value) if part)
            lines.append(f"{i}: {detail}" if detail else None)
        if len(outputs) > MAX_OUTPUT_LINES:
            lines.append(f"... {len(outputs) - MAX_OUTPUT_LINES} more outputs")
    return compose(title, [line for line in lines if line])


def tensor_label(tensor, options):
    """The label of a tensor drawn on its own (an input no drawn op produced)."""
    lines = [_describe(tensor, options)]
    if options.show_values:
        lines.append(tensor_value(tensor, options.max_value_size))
    return compose(tensor.name or "tensor", [line for line in lines if line])


def group_label(scope, count):
    """The label of a name scope folded into one node."""
    return compose(scope, [f"{count} ops" if count != 1 else "1 op"])


def cluster_label(text):
    return Html(f"<b>{html(text)}</b>")


def compose(title, lines):
    """A bold title and smaller detail lines, all escaped."""
    body = f"<b>{html(title)}</b>"
    for line in lines:
        body += f'<br/><font point-size="9">{html(line)}</font>'
    return Html(body)


def _describe(tensor, options):
    parts = []
    if options.show_shapes:
        parts.append(format_shape(tensor.shape))
    if options.show_dtypes:
        parts.append(str(tensor.dtype))
    return " ".join(parts)


def _output_value(node, index, options):
    if not options.show_values:
        return None
    if node.op is const_p:   # a graph constant holds its value in the node
        value = node.params["value"]
        if value.size > options.max_value_size:
            return None
        return format_array(backend.to_numpy(value))
    return tensor_value(node.outputs[index], options.max_value_size)
