"""Graph optimisation: the passes a traced function goes through before it runs.

``tg.function`` traces Python into a graph exactly as written, gradient
nodes included. Before the graph runs, a pipeline of small passes rewrites a
*copy* of it (the traced graph is left as it was, to be drawn and compared):

========  ==============================================================
prune     drop nodes no output needs                        (prune.py)
fold      compute nodes whose inputs are all constants now  (fold.py)
cse       merge nodes that compute the same thing           (cse.py)
fuse      chain elementwise ops into one kernel             (fuse.py)
reuse     write results into input buffers no one needs     (reuse.py)
========  ==============================================================

Pruning runs first and again after folding and merging, which leave nodes
behind. Every pass keeps the results the same: bit for bit, since a fused
program runs the very ufuncs of the ops it replaces.

    f = tg.function(loss_and_grads)                 # optimize=True by default
    concrete = f.get_concrete_function(x)
    tg.viz.draw(concrete)                           # as traced
    tg.viz.draw(concrete.optimized)                 # as it runs
    print(concrete.optimized.report)                # nodes after each pass

``tg.function(fn, optimize=False)`` runs the graph as traced;
``optimize=("fold", "cse")`` runs only the passes named (pruning always runs).
"""
from dataclasses import dataclass, field

from .cse import eliminate_common_subexpressions
from .fold import fold_constants
from .fuse import fuse_elementwise
from .prune import prune
from .record import PassRecord, buffer_count
from .reuse import reuse_buffers
from .rewrite import GraphFunction, Rewriter

#: The passes, in the order they run.
PASSES = {
    "fold": fold_constants,
    "cse": eliminate_common_subexpressions,
    "fuse": fuse_elementwise,
    "reuse": reuse_buffers,
}


@dataclass
class Report:
    """How many nodes the graph had as traced and after each pass, and what each pass
    changed (``passes``: one ``record.PassRecord`` per pass run, in order)."""
    traced: int
    steps: list = field(default_factory=list)   # (pass name, nodes after it)
    passes: list = field(default_factory=list)  # record.PassRecord

    def __str__(self):
        lines = [f"{'as traced':<12}{self.traced:>6} nodes"]
        lines += [f"{name:<12}{count:>6}" for name, count in self.steps]
        return "\n".join(lines)

    def counts(self):
        """``{"traced": n, "prune": n, "fold": n, ...}`` (the last count of a repeated pass)."""
        return {"traced": self.traced, **dict(self.steps)}


def resolve(passes):
    """The pass names ``optimize=`` asks for: True for all, False for none, or names."""
    if passes is True:
        return tuple(PASSES)
    if passes is False or passes is None:
        return ()
    if isinstance(passes, str):
        passes = (passes,)
    if not isinstance(passes, (list, tuple)) or not all(isinstance(p, str) for p in passes):
        raise TypeError(f"tg.function: `optimize` must be True, False or pass names such as "
                        f"('fold', 'cse'), but got {passes!r}.")
    names = tuple(passes)
    unknown = [p for p in names if p not in PASSES and p != "prune"]
    if unknown:
        raise ValueError(f"Unknown optimisation pass {unknown[0]!r} in optimize: choose from "
                         f"{', '.join(['prune', *PASSES])}, or pass optimize=True/False.")
    return tuple(p for p in PASSES if p in names)


def optimize(fn, passes=True, record=False):
    """Run the passes on ``fn`` (a GraphFunction); return ``(optimised fn, Report)``.

    The report holds what each pass noted as it ran (``record.py``); with ``record``
    True each of its PassRecords also keeps the graphs before and after the pass."""
    names = resolve(passes)
    report = Report(len(fn.nodes))

    def run(name, step, fn):
        new = step(fn)
        report.steps.append((name, len(new.nodes)))
        report.passes.append(PassRecord(
            name, len(fn.nodes), len(new.nodes), buffer_count(fn), buffer_count(new),
            tuple(new.changes), fn if record else None, new if record else None))
        return new

    fn = run("prune", prune, fn)
    for name in names:
        fn = run(name, PASSES[name], fn)
        if name == "cse" or (name == "fold" and "cse" not in names):
            fn = run("prune", prune, fn)    # folding and merging leave unused nodes behind
    return fn, report


__all__ = ["GraphFunction", "PASSES", "PassRecord", "Report", "Rewriter", "eliminate_common_subexpressions",
           "fold_constants", "fuse_elementwise", "optimize", "prune", "resolve",
           "reuse_buffers"]
