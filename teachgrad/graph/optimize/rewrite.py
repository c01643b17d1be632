"""Copying a traced graph into a new one, node by node: what every pass builds on.

A pass never edits the graph it is given. It walks that graph's nodes in
creation order (a topological order) and, for each node, decides what the new
graph gets instead: the same node (``copy``), a different one (``emit``), a
constant (``constant``), or nothing, the node's outputs standing for those of
a node already in the new graph (``alias_outputs``). The traced graph therefore stays exactly
as it was traced, and a lesson can draw it next to the optimised one.

A ``GraphFunction`` is what the passes hand each other: a graph, the
placeholders it is fed through (in a fixed order) and the tensors it returns.
"""
from dataclasses import dataclass, field

from ...ops.core.op import Node
from ...tensor import SymbolicTensor
from ..graph import Graph, const_p
from .record import Change


@dataclass
class GraphFunction:
    """A graph with its inputs (placeholders, fed in this order) and its outputs."""
    graph: Graph
    inputs: list
    outputs: list
    changes: list = field(default_factory=list)   # what the pass that made it noted

    @property
    def nodes(self):
        return self.graph.nodes

    def consumers(self):
        """``{tensor id: [the nodes reading it, in creation order]}``."""
        readers = {}
        for node in self.graph.nodes:
            for x in node.inputs:
                readers.setdefault(x.id, []).append(node)
        return readers


class OptimizedGraph(Graph):
    """The graph a pass builds: node names, scopes and gradient groups as traced.

    Like a FuncGraph, it says which placeholders stand for captured Variables
    (``captures``, filled in by ``tg.function``).
    """

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.captures = []
        self.captured_variables = []


class Rewriter:
    """Builds a new graph from ``fn``'s graph, one decision per node.

        rw = Rewriter(fn)
        for node in fn.nodes:
            rw.copy(node)      # or rw.emit(...), rw.constant(...), rw.alias_outputs(...)
        return rw.finish()
    """

    def __init__(self, fn):
        self.fn = fn
        self.graph = OptimizedGraph(getattr(fn.graph, "name", "graph"))
        self.graph.runs_effects = fn.graph.runs_effects   # a traced function's prints run
        self._map = {}    # tensor id in fn.graph -> tensor of the new graph
        self._nodes = {}  # id(node of fn.graph) -> the new node that took its place
        self.changes = []  # record.Change, one per node the pass did not simply copy

    def __getitem__(self, tensor):
        """The new graph's tensor standing for ``tensor`` of the old one."""
        return self._map[tensor.id]

    def inputs_of(self, node):
        return tuple(self._map[x.id] for x in node.inputs)

    def copy(self, node, inputs=None):
        """``node`` again in the new graph (on ``inputs``, by default its own, mapped)."""
        new = self.emit(node.op, self.inputs_of(node) if inputs is None else inputs,
                        node.params, [(t.shape, t.dtype) for t in node.outputs], like=node)
        self.alias_outputs(node, new)
        return new

    def emit(self, op, inputs, params, specs, like, label=None):
        """A new node of ``op`` with outputs of ``specs`` [(shape, dtype)], named and
        grouped like the old node ``like`` (its name unless ``label`` is given)."""
        node = Node(op, tuple(inputs), (), params)
        node.label = self._name(label or like.label)
        # A gradient node stays in its forward node's group (drawn in its colour),
        # pointing to whatever took that node's place in the new graph.
        node.grad_of = self.node_for(like.grad_of)
        self._nodes[id(like)] = node
        source = getattr(like, "source", None)   # set only while a tg.debug check runs
        if source is not None:
            node.source = source
        node.outputs = tuple(
            SymbolicTensor(self.graph, node, i, shape, dtype,
                           node.label if len(specs) == 1 else f"{node.label}:{i}")
            for i, (shape, dtype) in enumerate(specs))
        for t in node.outputs:
            self.graph.producers[t.id] = node
        self.graph.nodes.append(node)
        return node

    def constant(self, tensor, value):
        """A const node holding ``value``, standing for ``tensor`` (named after its node)."""
        node = tensor.node
        label = node.label if len(node.outputs) == 1 else f"{node.label}_{tensor.index}"
        new = self.emit(const_p, (), {"value": value}, [(tuple(value.shape), value.dtype)],
                        like=node, label=label)
        self._map[tensor.id] = new.outputs[0]
        return new.outputs[0]

    def alias_outputs(self, node, new_node):
        """Let ``node``'s outputs be ``new_node``'s, and ``new_node`` take its place."""
        for old, new in zip(node.outputs, new_node.outputs):
            self._map[old.id] = new
        self.took_place(node, new_node)

    def node_for(self, node):
        """The new node doing old ``node``'s work (``node`` itself if none does)."""
        return None if node is None else self._nodes.get(id(node), node)

    def took_place(self, node, new_node):
        """Record that ``new_node`` does ``node``'s work (a fused group's members)."""
        self._nodes[id(node)] = new_node

    def note(self, kind, node, into=None, detail=""):
        """Report what the pass did to ``node`` (``kind``: see ``record.KINDS``);
        ``into`` is the new node standing for it, if any."""
        self.changes.append(Change(kind, node.label, None if into is None else into.label,
                                   detail))

    def finish(self):
        """The new GraphFunction: the inputs and outputs of the old one, mapped."""
        for p in self.fn.inputs:   # an input no output needs is still fed: keep its placeholder
            if p.id not in self._map:
                self.copy(p.node)
        return GraphFunction(self.graph, [self[p] for p in self.fn.inputs],
                             [self[t] for t in self.fn.outputs], self.changes)

    def _name(self, label):
        name = label
        if name in self.graph.names_used:
            name = self.graph.unique_name(label)
        self.graph.names_used.add(name)
        return name

