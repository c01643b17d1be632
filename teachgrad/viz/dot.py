"""Writing a Scene as DOT text: nodes, clusters, colours and edges.

Every name in the DOT text is chosen here, never taken from the model: op nodes
are ``n0, n1, ...`` in creation order (``Node.id`` is a global counter, so only
the order is kept), tensors drawn on their own are ``t0, t1, ...`` in the order
they are first met, folded name scopes ``s0, s1, ...``, forward values shown
again beside the gradient nodes that read them ``r0, r1, ...``, and clusters
``cluster_0, ...`` in the order they are written. The same program therefore
always gives the same DOT text, whatever ran before it. Model text (op names,
tensor names, scopes) only ever appears inside escaped labels.

The parts of a drawing:

* **name scopes** (``layer1/matmul``) become nested clusters, or, when asked
  (``collapse``), one node each;
* **gradient nodes** (made by a VJP rule: ``node.grad_of`` is the forward node)
  are drawn apart from the forward nodes, each filled with the colour of its
  forward node; a forward value a VJP rule reads appears again, as a dashed
  ellipse, on the gradient side (see ``Writer._forward_read``);
* **function bodies**: a node whose params hold an object with a ``.graph`` (a
  ``tg.function`` call, a While or If node) is drawn with that graph inside a
  cluster named after the param.
"""
from dataclasses import dataclass
from typing import FrozenSet, Mapping, Optional, Union

from . import labels
from .escape import attributes, quoted
from .layout import Layout, bodies

HEADER = [
    # nslimit caps dot's network-simplex passes that place nodes sideways: without it a
    # graph with many long edges can take minutes; small graphs finish well under it.
    'graph [fontname="Helvetica" fontsize="10" newrank="true" nslimit="5"]',
    'node [shape="box" style="rounded,filled" fillcolor="white" fontname="Helvetica" '
    'fontsize="11" margin="0.12,0.04"]',
    'edge [fontname="Helvetica" fontsize="9" arrowsize="0.7" color="#555555"]',
]
#: The most a drawing may take, in inches (width, height), before dot shrinks it to fit.
FIT_SIZE = "8.8,1000"
CLUSTER_STYLE = {   # kind of cluster -> its attributes
    "scope": {"style": "rounded", "color": "#9a9a9a", "fontcolor": "#444444"},
    "side": {"style": "rounded,dashed", "color": "#666666", "fontsize": "12"},
    "call": {"style": "rounded,filled", "color": "#9a9a9a", "fillcolor": "#f5f5f5"},
    "body": {"style": "rounded,filled", "color": "#4a78c2", "fillcolor": "#eef3fb"},
    "loop": {"style": "rounded,dashed", "color": "#7e57c2", "fontcolor": "#5e35b1"},
}


@dataclass(frozen=True)
class Options:
    """How to draw (``draw``'s keyword arguments, checked)."""
    label_options: labels.LabelOptions = labels.LabelOptions()
    rankdir: str = "TB"
    scopes: bool = True                 # name scopes as clusters
    side_by_side: bool = True           # forward and gradient nodes apart, coloured
    expand_functions: bool = True       # bodies of calls, loops and conditionals
    collapse: Union[int, FrozenSet[tuple], None] = None
    max_nodes: Optional[int] = 2000
    title: Optional[str] = None
    gradients: Optional[Mapping] = None   # tensor id -> the gradient's text, shown as grad = ...
    fit: bool = True                      # shrink to a notebook column's width


class Writer:
    """Turns a Scene into DOT lines, keeping which DOT name draws which Node or tensor."""

    def __init__(self, options):
        self.options = options
        self.node_names = {}      # Node -> DOT name (its first drawing)
        self.tensor_names = {}    # tensor id -> DOT name of the tensor drawn on its own
        self._counters = {"n": 0, "t": 0, "s": 0, "r": 0, "cluster_": 0}
        self._lines = []
        self._leaves = []         # tensor statements, written at the top level
        self._edges = []
        self._marks = {}          # id(Node or tensor) -> extra attributes
        self._dot_nodes = 0
        self._depth = 0           # cluster nesting, for indenting the DOT text
        self._layout = Layout(options.scopes, options.side_by_side, options.collapse,
                              self._new)
        self._reads = {}          # tensor id -> DOT name of its copy on the gradient side

    def write(self, scene, names):
        """The DOT body lines (statements only; ``digraph { }`` is added by graphviz).

        ``names`` (a ``names.Names``) says what each node and tensor is called."""
        self.names = names
        made_by = {t.id: node for node in scene.nodes for t in node.outputs}
        for tensors, mark in ((scene.targets, {"peripheries": "2"}),
                              (scene.sources, {"penwidth": "2.5"})):
            for t in tensors:   # the op that made the tensor, or the tensor drawn alone
                target = made_by.get(t.id, t)
                self._marks.setdefault(id(target), {}).update(mark)
        self._lines = list(HEADER) + [f"rankdir={quoted(self.options.rankdir)}"]
        if self.options.fit:   # inches: a notebook column's ~848 px is 636 pt; only shrinks
            self._lines.append(f"size={quoted(FIT_SIZE)}")
        self._block(scene.nodes, expanding=())
        for t in scene.targets + scene.sources:
            if t.id not in made_by:
                self._leaf(t)
        lines = self._lines + self._leaves + self._edges
        if self.options.title:
            lines.append(f"label=<{labels.cluster_label(self.options.title)}>")
            lines.append('labelloc="t"')
        self._check()
        return [f"\t{line}\n" for line in lines]

    # -- one graph's worth of nodes ------------------------------------------------
    def _block(self, nodes, expanding):
        """Draw the nodes of one graph (the scene's, or a function body's).

        ``expanding`` holds the graphs whose bodies are being drawn around this
        one, so that a graph is never drawn inside itself.
        """
        colours = self._layout.colours(nodes)
        names = {}
        root = self._layout.place(nodes, names)
        for node in nodes:
            self.node_names.setdefault(node, names[id(node)])
        self._emit(root, names, colours, expanding)
        self._block_edges(nodes, names, colours)

    def _emit(self, cluster, names, colours, expanding):
        for kind, item in cluster.items:
            if kind == "cluster":
                self._open_cluster(item.kind, item.label)
                self._emit(item, names, colours, expanding)
                self._close()
            elif kind == "group":
                fills = {colours.get(id(node)) for node in item.members}
                attrs = {"label": labels.group_label("/".join(item.scope), len(item.members)),
                         "shape": "box3d", "style": "filled",
                         "fillcolor": fills.pop() if len(fills) == 1 and None not in fills
                         else None}
                self._line(f"{item.name} {attributes(attrs)}")
                self._dot_nodes += 1
            else:
                self._op(item, names, colours, expanding)

    def _op(self, node, names, colours, expanding):
        attrs = {"label": labels.op_label(node, self.options.label_options, self.options.scopes,
                                          self.names, self.options.gradients),
                 "fillcolor": colours.get(id(node))}
        attrs.update(self._marks.get(id(node), {}))
        statement = f"{names[id(node)]} {attributes(attrs)}"
        self._dot_nodes += 1
        inside = bodies(node) if self.options.expand_functions else []
        inside = [(param, graph) for param, graph in inside if graph not in expanding]
        if not inside:
            self._line(statement)
            return
        self._open_cluster("call", None)   # the node and its graphs, kept together
        self._line(statement)
        for param, graph in inside:
            name = getattr(graph, "name", None)
            self._open_cluster("body", f"{param}: {name}" if name else param)
            self._block(graph.get_operations(), expanding + (graph,))
            self._close()
        self._close()

    def _open_cluster(self, kind, label):
        name = self._new("cluster_")
        attrs = dict(CLUSTER_STYLE[kind],
                     label=None if label is None else labels.cluster_label(label))
        self._line(f"subgraph {name} {{")
        self._depth += 1
        self._line(f"graph {attributes(attrs)}")

    def _close(self):
        self._depth -= 1
        self._line("}")

    def _line(self, statement):
        self._lines.append("\t" * self._depth + statement)

    # -- edges and tensors drawn on their own -----------------------------------
    def _block_edges(self, nodes, names, colours):
        made_by = {t.id: node for node in nodes for t in node.outputs}
        gradient_side = self._layout.gradient_side
        seen = set()
        for node in nodes:
            head = names[id(node)]
            for x in node.inputs:
                producer = made_by.get(x.id)
                label, attrs = None, {}
                if producer is None:
                    tail = self._leaf(x)
                elif id(node) in gradient_side and id(producer) not in gradient_side:
                    tail = self._forward_read(producer, x, colours)
                    attrs = {"style": "dashed", "color": "#888888"}
                else:
                    tail = names[id(producer)]
                    if len(producer.outputs) > 1:   # which output: ":1" as in "split:1"
                        label = ":%d" % _output_index(producer, x)
                if tail == head:
                    continue            # both ends folded into the same scope
                if tail.startswith("s") or head.startswith("s"):
                    if (tail, head) in seen:
                        continue        # one edge between a folded scope and the rest
                    seen.add((tail, head))
                    label = None
                attrs = dict(attrs, label=label, **{"class": f"tg-edge-{tail}-{head}"})
                self._edges.append(f"{tail} -> {head} {attributes(attrs)}")

    def _forward_read(self, producer, tensor, colours):
        """The node standing for a forward value that a gradient node reads.

        An edge from the forward side to each gradient node that reads a forward
        value (most VJP rules read their op's inputs or output) would cross the
        whole picture, hundreds of times in a big graph: unreadable, and it makes
        dot's layout take minutes. Instead the value appears once more on the
        gradient side, as a small dashed ellipse ``r0, r1, ...`` named after
        (and coloured like) the forward node that made it.
        """
        name = self._reads.get(tensor.id)
        if name is None:
            name = self._reads[tensor.id] = self._new("r")
            title = (self.names.tensor(tensor) if len(producer.outputs) > 1
                     else labels.node_title(producer, False, self.names))
            attrs = {"label": labels.compose(title, []), "shape": "ellipse",
                     "style": "dashed,filled", "fillcolor": colours.get(id(producer), "white"),
                     "fontsize": "9", "margin": "0.04,0.02"}
            self._leaves.append(f"{name} {attributes(attrs)}")
            self._dot_nodes += 1
        return name

    def _leaf(self, tensor):
        """The DOT name of ``tensor`` drawn on its own (an ellipse), drawing it once."""
        name = self.tensor_names.get(tensor.id)
        if name is None:
            name = self.tensor_names[tensor.id] = self._new("t")
            attrs = {"label": labels.tensor_label(tensor, self.options.label_options, self.names,
                                                  self.options.gradients),
                     "shape": "ellipse", "style": "filled", "fillcolor": "#f2f2f2"}
            attrs.update(self._marks.get(id(tensor), {}))
            self._leaves.append(f"{name} {attributes(attrs)}")
            self._dot_nodes += 1
        return name

    # -- bookkeeping ---------------------------------------------------------------
    def _new(self, prefix):
        number = self._counters[prefix]
        self._counters[prefix] = number + 1
        return f"{prefix}{number}"

    def _check(self):
        error = self._layout.unknown_collapse_error()
        if error is not None:
            raise error
        limit = self.options.max_nodes
        if limit is not None and self._dot_nodes > limit:
            raise ValueError(
                f"This drawing has {self._dot_nodes} nodes, more than max_nodes={limit}: too "
                f"many to read (and slow to lay out). Draw part of it (fetches=[...] for a "
                f"graph), fold name scopes into one node each (collapse=1, or "
                f"collapse=['scope', ...]), leave function bodies out (expand_functions=False), "
                f"or pass max_nodes=None to draw it all anyway.")


def _output_index(node, tensor):
    return next(i for i, out in enumerate(node.outputs) if out is tensor)
