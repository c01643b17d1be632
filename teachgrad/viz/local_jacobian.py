"""``tg.viz.local_jacobian``: the small matrix an op's VJP and JVP multiply by.

An op's VJP rule never builds its Jacobian ``J``: it computes ``u^T J`` for
the cotangent ``u`` directly, and a JVP computes ``J t``. For a small op
applied to small inputs, the matrix can be recovered from the rules
themselves: row ``r`` of ``J`` is the VJP of the one-hot cotangent ``e_r``,
column ``c`` is the JVP of the one-hot tangent ``e_c``. ``local_jacobian``
does exactly that at the inputs the op ran on, and shows ``J`` as a heat map
with ``u`` and ``u^T J`` (what the VJP returns) and ``t`` and ``J t`` (what the
JVP returns) beside it. For an input that was broadcast it also lists which
cotangent entries the VJP's unbroadcast sum adds up for each of its entries.

    x, y = tg.constant([[1.0], [2.0]]), tg.constant([3.0, 4.0, 5.0])
    tg.viz.local_jacobian(tg.multiply, x, y)      # J is 6 x 2 for x, 6 x 3 for y
"""
from dataclasses import dataclass

import numpy as np

from .. import backend
from ..autodiff.forward import jvp_of
from ..autodiff.rule_calls import call_vjp
from ..autodiff.tape import GradientTape
from ..ops import IndexedSlices
from ..ops.core.apply import unobserved
from ..ops.core.op import Node, Op
from ..tensor import SymbolicTensor, Tensor, constant
from . import local_jacobian_render as render

#: The largest Jacobian block drawn (rows x columns).
MAX_ENTRIES = 2500


def local_jacobian(op_or_node, *inputs, cotangent=None, tangent=None, feed_dict=None,
                   **params):
    """The dense Jacobian of one op at its inputs, from its own VJP and JVP rules.

    Args:
      op_or_node: a recorded ``Node`` (from a tape, a trace's events, or a graph
        with ``feed_dict=``), an ``Op`` (then give ``inputs`` and ``params``), or a
        function that runs one op, such as ``tg.multiply`` (then give ``inputs``).
      inputs: the op's inputs, when ``op_or_node`` is not a node.
      cotangent: ``u`` for ``u^T J`` (ones shaped like the output by default).
      tangent: ``t`` for ``J t``, one per input (ones by default).
      feed_dict: for a graph node: the values to run the graph with.

    Returns:
      A ``LocalJacobian``: a heat map in a notebook, a table as text;
      ``.jacobian(output, input)`` is the matrix as a numpy array.
    """
    node = _node_of(op_or_node, inputs, params, feed_dict)
    return LocalJacobian(node, cotangent, tangent)


def _node_of(op_or_node, inputs, params, feed_dict):
    if isinstance(op_or_node, Node):
        node = op_or_node
        if isinstance(node.outputs[0], SymbolicTensor):
            if feed_dict is None:
                raise ValueError(f"{node.name} is a graph node: it has no values. Pass "
                                 f"feed_dict= to run the graph up to it.")
            from ..graph.session import Session
            values = Session(node.outputs[0].graph).run(list(node.inputs), feed_dict)
            return _run(node.op, [constant(v) for v in values], node.params)
        return node
    tensors = [x if isinstance(x, Tensor) else constant(x) for x in inputs]
    if isinstance(op_or_node, Op):
        return _run(op_or_node, tensors, params)
    if not callable(op_or_node):
        raise TypeError(f"local_jacobian takes a Node, an Op or a function running one op, "
                        f"not {type(op_or_node).__name__}.")
    with unobserved(), GradientTape(persistent=True) as tape:
        tape.watch([t for t in tensors if t.dtype.kind in "fc"])
        out = op_or_node(*tensors, **params)
    nodes = tape.recorded_nodes()
    if len(nodes) != 1 or not isinstance(out, (Tensor, list, tuple)):
        names = ", ".join(n.op.name for n in nodes) or "none"
        raise ValueError(f"local_jacobian shows one op, but the function ran {len(nodes)} "
                         f"recorded ops ({names}). Pass one of their Nodes, or use "
                         f"tg.jacrev for the Jacobian of a whole function.")
    return nodes[0]


def _run(op, tensors, params):
    from ..ops.core.apply import innermost
    with unobserved(), GradientTape() as tape:
        tape.watch([t for t in tensors if t.dtype.kind in "fc"])
        innermost.process(op, *tensors, **params)
    return tape.recorded_nodes()[0]


def _numpy(value):
    if isinstance(value, IndexedSlices):
        value = value.to_dense()
    return np.asarray(value.numpy(), dtype=np.float64) + 0.0   # no -0


@dataclass
class _Block:
    output: int
    input: int
    matrix: np.ndarray          # from the VJP: row r is the VJP of e_r
    from_jvp: np.ndarray        # from the JVP: column c is the JVP of e_c


class LocalJacobian:
    """The Jacobian blocks of one node, with ``u``, ``u^T J``, ``t`` and ``J t``.

    Attributes:
      node: the node inspected.
      blocks: ``{(output, input): _Block}`` for float outputs and float inputs.
      vjp: per input, ``u^T J`` as the VJP rule computes it (flat numpy arrays).
      jvp: per (output, input), ``J t`` as the JVP computes it from that input's t.
      agree: whether the Jacobians built from the VJP and from the JVP agree
        (the dot-product identity, entry by entry).
      broadcast: per broadcast input, for each of its entries the output entries
        whose cotangents the unbroadcast sum adds up.
    """

    def __init__(self, node, cotangent, tangent):
        self.node = node
        op = node.op
        self.outputs = [k for k, y in enumerate(node.outputs) if y.dtype.kind in "fc"]
        self.inputs = [i for i, x in enumerate(node.inputs) if x.dtype.kind in "fc"]
        if not op.differentiable or not self.inputs or not self.outputs:
            raise ValueError(f"{node.name} ({op.name}) has no derivative to show: it is not "
                             f"differentiable, or has no floating-point inputs or outputs.")
        for k in self.outputs:
            for i in self.inputs:
                if node.outputs[k].size * node.inputs[i].size > MAX_ENTRIES:
                    raise ValueError(f"The Jacobian of {node.name} has "
                                     f"{node.outputs[k].size} x {node.inputs[i].size} entries, "
                                     f"too many to draw (at most {MAX_ENTRIES}); try it on "
                                     f"smaller inputs.")
        with unobserved():
            self._build(cotangent, tangent)

    def _build(self, cotangent, tangent):
        node = self.node
        needed = [x.dtype.kind in "fc" for x in node.inputs]
        rows, columns = self._vjp_rows(needed), self._jvp_columns()
        self.blocks = {key: _Block(key[0], key[1], np.array(rows[key]).reshape(
            node.outputs[key[0]].size, node.inputs[key[1]].size),
            np.array(columns[key]).reshape(node.inputs[key[1]].size,
                                           node.outputs[key[0]].size).T) for key in rows}
        self.agree = all(np.allclose(b.matrix, b.from_jvp, rtol=1e-6, atol=1e-9)
                         for b in self.blocks.values())
        self.cotangent = self._vectors(cotangent, [node.outputs[k] for k in self.outputs])
        self.tangent = self._vectors(tangent, [node.inputs[i] for i in self.inputs])
        self.vjp = self._vjp_of_cotangent(needed)
        self.jvp = self._jvp_of_tangent()
        self.broadcast = self._broadcasts()

    def _vjp_rows(self, needed):
        """{(output k, input i): the block's rows}, one VJP per one-hot output cotangent."""
        node = self.node
        rows = {(k, i): [] for k in self.outputs for i in self.inputs}
        for k in self.outputs:
            y = node.outputs[k]
            for r in range(y.size):
                grads = call_vjp(node, self._one_hot_outputs(k, r), needed)
                for i in self.inputs:
                    g = grads[i]
                    rows[(k, i)].append(np.zeros(node.inputs[i].size) if g is None
                                        else _numpy(g).ravel())
        return rows

    def _jvp_columns(self):
        """{(output k, input i): the block's columns}, one JVP per one-hot input tangent."""
        node = self.node
        columns = {(k, i): [] for k in self.outputs for i in self.inputs}
        for i in self.inputs:
            x = node.inputs[i]
            for c in range(x.size):
                tangents = [None] * len(node.inputs)
                tangents[i] = Tensor(_one_hot(x, c))
                outs = jvp_of(node, tangents)
                for k in self.outputs:
                    t = outs[k]
                    columns[(k, i)].append(np.zeros(node.outputs[k].size) if t is None
                                           else _numpy(t).ravel())
        return columns

    def _vjp_of_cotangent(self, needed):
        """{input i: u^T J}, the VJP of the cotangent vectors given (``self.cotangent``)."""
        node = self.node
        u = [None] * len(node.outputs)
        for k, value in zip(self.outputs, self.cotangent):
            u[k] = Tensor(backend.xp.asarray(value.reshape(node.outputs[k].shape),
                                             dtype=node.outputs[k].dtype))
        grads = call_vjp(node, u, needed)
        return {i: np.zeros(node.inputs[i].size) if grads[i] is None
                else _numpy(grads[i]).ravel() for i in self.inputs}

    def _jvp_of_tangent(self):
        """{(output k, input i): J t}, for each input's own tangent vector (``self.tangent``)."""
        node = self.node
        jvp = {}
        for i, value in zip(self.inputs, self.tangent):   # J t for each input's own t
            t = [None] * len(node.inputs)
            t[i] = Tensor(backend.xp.asarray(value.reshape(node.inputs[i].shape),
                                             dtype=node.inputs[i].dtype))
            outs = jvp_of(node, t)
            for k in self.outputs:
                jvp[(k, i)] = np.zeros(node.outputs[k].size) if outs[k] is None \
                    else _numpy(outs[k]).ravel()
        return jvp

    def _broadcasts(self):
        """{input i: its broadcast sources}, for inputs shaped unlike the first output."""
        node = self.node
        return {i: _broadcast_sources(tuple(node.inputs[i].shape),
                                      tuple(node.outputs[k].shape))
                for i in self.inputs for k in self.outputs[:1]
                if tuple(node.inputs[i].shape) != tuple(node.outputs[k].shape)
                and _broadcast_sources(tuple(node.inputs[i].shape),
                                       tuple(node.outputs[k].shape)) is not None}

    def _one_hot_outputs(self, k, r):
        grads = [None] * len(self.node.outputs)
        for j in self.outputs:
            y = self.node.outputs[j]
            grads[j] = Tensor(_one_hot(y, r) if j == k else backend.xp.zeros(y.shape, y.dtype))
        return grads

    @staticmethod
    def _vectors(given, tensors):
        if given is None:
            return [np.ones(t.size) for t in tensors]
        given = list(given) if isinstance(given, (list, tuple)) and len(tensors) > 1 \
            else [given]
        if len(given) != len(tensors):
            raise ValueError(f"Give one vector per tensor: {len(tensors)} expected, got "
                             f"{len(given)}.")
        out = []
        for v, t in zip(given, tensors):
            v = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64)
            if v.size != t.size:
                raise ValueError(f"A vector for a tensor of shape {tuple(t.shape)} needs "
                                 f"{t.size} entries, got {v.size}.")
            out.append(v.ravel())
        return out

    def jacobian(self, output=0, input=0):
        """The block d output / d input as an (output size, input size) numpy array."""
        return self.blocks[(output, input)].matrix

    def __str__(self):
        return render.text(self)

    __repr__ = __str__

    def _repr_html_(self):
        return render.html(self)


def _one_hot(tensor, index):
    array = backend.xp.zeros(tensor.size, dtype=tensor.dtype)
    array[index] = 1
    return backend.xp.reshape(array, tensor.shape)


def _broadcast_sources(in_shape, out_shape):
    """For each entry of an input broadcast to ``out_shape``, the flat output entries
    that are copies of it (None when the shapes do not broadcast that way)."""
    try:
        owner = np.broadcast_to(np.arange(int(np.prod(in_shape, dtype=np.int64)))
                                .reshape(in_shape), out_shape).ravel()
    except ValueError:
        return None
    return [np.flatnonzero(owner == j).tolist() for j in range(int(np.prod(in_shape,
                                                                          dtype=np.int64)))]
