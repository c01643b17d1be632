"""What a drawing or a stepper calls each tensor and node: one namer for both.

A tensor is called by its name: the one given with ``name=`` (``tg.multiply(x,
y, name="a")``, ``tg.constant(0.5, name="x")``), a Variable's, or a graph
node's unique name (``mul_1``; a traced function's placeholders take its Python
argument names). A tensor without one gets a short label, ``t1, t2, ...``,
numbered in creation order over the picture's tensors only, so the same program
gives the same labels whatever ran before it. A name an earlier tensor of the
picture has is told apart: ``y``, ``y_1``, ``y_2`` (a loop body's ``name="y"``).
A node is called what its output is called (a node with several outputs ``t3``,
its outputs ``t3:0``, ``t3:1``).

Two namers can share a picture: the second starts numbering after the first
(``start``; the JVPStepper's transpose tapes go on from the forward ops' ``t3``
with ``t4, t5``), so one scheme names them all and no label means two tensors.
"""


class Names:
    """Labels for the tensors and nodes of one picture.

    Args:
      nodes: the engine Nodes drawn or stepped through.
      tensors: more tensors to label (targets, sources with no producer).
      prefix: the letter before the numbers of unnamed tensors (``t``).
      given: ``{tensor id: label}`` that win over names and numbers (``u``, ``g(u)``).
      start: the number after which unnamed tensors are numbered (``start=3``: t4, t5).
    """

    def __init__(self, nodes, tensors=(), prefix="t", given=None, start=0):
        self.prefix = prefix
        self._tensors = dict(given or {})
        self._nodes = {}
        made_by = {}
        every = {}
        for node in nodes:
            for t in node.inputs:
                every.setdefault(t.id, t)
            for t in node.outputs:
                every.setdefault(t.id, t)
                made_by[t.id] = node
        for t in tensors:
            every.setdefault(t.id, t)
        self._count = start
        self._used = set(self._tensors.values())
        for key in sorted(every):   # creation order
            node = made_by.get(key)
            if node is not None and len(node.outputs) > 1:
                self._multi(node)
            elif key not in self._tensors:
                name = every[key].name
                self._tensors[key] = self._unique(name) if name else self._new()
        for node in nodes:
            if id(node) not in self._nodes:
                self._nodes[id(node)] = self._tensors[node.outputs[0].id] \
                    if node.outputs else (node.label or node.op.name)

    @property
    def count(self):
        """The last number given to an unnamed tensor (a next namer may start after it)."""
        return self._count

    def _new(self):
        self._count += 1
        while f"{self.prefix}{self._count}" in self._used:
            self._count += 1
        return self._unique(f"{self.prefix}{self._count}")

    def _unique(self, name):
        """``name``, or ``name_1``, ``name_2``, ... when an earlier tensor of the picture
        has it (a loop's body names its result y in every iteration)."""
        label, n = name, 0
        while label in self._used:
            n += 1
            label = f"{name}_{n}"
        self._used.add(label)
        return label

    def _multi(self, node):
        if id(node) in self._nodes:
            return
        base = node.label or _common_name(node.outputs)
        base = self._unique(base) if base else self._new()
        self._nodes[id(node)] = base
        for i, t in enumerate(node.outputs):
            self._tensors.setdefault(t.id, t.name or f"{base}:{i}")

    def tensor(self, tensor):
        """The label of ``tensor`` (its name when it is not in the picture)."""
        label = self._tensors.get(tensor.id)
        return label if label is not None else (tensor.name or "a tensor")

    def node(self, node):
        """The label of ``node``: its output's."""
        label = self._nodes.get(id(node))
        if label is None:
            return node.label or node.op.name
        return label

    def says_op(self, node):
        """Does the node's label already say its op (a graph's ``mul_1``)?"""
        label = self.node(node).rsplit("/", 1)[-1].rsplit(":", 1)[0]
        head, _, number = label.rpartition("_")
        return (head if number.isdigit() else label).lower() == node.op.name.lower()


def _common_name(outputs):
    """``s`` when the outputs are called ``s:0``, ``s:1``, ... (an op given name="s")."""
    names = [t.name for t in outputs]
    if not all(names):
        return None
    bases = {n.rsplit(":", 1)[0] for n in names}
    return bases.pop() if len(bases) == 1 and all(":" in n for n in names) else None


def of_scene(scene, prefix="t", given=None, start=0):
    """The Names of a ``collect.Scene``: its nodes, targets and sources."""
    return Names(scene.nodes, tuple(scene.targets) + tuple(scene.sources), prefix, given,
                 start)


def cotangent_labels(trace, names):
    """``{tensor id: label}`` for the gradient ops that a graph's backward pass (``trace``,
    from ``tg.viz.record()`` around ``tg.gradients``) added: each is called after the
    cotangent it computes, as a lesson writes it, ``b_bar`` for $\\bar b$.

    The seed of a target ``z`` is ``z_bar``; what a node's rule hands its input ``b`` is
    ``b_bar`` (inside the cluster of that rule: ``d_grad/b_bar`` is d's contribution to
    $\\bar b$); the sum of several contributions to ``a`` is ``a_bar`` (in ``a``'s own
    cluster). Ops inside a rule that hand nothing on keep their names (``cos``).
    ``names`` (a ``Names``) says what the forward tensors are called."""
    labels = {}
    for event in trace.events:
        kind = type(event).__name__
        if kind == "Start":
            pairs = zip(event.targets, event.target_grads)
        elif kind == "CallVJP":
            pairs = [(x, g) for x, g in zip(event.node.inputs, event.input_grads)
                     if getattr(getattr(g, "node", None), "grad_of", None) is event.node]
        elif kind == "Aggregate" and event.method != "nop" and event.tensor is not None:
            pairs = [(event.tensor, event.result)]
        else:
            continue
        for tensor, g in pairs:
            if getattr(g, "node", None) is not None:
                labels.setdefault(g.id, names.tensor(tensor).rsplit("/", 1)[-1] + "_bar")
    return labels
