"""Where each node of a drawing goes, and what colour it gets.

A node's place is a path of clusters: first its *side* (forward or gradients,
when a graph holds gradient nodes), then the iteration of an eager while loop
that ran it, then its name scopes (``layer1/matmul``
sits in ``layer1``). A name scope that ``collapse`` folds becomes one node (a
``Group``) in place of all the nodes under it.

Gradient nodes are those a VJP rule made (``node.grad_of`` is the forward node
whose rule it was), and the nodes ``tg.gradients`` made under the same name
scope (its seed ``ones_like``, constants).
"""
from ..graph.graph import Graph

# ColorBrewer "Set3": light enough for black text, distinct enough to match by eye.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
           "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")


class Cluster:
    """A cluster being laid out: its kind, label, and items (nodes or clusters) in order."""

    def __init__(self, kind, label):
        self.kind, self.label = kind, label
        self.items = []      # ("node", Node) | ("group", Group) | ("cluster", Cluster)
        self.children = {}   # (kind, label) -> Cluster

    def at(self, path):
        """The cluster at ``path`` (a list of (kind, label)) below this one, made if new."""
        cluster = self
        for key in path:
            child = cluster.children.get(key)
            if child is None:
                child = cluster.children[key] = Cluster(*key)
                cluster.items.append(("cluster", child))
            cluster = child
        return cluster


class Group:
    """A name scope folded into one node."""

    def __init__(self, name, scope):
        self.name, self.scope, self.members = name, scope, []


class Layout:
    """Places the nodes of each graph drawn, keeping what must agree across graphs
    (colours, which nodes are on the gradient side, the scopes seen)."""

    def __init__(self, scopes, side_by_side, collapse, new_name):
        self.scopes, self.side_by_side, self.collapse = scopes, side_by_side, collapse
        self.new_name = new_name      # prefix -> a fresh DOT name ("n" -> "n7")
        self.gradient_side = set()    # id(Node) of the nodes drawn on the gradient side
        self.scopes_seen = set()
        self.collapse_used = set()
        self._colour_of = {}          # id(forward Node) -> its colour

    def place(self, nodes, names):
        """The root cluster of ``nodes``; fills ``names`` (id(Node) -> DOT name)."""
        root = Cluster("root", None)
        gradient_scopes = _gradient_scopes(nodes) if self.side_by_side else set()
        groups = {}
        for node in nodes:
            scope = scope_of(node) if self.scopes else ()
            self.scopes_seen.update(scope[:i] for i in range(1, len(scope) + 1))
            path = []
            if gradient_scopes:
                side = _side(node, gradient_scopes)
                if side == "gradients":
                    self.gradient_side.add(id(node))
                if side == "forward" or not scope:
                    path.append(("side", side))
            path += _loop_path(node)
            fold = self._fold_point(scope)
            if fold is None:
                names[id(node)] = self.new_name("n")
                path += [("scope", part) for part in scope]
                root.at(path).items.append(("node", node))
                continue
            path += [("scope", part) for part in fold[:-1]]
            group = groups.get((tuple(path), fold))
            if group is None:
                group = groups[(tuple(path), fold)] = Group(self.new_name("s"), fold)
                root.at(path).items.append(("group", group))
            group.members.append(node)
            names[id(node)] = group.name
        return root

    def _fold_point(self, scope):
        """The shortest prefix of ``scope`` that ``collapse`` folds, or None."""
        if not self.collapse or not scope:
            return None
        if isinstance(self.collapse, int):
            return scope[:self.collapse] if len(scope) >= self.collapse else None
        for i in range(1, len(scope) + 1):
            if scope[:i] in self.collapse:
                self.collapse_used.add(scope[:i])
                return scope[:i]
        return None

    def unknown_collapse_error(self):
        """A ValueError if ``collapse`` named a scope that no drawn node is in, else None."""
        if not self.collapse or isinstance(self.collapse, int):
            return None
        unknown = sorted("/".join(s) for s in self.collapse - self.collapse_used)
        if not unknown:
            return None
        known = sorted("/".join(s) for s in self.scopes_seen)
        shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
        return ValueError(f"collapse names {', '.join(unknown)}, which is no name scope of "
                          f"this drawing. Its scopes are: {shown or '(none)'}.")

    def colours(self, nodes):
        """id(node) -> fill: each forward node with gradient nodes gets a colour, and so
        do the gradient nodes its VJP rule made (``node.grad_of``). Colours are handed
        out over the whole drawing (first the outer graph's, in creation order), so a
        colour means the same forward node inside a function body too."""
        if not self.side_by_side:
            return {}
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


def scope_of(node):
    """The name scopes of a graph node (``("layer1",)`` for ``layer1/matmul``)."""
    return tuple(node.label.split("/")[:-1]) if node.label else ()


def _loop_path(node):
    """An eager while loop's op sits in a box for its iteration (``node.context``)."""
    context = getattr(node, "context", None)
    iteration = getattr(context, "iteration", None)
    if iteration is None:
        return []
    name = getattr(getattr(context, "loop", None), "name", None)
    where = f"while_loop {name!r}" if name else "while_loop"
    return [("loop", f"{where}, iteration {iteration}")]


def bodies(node):
    """The graphs inside a node: (param name, graph) for each param with a ``.graph``
    (a ``tg.function`` call's ``function``, a While's ``cond`` and ``body``, ...)."""
    found = []
    for param, value in node.params.items():
        graph = getattr(value, "graph", None)
        if isinstance(graph, Graph):
            found.append((param, graph))
    return found


def _gradient_scopes(nodes):
    """The scopes ``tg.gradients`` put gradient nodes in: for ``gradients/mul_grad/mul``,
    made by the rule of ``mul``, that is ``gradients``."""
    scopes = set()
    for node in nodes:
        fwd = node.grad_of
        if fwd is not None and node.label:
            at = node.label.find(f"{fwd.name}_grad/")
            scopes.add(node.label[:at].rstrip("/") if at >= 0 else "")
    return scopes


def _side(node, gradient_scopes):
    if node.grad_of is not None:
        return "gradients"
    label = node.label or ""
    if any(scope and label.startswith(scope + "/") for scope in gradient_scopes):
        return "gradients"
    return "forward"
