"""What a drawn node says: its name, its op, its outputs' shapes and dtypes, and
their values (``value = 0.5``) when they are small, and gradients (``grad = 1``)
when the drawing shows them.

Every piece of text goes through ``escape.html``; the markup around it (bold
title, smaller detail lines) is the only HTML this module writes.
"""
import re
from dataclasses import dataclass

from .. import backend
from ..graph.graph import const_p
from ..graph.optimize.formula import recipe_formula
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
    gradient_word: str = "grad"  # what a gradient line says: grad = 1 (tangent = 1 forward)


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


def op_text(op):
    """An op as pictures name it: its name, and for a fused op the algebra it stands for
    (``tanh_grad: (1 - y * y) * g``), so the one node still shows its math."""
    return f"{op.name}: {recipe_formula(op)}" if op.fused else op.name


def node_title(node, scoped, names=None):
    """The name shown on an op node: what ``names`` calls it (``a`` for an op given
    ``name="a"``, ``t3`` for an unnamed tape op, a graph node's unique name).
    Inside a name-scope cluster only the last part (the cluster shows the rest)."""
    title = names.node(node) if names is not None else (node.label or node.op.name)
    return title.rsplit("/", 1)[-1] if scoped and node.label else title


def op_label(node, options, scoped, names=None, gradients=None):
    """The label of an op node: its name, its op (when the name does not say it),
    then one line per output (shape, dtype, ``value = ...``, ``grad = ...``)."""
    title = node_title(node, scoped, names)
    lines = []
    says_op = (names.says_op(node) if names is not None
               else _NUMBERED.sub("", title).lower() == node.op.name.lower())
    if not says_op:
        lines.append(op_text(node.op))
    elif node.op.fused:
        lines.append(recipe_formula(node.op))
    outputs = node.outputs
    values = [_output_value(node, i, options) for i in range(len(outputs))]
    grads = [_gradient(t, gradients, options) for t in outputs]
    if len(outputs) == 1:
        lines += [line for line in (_describe(outputs[0], options), values[0], grads[0])
                  if line]
    else:
        for i, (t, value, grad) in enumerate(zip(outputs[:MAX_OUTPUT_LINES], values, grads)):
            detail = " ".join(part for part in (_describe(t, options), value) if part)
            lines.append(f"{i}: {detail}" if detail else None)
            lines.append(f"{i}: {grad}" if grad else None)
        if len(outputs) > MAX_OUTPUT_LINES:
            lines.append(f"... {len(outputs) - MAX_OUTPUT_LINES} more outputs")
    return compose(title, [line for line in lines if line])


def tensor_label(tensor, options, names=None, gradients=None):
    """The label of a tensor drawn on its own (an input no drawn op produced)."""
    lines = [_describe(tensor, options)]
    if options.show_values:
        lines.append(_as_value(tensor_value(tensor, options.max_value_size)))
    lines.append(_gradient(tensor, gradients, options))
    title = names.tensor(tensor) if names is not None else (tensor.name or "a tensor")
    return compose(title, [line for line in lines if line])


def _as_value(text):
    return None if text is None else f"value = {text}"


def _gradient(tensor, gradients, options):
    text = gradients.get(tensor.id) if gradients else None
    return None if text is None else f"{options.gradient_word} = {text}"


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
        return _as_value(format_array(backend.to_numpy(value)))
    return _as_value(tensor_value(node.outputs[index], options.max_value_size))
