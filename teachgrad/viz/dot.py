"""Writing a Scene as DOT text: nodes, clusters, colours and edges.

Every name in the DOT text is chosen here, never taken from the model: op nodes
are ``n0, n1, ...`` in creation order (``Node.id`` is a global counter, so only
the order is kept), tensors drawn on their own are ``t0, t1, ...`` in the order
they are first met, folded name scopes ``s0, s1, ...`` and clusters
``cluster_0, ...`` in the order they are written. The same program therefore
always gives the same DOT text, whatever ran before it. Model text (op names,
tensor names, scopes) only ever appears inside escaped labels.

The parts of a drawing:

* **name scopes** (``layer1/matmul``) become nested clusters, or, when asked
  (``collapse``), one node each;
* **gradient nodes** (made by a VJP rule: ``node.grad_of`` is the forward node)
  are drawn apart from the forward nodes, each filled with the colour of its
  forward node;
* **function bodies**: a node whose params hold an object with a ``.graph`` (a
  ``tg.function`` call, a While or If node) is drawn with that graph inside a
  cluster named after the param.
"""
from dataclasses import dataclass
from typing import FrozenSet, Optional, Union

from ..graph.graph import Graph
from . import labels
from .escape import attributes, quoted

# ColorBrewer "Set3": light enough for black text, distinct enough to match by eye.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
           "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")

HEADER = [
    'graph [fontname="Helvetica" fontsize="10" newrank="true" compound="true"]',
    'node [shape="box" style="rounded,filled" fillcolor="white" fontname="Helvetica" '
    'fontsize="11" margin="0.12,0.04"]',
    'edge [fontname="Helvetica" fontsize="9" arrowsize="0.7" color="#555555"]',
]
CLUSTER_STYLE = {   # kind of cluster -> its attributes
    "scope": {"style": "rounded", "color": "#9a9a9a", "fontcolor": "#444444"},
    "side": {"style": "rounded,dashed", "color": "#666666", "fontsize": "12"},
    "call": {"style": "rounded,filled", "color": "#9a9a9a", "fillcolor": "#f5f5f5"},
    "body": {"style": "rounded,filled", "color": "#4a78c2", "fillcolor": "#eef3fb"},
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


class _Cluster:
    """A cluster being laid out: its kind, label, and items (nodes or clusters) in order."""

    def __init__(self, kind, label):
        self.kind, self.label = kind, label
        self.items = []      # ("node", Node) | ("group", _Group) | ("cluster", _Cluster)
        self.children = {}   # key -> _Cluster


class _Group:
    """A name scope folded into one node."""

    def __init__(self, name, scope):
        self.name, self.scope, self.members = name, scope, []


class Writer:
    """Turns a Scene into DOT lines, keeping which DOT name draws which Node or tensor."""

    def __init__(self, options):
        self.options = options
        self.node_names = {}      # Node -> DOT name (its first drawing)
        self.tensor_names = {}    # tensor id -> DOT name of the tensor drawn on its own
        self._counters = {"n": 0, "t": 0, "s": 0, "cluster_": 0}
        self._lines = []
        self._leaves = []         # tensor statements, written at the top level
        self._edges = []
        self._marks = {}          # id(Node or tensor) -> extra attributes
        self._scopes_seen = set()
        self._collapse_used = set()
        self._dot_nodes = 0
        self._depth = 0           # cluster nesting, for indenting the DOT text
        self._gradient_side = set()   # id(Node) of gradient nodes drawn apart
        self._colour_of = {}      # id(forward Node) -> its colour

    def write(self, scene):
        """The DOT body lines (statements only; ``digraph { }`` is added by graphviz)."""
        made_by = {t._id: node for node in scene.nodes for t in node.outputs}
        for tensors, mark in ((scene.targets, {"peripheries": "2"}),
                              (scene.sources, {"penwidth": "2.5"})):
            for t in tensors:   # the op that made the tensor, or the tensor drawn alone
                target = made_by.get(t._id, t)
                self._marks.setdefault(id(target), {}).update(mark)
        self._lines = list(HEADER) + [f"rankdir={quoted(self.options.rankdir)}"]
        self._block(scene.nodes, expanding=())
        for t in scene.targets + scene.sources:
            if t._id not in made_by:
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
        colours = self._colours(nodes) if self.options.side_by_side else {}
        names = {}
        root = self._layout(nodes, names, colours)
        for node in nodes:
            self.node_names.setdefault(node, names[id(node)])
        self._emit(root, names, colours, expanding)
        self._block_edges(nodes, names)

    def _layout(self, nodes, names, colours):
        """Place each node in its cluster (side: forward or gradients, then its name
        scopes) and give it its DOT name; a folded scope's nodes share one node."""
        root = _Cluster("root", None)
        gradient_scopes = _gradient_scopes(nodes) if colours else set()
        groups = {}
        for node in nodes:
            scope = _scope_of(node) if self.options.scopes else ()
            self._scopes_seen.update(scope[:i] for i in range(1, len(scope) + 1))
            path = []
            if gradient_scopes:
                side = _side(node, gradient_scopes)
                if side == "gradients":
                    self._gradient_side.add(id(node))
                if side == "forward" or not scope:
                    path.append(("side", side))
            fold = self._fold_point(scope)
            if fold is None:
                names[id(node)] = self._new("n")
                path += [("scope", part) for part in scope]
                self._cluster_at(root, path).items.append(("node", node))
                continue
            path += [("scope", part) for part in fold[:-1]]
            key = (tuple(path), fold)
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(self._new("s"), fold)
                self._cluster_at(root, path).items.append(("group", group))
                self._dot_nodes += 1
            group.members.append(node)
            names[id(node)] = group.name
        return root

    def _cluster_at(self, root, path):
        cluster = root
        for kind, name in path:
            child = cluster.children.get((kind, name))
            if child is None:
                child = cluster.children[(kind, name)] = _Cluster(kind, name)
                cluster.items.append(("cluster", child))
            cluster = child
        return cluster

    def _fold_point(self, scope):
        """The shortest prefix of ``scope`` that ``collapse`` folds, or None."""
        collapse = self.options.collapse
        if not collapse or not scope:
            return None
        if isinstance(collapse, int):
            return scope[:collapse] if len(scope) >= collapse else None
        for i in range(1, len(scope) + 1):
            if scope[:i] in collapse:
                self._collapse_used.add(scope[:i])
                return scope[:i]
        return None

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
            else:
                self._op(item, names, colours, expanding)

    def _op(self, node, names, colours, expanding):
        attrs = {"label": labels.op_label(node, self.options.label_options, self.options.scopes),
                 "fillcolor": colours.get(id(node))}
        attrs.update(self._marks.get(id(node), {}))
        statement = f"{names[id(node)]} {attributes(attrs)}"
        self._dot_nodes += 1
        bodies = _bodies(node) if self.options.expand_functions else []
        bodies = [(param, graph) for param, graph in bodies if graph not in expanding]
        if not bodies:
            self._line(statement)
            return
        self._open_cluster("call", None)   # the node and its graphs, kept together
        self._line(statement)
        for param, graph in bodies:
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
    def _block_edges(self, nodes, names):
        made_by = {t._id: node for node in nodes for t in node.outputs}
        seen = set()
        for node in nodes:
            head = names[id(node)]
            for x in node.inputs:
                producer = made_by.get(x._id)
                if producer is None:
                    tail, label = self._leaf(x), None
                else:
                    tail, label = names[id(producer)], None
                    if len(producer.outputs) > 1:   # which output: ":1" as in "split:1"
                        label = ":%d" % next(i for i, out in enumerate(producer.outputs)
                                             if out is x)
                if tail == head:
                    continue            # both ends folded into the same scope
                if tail.startswith("s") or head.startswith("s"):
                    if (tail, head) in seen:
                        continue        # one edge between a folded scope and the rest
                    seen.add((tail, head))
                    label = None
                attrs = {"label": label}
                if id(node) in self._gradient_side and id(producer) not in self._gradient_side:
                    # A forward value a VJP rule reads: drawn, but not allowed to push the
                    # gradient nodes below the forward ones, so the two sit side by side.
                    attrs.update(constraint="false", style="dashed", color="#b0b0b0")
                self._edges.append(f"{tail} -> {head} {attributes(attrs)}".rstrip())

    def _leaf(self, tensor):
        """The DOT name of ``tensor`` drawn on its own (an ellipse), drawing it once."""
        name = self.tensor_names.get(tensor._id)
        if name is None:
            name = self.tensor_names[tensor._id] = self._new("t")
            attrs = {"label": labels.tensor_label(tensor, self.options.label_options),
                     "shape": "ellipse", "style": "filled", "fillcolor": "#f2f2f2"}
            attrs.update(self._marks.get(id(tensor), {}))
            self._leaves.append(f"{name} {attributes(attrs)}")
            self._dot_nodes += 1
        return name

    # -- colours -----------------------------------------------------------------
    def _colours(self, nodes):
        """id(node) -> fill: each forward node with gradient nodes gets a colour, and so
        do the gradient nodes its VJP rule made (``node.grad_of``). Colours are handed
        out over the whole drawing (first the outer graph's, in creation order), so a
        colour means the same forward node inside a function body too."""
        forward = {}
        for node in nodes:
            if node.grad_of is not None:
                forward.setdefault(id(node.grad_of), node.grad_of)
        for node in sorted(forward.values(), key=lambda node: node.id):
            if id(node) not in self._colour_of:
                self._colour_of[id(node)] = PALETTE[len(self._colour_of) % len(PALETTE)]
        fills = {}
        for node in nodes:
            owner = node.grad_of if node.grad_of is not None else node
            fill = self._colour_of.get(id(owner))
            if fill is not None:
                fills[id(node)] = fill
        return fills

    # -- bookkeeping ---------------------------------------------------------------
    def _new(self, prefix):
        number = self._counters[prefix]
        self._counters[prefix] = number + 1
        return f"{prefix}{number}"

    def _check(self):
        collapse = self.options.collapse
        if collapse and not isinstance(collapse, int):
            unknown = sorted(collapse - self._collapse_used)
            if unknown:
                known = sorted("/".join(s) for s in self._scopes_seen)
                shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
                raise ValueError(f"collapse names {', '.join('/'.join(s) for s in unknown)!s}, "
                                 f"which is no name scope of this drawing. Its scopes are: "
                                 f"{shown or '(none)'}.")
        limit = self.options.max_nodes
        if limit is not None and self._dot_nodes > limit:
            raise ValueError(
                f"This drawing has {self._dot_nodes} nodes, more than max_nodes={limit}: too "
                f"many to read (and slow to lay out). Draw part of it (fetches=[...] for a "
                f"graph), fold name scopes into one node each (collapse=1, or "
                f"collapse=['scope', ...]), leave function bodies out (expand_functions=False), "
                f"or pass max_nodes=None to draw it all anyway.")


def _scope_of(node):
    """The name scopes of a graph node (``("layer1",)`` for ``layer1/matmul``)."""
    return tuple(node.label.split("/")[:-1]) if node.label else ()


def _gradient_scopes(nodes):
    """The scopes ``tg.gradients`` put gradient nodes in: for ``gradients/mul_grad/mul``,
    made by the rule of ``mul``, that is ``gradients``."""
    scopes = set()
    for node in nodes:
        fwd = node.grad_of
        if fwd is not None and node.label:
            marker = f"{fwd.name}_grad/"
            at = node.label.find(marker)
            scopes.add(node.label[:at].rstrip("/") if at >= 0 else "")
    return scopes


def _side(node, gradient_scopes):
    if node.grad_of is not None:
        return "gradients"
    label = node.label or ""
    if any(scope and label.startswith(scope + "/") for scope in gradient_scopes):
        return "gradients"
    return "forward"


def _bodies(node):
    """The graphs inside a node: (param name, graph) for each param with a ``.graph``."""
    found = []
    for param, value in node.params.items():
        graph = getattr(value, "graph", None)
        if isinstance(graph, Graph):
            found.append((param, graph))
    return found
