"""What each pass changed, reported by the pass itself as it runs.

Every pass builds its new graph through a ``Rewriter`` (``rewrite.py``) and, for
each node it does not simply copy, says what it did with one call of
``Rewriter.note``: the node was *removed* (pruning), *folded* into a constant,
*merged* into an earlier node that computes the same thing, *fused* into one
elementwise kernel, or made to write its result into an input's buffer it
*reuses*. ``optimize`` gathers those notes into one ``PassRecord`` per pass run,
with the node and buffer counts before and after, on the ``Report`` it returns
(``concrete.optimized.report.passes``). Nothing is worked out again afterwards:
``tg.viz.PassStepper`` draws these records, and its golden logs are checked
against them.

A change names nodes by their labels, which are unique within a graph: ``node``
in the graph the pass was given, ``into`` in the graph it made. So a record holds
strings only and keeps no graph alive. ``optimize(..., record=True)`` also keeps
each pass's input and output graphs (``before``, ``after``), for drawing.

*Buffers* are the arrays one run of the graph allocates: one per output of each
node, except placeholders (fed), constants (held) and views (the ``"view"``
effect: a reshape hands back its input's memory), and a program that writes
over a donated input, which allocates nothing.
"""
from dataclasses import dataclass, field
from typing import Any, Optional

from ..graph import const_p, placeholder_p

#: The kinds of change, in the words the sentences use.
KINDS = ("removed", "folded", "merged", "fused", "reused")


@dataclass(frozen=True)
class Change:
    """One thing a pass did: ``kind`` (one of ``KINDS``) to the node labelled ``node``;
    ``into``: the label of the node standing for it now (the constant, the earlier
    node, the fused kernel, the node writing in place), or None when removed;
    ``detail``: a few words (the fused formula, the buffer reused)."""
    kind: str
    node: str
    into: Optional[str] = None
    detail: str = ""


@dataclass
class PassRecord:
    """One pass as it ran: its name, the node and buffer counts before and after, and
    its changes in the order it made them."""
    name: str
    nodes_before: int
    nodes_after: int
    buffers_before: int
    buffers_after: int
    changes: tuple = ()
    before: Any = field(default=None, repr=False, compare=False)   # GraphFunctions, with
    after: Any = field(default=None, repr=False, compare=False)    # record=True only

    def of_kind(self, kind):
        """The changes of one kind."""
        return [c for c in self.changes if c.kind == kind]

    @property
    def sentence(self):
        """What the pass did, in one sentence."""
        return describe(self)


def buffer_count(fn):
    """How many arrays one run of the GraphFunction ``fn`` allocates (module docstring)."""
    count = 0
    for node in fn.nodes:
        if node.op is placeholder_p or node.op is const_p or node.op.effect == "view":
            continue
        program = node.params.get("program")
        if getattr(program, "donate", None) is not None:
            continue
        count += len(node.outputs)
    return count


def _names(changes, most=6):
    labels = [c.node for c in changes]
    text = ", ".join(labels[:most])
    return text + (f" and {len(labels) - most} more" if len(labels) > most else "")


def describe(record):
    """One sentence for a PassRecord, from its changes."""
    n = len(record.changes)
    kinds = {c.kind for c in record.changes}
    if not n:
        return _NOTHING[record.name]
    if kinds == {"removed"}:
        return (f"Pruning removed {n} node{'s' * (n != 1)} that no output needs "
                f"({_names(record.changes)}).")
    if record.name == "fold":
        return (f"Constant folding computed {n} node{'s' * (n != 1)} now, as their inputs "
                f"are all constants ({_names(record.changes)}): each is a constant in the "
                f"graph.")
    if record.name == "cse":
        pairs = ", ".join(f"{c.node} = {c.into}" for c in record.changes[:6])
        return (f"Common-subexpression elimination dropped {n} node{'s' * (n != 1)} that "
                f"repeat{'s' * (n == 1)} an earlier one ({pairs}{' ...' if n > 6 else ''}).")
    if record.name == "fuse":
        kernels = sorted({c.into for c in record.changes})
        return (f"Fusion joined {n} elementwise nodes into {len(kernels)} kernel"
                f"{'s' * (len(kernels) != 1)} ({', '.join(kernels[:6])}): each chain is one "
                f"trip through memory.")
    return (f"Buffer reuse let {n} node{'s' * (n != 1)} write {'its' if n == 1 else 'their'} "
            f"result over an input nobody reads afterwards ({_names(record.changes)}): "
            f"{record.buffers_before - record.buffers_after} fewer arrays allocated per call.")


_NOTHING = {
    "prune": "Pruning removed nothing: every node feeds an output (or an effect, such as "
             "tg.print's).",
    "fold": "Constant folding found no node whose inputs are all constants.",
    "cse": "Common-subexpression elimination found no node that repeats another.",
    "fuse": "Fusion found no chain of two or more elementwise nodes to join.",
    "reuse": "Buffer reuse found no input that a node could write over.",
}
