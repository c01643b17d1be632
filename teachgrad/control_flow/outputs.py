"""Growing a control-flow node's outputs after it was built.

A While or If node learns which of its subgraph's intermediates the gradient
needs only when the gradient is built, after the node itself. It then gains
one output per such intermediate (a stack of per-iteration values for a loop,
the value itself for a cond), as TensorFlow's while_v2 and cond_v2 do, so
nothing is kept that no gradient reads.
"""
from ..ops.core.recorder import note_new_output
from ..tensor import SymbolicTensor


def add_output(node, shape, dtype):
    """Give ``node`` one more output of this shape and dtype; return it."""
    graph = node.outputs[0].graph
    index = len(node.outputs)
    tensor = SymbolicTensor(graph, node, index, shape, dtype, f"{node.label}:{index}")
    node.outputs = node.outputs + (tensor,)
    graph.output_added(node, tensor)
    note_new_output(node, tensor, graph)
    return tensor
