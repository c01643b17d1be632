"""The graphs inside a While or If node: loop bodies, conditions, branches.

A ``SubGraph`` is traced inside an outer graph. When the Python function uses
a tensor of the outer graph (or of a graph further out), the subgraph
*captures* it: a placeholder stands for it inside, and the outer tensor becomes
an input of the While/If node. That is how a loop body reads a weight matrix
defined outside the loop, and how the gradient reaches that matrix.

A gradient subgraph (``MirrorGraph``) also *mirrors* a forward subgraph: the
VJP rules it runs refer to the forward subgraph's tensors, and each such
tensor is resolved by the While/If that owns the forward subgraph (a loop
reads it back from its stack of saved values, a cond from an extra output).
"""
import contextlib

from .. import nest, validate
from ..autodiff.pending import trainable
from ..graph.concrete import FuncGraph
from ..graph.graph import no_gradient_scope, placeholder
from ..ops import BatchedTensor, identity
from ..ops.core.batching import unbatchable_gradient
from ..ops.core.op import Node
from ..ops.core.recorder import note_capture, note_variable_read
from ..ops.elementwise.casts import identity_p
from ..ops.walk import upstream_nodes
from ..state import override, state
from ..tensor import SymbolicTensor, Tensor, Variable, convert_to_tensor


class SubGraph(FuncGraph):
    """A graph traced inside ``outer`` that captures the outer tensors it uses."""

    def __init__(self, name, outer):
        super().__init__(name)
        self.outer = outer
        self.external = []     # the captured tensors, of graphs further out
        self.internal = []     # the placeholders standing for them here
        self._captured = {}    # outer tensor id -> its placeholder here

    def as_graph_tensor(self, value, like):
        if isinstance(value, SymbolicTensor) and value.graph is not self:
            return self.capture(value)
        if isinstance(value, BatchedTensor):
            # The map's ops capture its batches, never its views: a view reaching a body
            # as such is a gradient's loop or branch mapped over cotangents.
            raise unbatchable_gradient(f"a graph's loop or branch ({self.name}) read")
        return super().as_graph_tensor(value, like)

    def capture(self, tensor):
        """The tensor of this graph that stands for ``tensor`` of an enclosing graph."""
        found = self._captured.get(tensor.id)
        if found is None:
            outer_tensor = self._from_outer(tensor)
            found = self._captured.get(outer_tensor.id)
            if found is None:
                with self.as_default(), no_gradient_scope():
                    found = placeholder(outer_tensor.dtype, outer_tensor.shape,
                                        name=f"capture_{len(self.external)}")
                self.external.append(outer_tensor)
                self.internal.append(found)
                self._captured[outer_tensor.id] = found
            self._captured[tensor.id] = found
            note_capture(tensor, found, self)
        return found

    def captured(self, tensor):
        """The placeholder standing for ``tensor`` of an enclosing graph, if this graph
        has captured it (else None)."""
        return self._captured.get(tensor.id)

    def _from_outer(self, tensor):
        """``tensor`` as a tensor of the outer graph (captured there first if need be)."""
        if tensor.graph is self.outer:
            return tensor
        if isinstance(self.outer, SubGraph):
            return self.outer.as_graph_tensor(tensor, None)
        raise ValueError(
            f"{tensor.name} belongs to a graph that this loop or cond cannot reach. Use "
            f"tensors of the graph the while_loop/cond is built in, or pass them in.")

    def read_variable(self, variable):
        read = self.capture(self.outer.read_variable(variable))
        note_variable_read(variable, read, self)
        return read

    def producer_across_captures(self, until=None, beyond=None, keep=None):
        """``producer(tensor_id)`` for a backward pass that starts in this graph and
        may go on into the graphs enclosing it.

        Each captured placeholder is made by a *capture* node: an identity of the
        outer tensor (TensorFlow records a capture so), so a gradient that reaches
        the placeholder flows on to the outer tensor, and from there through the
        outer graph's own nodes. Their VJP rules then run here, in this graph: the
        outer values they read are captured in turn, as ``tg.gradients`` does in a
        TensorFlow loop body (``dy/dx`` for ``y`` computed from ``x`` outside).

        A tape asks for less: ``until`` is its graph, where ``beyond`` (its own
        record) says who made a tensor, and ``keep(node)`` says which nodes of the
        subgraphs it may follow (those made while it recorded).
        """
        captures, producers, graph = {}, [], self
        while isinstance(graph, SubGraph) and graph is not until:
            producers.append(graph.producer if keep is None else _kept(graph.producer, keep))
            for k, (outer, inner) in enumerate(zip(graph.external, graph.internal)):
                node = Node(identity_p, (outer,), (inner,), {})
                node.label = f"{graph.name}/capture_{k}"
                captures[inner.id] = node
            graph = graph.outer
        producers.append(graph.producer if beyond is None else beyond)

        def producer(tensor_id):
            node = captures.get(tensor_id)
            for find in producers:
                if node is not None:
                    return node
                node = find(tensor_id)
            return node
        return producer

    def outermost(self):
        """The graph that this one (and the subgraphs it is traced in) is traced in."""
        graph = self
        while isinstance(graph, SubGraph):
            graph = graph.outer
        return graph


def _kept(producer, keep):
    """``producer``, finding only the nodes that ``keep`` accepts."""
    def find(tensor_id):
        node = producer(tensor_id)
        return node if node is not None and keep(node) else None
    return find


class MirrorGraph(SubGraph):
    """A gradient subgraph: tensors of ``forward`` (a SubGraph) are resolved by ``resolve``.

    ``resolve(tensor)`` returns the tensor of this graph holding the value that
    ``tensor`` had in the forward run (the same iteration, for a loop).
    """

    def __init__(self, name, outer, forward, resolve):
        super().__init__(name, outer)
        self.forward = forward
        self._resolve = resolve
        self._mirrored = {}    # forward tensor id -> its value here

    def as_graph_tensor(self, value, like):
        if isinstance(value, SymbolicTensor) and value.graph is self.forward:
            found = self._mirrored.get(value.id)
            if found is None:
                found = self._mirrored[value.id] = self._mirror(value)
            return found
        return super().as_graph_tensor(value, like)

    def _mirror(self, tensor):
        node = tensor.node
        if node.op.name == "const":   # constants are copied, not saved
            return self.add_constant(node.params["value"])
        for external, internal in zip(self.forward.external, self.forward.internal):
            if internal is tensor:      # a captured outer tensor: the same one, captured here
                return self.as_graph_tensor(external, None)
        with self.as_default():
            return self._resolve(tensor)


class Traced:
    """A Python function traced into a SubGraph: its placeholders and outputs.

    ``inputs`` stand for the function's arguments; ``graph.external`` are the
    outer tensors it captured (fed through ``graph.internal``).
    """

    def __init__(self, graph, inputs, outputs, structure):
        self.graph = graph
        self.inputs = inputs
        self.outputs = outputs
        self.structure = structure

    @property
    def external(self):
        return self.graph.external

    @property
    def feed_ids(self):
        return [t.id for t in self.inputs + self.graph.internal]

    def __repr__(self):
        return f"<traced {self.graph.name}: {len(self.inputs)} inputs, " \
               f"{len(self.outputs)} outputs, {len(self.external)} captured>"


def trace(fn, specs, name, outer=None, graph=None):
    """Trace ``fn`` on placeholders shaped like ``specs`` (a list of (shape, dtype, name)).

    Returns ``(traced, result)``: the Traced function and the raw structure
    ``fn`` returned (its leaves converted to tensors of the subgraph).
    """
    graph = graph or SubGraph(name, outer if outer is not None else state.graph)
    with graph.as_default():
        inputs = [placeholder(dtype, shape, name=arg) for shape, dtype, arg in specs]
        result = fn(*inputs)
        flat = [] if result is None else [
            graph.as_graph_tensor(_checked_leaf(leaf, name), None)
            for leaf in nest.flatten(result)]
    return Traced(graph, inputs, flat, result), result


def _checked_leaf(leaf, name):
    """A value a traced branch or loop body returned: a tensor, or numbers."""
    if isinstance(leaf, BatchedTensor):
        # tg.cond and tg.while_loop inside a map batch their bodies themselves; this is a
        # gradient's branch or loop (an If or While node's VJP) given a map's cotangents.
        raise unbatchable_gradient(f"a graph's loop or branch ({name}) with results")
    if isinstance(leaf, Tensor) or isinstance(leaf, (bool, int, float)):
        return leaf
    return validate.tensor_like(leaf, "each value it returns", f"the function traced as {name}")


@contextlib.contextmanager
def entered(context):
    """Tag the ops recorded in the block with ``context`` (a loop iteration or branch)."""
    with override(control_context=context):
        yield


def as_tensor(value, like=None, name="loop_vars", where="tg.while_loop"):
    """A loop variable or branch output as an eager Tensor (checked, naming ``name``).

    A Variable is read (so tapes see the read), never passed on itself: a
    result must not change when the Variable is assigned later.
    """
    if isinstance(value, Variable):
        return identity(value)
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float)):
        return convert_to_tensor(value, like)
    return Tensor(validate.tensor_like(value, name, where))


def differentiable_sources(graph, tensors):
    """The ids of the tensors of ``graph`` that ``tensors`` depend on through
    floating-point edges of differentiable ops: where a gradient can flow."""
    starts = [t for t in tensors if trainable(t)]

    def producer(tensor_id):   # the walk stops at an op without a derivative
        node = graph.producer(tensor_id)
        return node if node is not None and node.op.differentiable else None
    nodes = upstream_nodes(starts, producer)
    return {t.id for t in starts} | {x.id for node in nodes for x in node.inputs if trainable(x)}
