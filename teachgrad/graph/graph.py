"""Graphs: ops recorded as symbolic nodes, to be run later by a Session.

Inside ``with graph.as_default():`` every teachgrad op adds a node to the graph
and returns ``SymbolicTensor`` outputs that know their shape and dtype but hold
no value. The same op functions, VJP rules included, therefore build forward
and gradient graphs alike.

Node names are unique and readable (``mul``, ``mul_1``, ``layer1/add``), since
the visualizers and the lessons show them.
"""
import contextlib

from .. import backend, validate
from ..ops.core.apply import mode
from ..ops.core.batching import BatchedTensor, innermost_frame, unbatchable_gradient
from ..ops.core.declare import defeffect, defshape, not_differentiable, primitive, takes_complex
from ..ops.core.dtype_check import check_complex
from ..ops.core.op import Node
from ..ops.core.recorder import note_variable_read
from ..ops.core.shape_inference import infer_outputs
from ..state import override, state
from ..tensor import (
    SymbolicTensor,
    Tensor,
    Variable,
    holds_tensor,
    packed,
    scalar_dtype,
    to_array,
)


def _placeholder_kernel(**params):
    raise RuntimeError("a placeholder has no value of its own: feed it")


def _placeholder_shape(shape, dtype):
    return [(shape, dtype)]

# Graph-only ops: a placeholder (fed when the graph runs), a constant, and a read
# of a Variable's current value.
placeholder_p = not_differentiable(primitive("placeholder", _placeholder_kernel))
takes_complex(placeholder_p)
defshape(placeholder_p, _placeholder_shape)

const_p = not_differentiable(primitive("const", lambda value: value))
defeffect(const_p, "view")
takes_complex(const_p)
defshape(const_p, lambda value: [(tuple(value.shape), value.dtype)])

read_variable_p = not_differentiable(primitive("read_variable", lambda variable: variable.value))
takes_complex(read_variable_p)
defshape(read_variable_p, lambda variable: [(tuple(variable.shape), variable.dtype)])


class Graph:
    """A dataflow graph of teachgrad ops.

    Ops made inside ``with graph.as_default():`` add nodes to it; a ``Session``
    runs them::

        graph = tg.Graph()
        with graph.as_default():
            x = tg.placeholder(tg.float32, shape=(None, 3), name="x")
            y = tg.sum(x * x)
        tg.Session(graph).run(y, feed_dict={x: [[1, 2, 3]]})      # 14.0

    A Session runs only what its fetches need, as TensorFlow 1's did: a ``tg.print``
    in a Graph prints when something fetched depends on it. A traced function's graph
    runs every effect on every call (``runs_effects``).
    """

    #: Does running this graph run its effects (prints, random draws) even when no
    #: fetch needs them? No for a Graph run by a Session; yes for a traced function's.
    runs_effects = False

    def __init__(self):
        self.nodes = []           # in creation order, which is a topological order
        self.producers = {}       # tensor id -> node
        self._name_counts = {}
        self.names_used = set()
        self._scopes = []
        self.variable_reads = {}  # Variable id -> the tensor reading it
        self.plans = {}           # cached execution plans (see session.py)

    # -- building -------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        """Make ops inside the block add nodes to this graph."""
        with mode(graph=self):
            yield self

    @contextlib.contextmanager
    def name_scope(self, name):
        """Prefix the names of nodes made in the block with ``name/``."""
        if not isinstance(name, str) or not name.strip("/"):
            validate.fail(TypeError if not isinstance(name, str) else ValueError,
                          "tg.name_scope", "name", "a non-empty string (e.g. 'layer')", name)
        scope = self.unique_name(name)
        # The whole of it below the enclosing scopes: "layer/one" keeps its "layer/".
        prefix = "/".join(self._scopes)
        self._scopes.append(scope[len(prefix) + 1:] if prefix else scope)
        try:
            yield scope
        finally:
            self._scopes.pop()

    def unique_name(self, base):
        """``base`` under the current scopes, numbered if taken: mul, mul_1, mul_2."""
        full = "/".join(self._scopes + [base])
        count = self._name_counts.get(full, 0)
        name = full if count == 0 else f"{full}_{count}"
        while name in self.names_used:   # e.g. a node explicitly named "mul_1" earlier
            count += 1
            name = f"{full}_{count}"
        self._name_counts[full] = count + 1
        self.names_used.add(name)
        return name

    def rename(self, node, name):
        """Call ``node`` ``name`` under the current scopes (numbered if taken), and its
        outputs ``name`` (one output) or ``name:0``, ``name:1``, ...: what an op's
        ``name=`` does in a graph."""
        node.label = self.unique_name(name)
        for i, t in enumerate(node.outputs):
            t.name = node.label if len(node.outputs) == 1 else f"{node.label}:{i}"

    def get_operations(self):
        """The nodes in the order they were made."""
        return list(self.nodes)

    def producer(self, tensor_id):
        """The node that made a tensor of this graph (the engine's protocol)."""
        return self.producers.get(tensor_id)

    def output_added(self, node, tensor):
        """``node`` (a While or If, while its gradient is built) gained the output
        ``tensor``: this graph now knows who made it, and forgets the run plans it made
        for the old outputs."""
        self.producers[tensor.id] = node
        self.plans.clear()

    def find_variable_read(self, variable):
        """The tensor that reads ``variable`` in this graph, or None if the graph never
        reads it. Unlike ``read_variable``, it adds nothing."""
        return self.variable_reads.get(variable.id)

    @contextlib.contextmanager
    def scratch(self):
        """Let the block add nodes to the graph, then take them away again.

        Afterwards the graph is as it was: its nodes, their names, its Variable
        reads and the Session's cached plans. ``tg.explain_gradient`` builds a
        gradient here to see what each VJP rule returns, and leaves no trace.
        """
        containers = (self.producers, self._name_counts, self.names_used,
                      self.variable_reads, self.plans)
        count, saved = len(self.nodes), [container.copy() for container in containers]
        try:
            yield self
        finally:
            del self.nodes[count:]
            for container, before in zip(containers, saved):
                container.clear()
                container.update(before)

    def add_node(self, op, args, params, name=None):
        """Add a node applying ``op`` to ``args``; return its symbolic output(s)."""
        like = next((a for a in args if isinstance(a, Tensor)), None)
        inputs = tuple(self.as_graph_tensor(a, like) for a in args)
        if any(isinstance(t, BatchedTensor) for t in inputs):
            # bind batches a map's ops first; only a node built directly (a gradient's
            # While or If over a map's cotangents) can get here
            raise unbatchable_gradient(f"a {op.name} node")
        if not op.takes_complex:   # called by add_to_graph, called by bind
            check_complex(op, inputs, args)
        specs = infer_outputs(op, inputs, params)
        node = Node(op, inputs, (), params)
        base = name or op.name
        grad_of = state.gradient_of
        if grad_of is not None:   # made by a VJP rule: group it under that rule
            base = f"{grad_of.name}_grad/{base}"
        node.label = self.unique_name(base)
        node.grad_of = grad_of
        outputs = tuple(
            SymbolicTensor(self, node, i, shape, dtype,
                           node.label if len(specs) == 1 else f"{node.label}:{i}")
            for i, (shape, dtype) in enumerate(specs))
        node.outputs = outputs
        for t in outputs:
            self.producers[t.id] = node
        self.nodes.append(node)
        return outputs if op.multiple_results else outputs[0]

    def read_variable(self, variable):
        """The tensor that reads ``variable`` when the graph runs (one per Variable)."""
        read = self.variable_reads.get(variable.id)
        if read is None:
            with no_gradient_scope():
                read = self.add_node(read_variable_p, (), {"variable": variable},
                                     name=variable.name or "read_variable")
            self.variable_reads[variable.id] = read
        note_variable_read(variable, read, self)
        return read

    def assign_variable(self, variable, value, sign=0):
        """``variable.assign(value)`` (``sign`` 1 or -1: ``assign_add``/``assign_sub``)
        while this graph is built: only a traced function (``tg.function``) can hold
        an assignment; a Graph run by a Session reads Variables and never writes them."""
        raise RuntimeError(
            f"Variable.assign while building a tg.Graph: a Graph reads Variables when a "
            f"Session runs it, it cannot assign them. Assign {variable.name or 'the Variable'} "
            f"eagerly with the value Session.run returns, or trace the step with tg.function, "
            f"where assignments are part of the graph.")

    def as_graph_tensor(self, value, like):
        if isinstance(value, SymbolicTensor):
            if value.graph is not self:
                raise ValueError(
                    f"{value.name} belongs to another graph. Tensors of one graph cannot be "
                    f"used in another; pass the value in as an argument or a placeholder.")
            return value
        if isinstance(value, Variable):
            return self.read_variable(value)
        if isinstance(value, BatchedTensor):   # one example of a running map: ops batch it
            innermost_frame((value,))           # (refused once its map has returned)
            return value
        if isinstance(value, Tensor):
            array = value.value
        elif like is not None and isinstance(value, (int, float, bool)):
            array = backend.xp.asarray(value, dtype=scalar_dtype(like.dtype, value))
        elif type(value) in (list, tuple) and holds_tensor(value):
            return packed(value)   # tg.stack of its entries: a node, differentiable
        else:
            array = to_array(value)
        return self.add_constant(array)

    def add_constant(self, array, name=None):
        """A node holding ``array``."""
        with no_gradient_scope():
            return self.add_node(const_p, (), {"value": array}, name=name or "Const")


@contextlib.contextmanager
def no_gradient_scope():
    """Constants and reads are not part of any gradient rule's group of nodes."""
    with override(gradient_of=None):
        yield


def placeholder(dtype, shape=None, name=None):
    """A graph input whose value is fed when the graph runs.

    Args:
      dtype: e.g. ``tg.float32``.
      shape: a tuple with None for dimensions that may vary (the batch size,
        say), or None for a tensor of any rank.
      name: a name for the node (``x``, ``labels``).
    """
    graph = state.graph
    if graph is None:
        raise RuntimeError("tg.placeholder needs a graph: create it inside "
                           "`with tg.Graph().as_default():`.")
    shape = None if shape is None else validate.shape(shape, "shape", "tg.placeholder",
                                                      unknown=True)
    if dtype is None:
        validate.fail(TypeError, "tg.placeholder", "dtype", "a data type (tg.float32, ...)",
                      dtype)
    dtype = validate.dtype(dtype, "dtype", "tg.placeholder")
    validate.name(name, "tg.placeholder")
    with no_gradient_scope():
        return graph.add_node(placeholder_p, (), {"shape": shape, "dtype": dtype},
                              name=name or "placeholder")


def get_default_graph():
    """The graph ops are being added to, or None when running eagerly."""
    return state.graph


@contextlib.contextmanager
def name_scope(name):
    """Group the nodes made in the block under ``name/`` (no effect when eager)."""
    graph = get_default_graph()
    if graph is None:
        yield None
        return
    with graph.name_scope(name) as scope:
        yield scope
