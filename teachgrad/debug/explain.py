"""``tg.explain_gradient``: why is this gradient None, or zero?

    tg.explain_gradient(y, x, tape)        # or a graph instead of the tape

answers with the paths that connect ``x`` to ``y`` and, for each path that
carries nothing, the op where the gradient stops and why: an integer tensor,
a ``stop_gradient``, an op without a gradient rule, a cond branch that did not
run, a custom ``grad_fn`` that returned None, a VJP rule that gave zeros at
these values (a dead ReLU), or, on a tape, a source it was not watching or a
target computed while it was not recording.

It finds the paths with the backward engine's own walk (``pending_counts``,
once as the engine runs it and once through integer tensors as well; its
first step, ``upstream_nodes``, for what the target depends on), and it
learns what each VJP rule returns by running the engine itself with an
observer, on a copy of nothing: the tape's record is read, not changed, and
nodes added to a graph are taken away again.
"""
import collections

from ..autodiff.pending import pending_counts
from . import views
from .engine_run import EngineRun
from .explain_no_path import no_path_causes
from .explain_verdict import finish
from .explanation import Cause, GradientExplanation, Path
from .report import a_or_an

#: Paths listed in a report (all of them are counted).
MAX_PATHS = 12


def explain_gradient(target, source, tape_or_graph=None, *, stop_gradients=None,
                     feed_dict=None):
    """Explain why the gradient of ``target`` with respect to ``source`` is what it is.

    Args:
      target: the tensor differentiated (summed if not a scalar).
      source: the tensor or Variable it is differentiated with respect to.
      tape_or_graph: the ``GradientTape`` that recorded the target (persistent,
        or not yet used), or the ``Graph`` holding it. By default the graph of a
        graph tensor, or the innermost tape recording now.
      stop_gradients: graphs only: the ``stop_gradients=`` you pass to tg.gradients.
      feed_dict: graphs only: values for the placeholders, to compute the
        gradient's value and which branch each cond takes.

    Returns:
      A ``GradientExplanation``: shown as text in a terminal and as HTML in a
      notebook; ``.status``, ``.causes`` (``.kinds``), ``.paths`` for tests.
    """
    view = views.resolve(target, source, tape_or_graph, stop_gradients)
    names = (source.name or "source", target.name or "target")
    problems = [Cause(kind, message, fix) for kind, message, fix in view.problems]
    walk_ids = {s.id for s in view.walk_sources}
    if target.id in walk_ids or target is source:
        return GradientExplanation(
            view.mode, *names, "nonzero", None,
            "the target is the source itself: its gradient is ones (the identity).")
    if not view.walk_sources:
        return finish(view, names, problems, [], 0, None, source)

    _, pending = pending_counts([target], view.walk_sources, view.producer_all,
                                every_dtype=True)
    engine_parents, _ = pending_counts([target], view.walk_sources, view.producer)
    between = list(pending)
    run = EngineRun(view, target, engine_parents, feed_dict)
    paths, count = _paths(between, target, walk_ids, view.producer_all)
    listed = [_judge_path(steps, run) for steps in paths]
    causes = _causes(view, target, source, names, problems, listed, between)
    return finish(view, names, causes, listed, count, run, source)


def _causes(view, target, source, names, problems, listed, between):
    """Every reason found, most telling first: an integer target or source, the
    problems known before the walk, why no path exists, what blocks each path."""
    # An integer target or source is the reason, ahead of all else (a tape does not
    # watch an integer source: that is the same reason, said once).
    causes = [Cause("integer", message, "Differentiate float tensors: integers and bools "
                                        "are constants to autodiff.")
              for message in _dtype_problems(target, source, names)]
    causes += [p for p in problems
               if not (p.kind == "not_watched" and source.dtype.kind != "f")]
    if not between and not problems:
        causes += no_path_causes(view, target, source, names)
    for path in listed:
        for cause in (path.blocked, path.condition):
            if cause is not None and all(not _same(cause, c) for c in causes):
                causes.append(cause)
    return causes


def _same(a, b):
    return a.kind == b.kind and a.node is b.node and a.input_index == b.input_index


def _dtype_problems(target, source, names):
    for tensor, name in ((target, names[1]), (source, names[0])):
        if tensor.dtype.kind != "f":
            yield (f"{name} is {a_or_an(tensor.dtype)} tensor: integers and bools carry no "
                   f"gradient")


# -- the paths -------------------------------------------------------------------------
def _paths(between, target, walk_ids, producer):
    """Up to MAX_PATHS chains of (node, input index) from a source to the target, and
    how many there are in all."""
    inside = set(between)
    consumers = collections.defaultdict(list)
    starts = []
    for node in between:
        for i, x in enumerate(node.inputs):
            if x.id in walk_ids:
                starts.append((node, i))
            elif producer(x.id) in inside:
                consumers[x.id].append((node, i))
    end = producer(target.id)
    # How many chains lead from each node to the target, consumers before producers
    # (a node is always made after the nodes it reads, so by decreasing id). No
    # recursion: a loop unrolled on a tape can make chains thousands of ops long.
    counts = {}
    for node in sorted(between, key=lambda n: n.id, reverse=True):
        counts[node] = (node is end) + sum(counts.get(c, 0) for out in node.outputs
                                           for c, _ in consumers.get(out.id, ()))
    total = sum(counts[node] for node, _ in starts)

    found, stack = [], [[step] for step in reversed(starts)]
    while stack and len(found) < MAX_PATHS:
        chain = stack.pop()
        node = chain[-1][0]
        if node is end:
            found.append(tuple(chain))
        nexts = [step for out in node.outputs for step in consumers.get(out.id, ())]
        stack.extend(chain + [step] for step in reversed(nexts))
    return found, total


def _judge_path(steps, run):
    """The Path, with where its gradient stops (the block nearest the target)."""
    condition = None
    for node, i in reversed(steps):
        cause = run.edge_cause(node, i)
        if cause is None:
            continue
        if cause.conditional:
            condition = condition or cause
            continue
        return Path(steps, blocked=cause, condition=condition)
    return Path(steps, condition=condition)
