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

import numpy as np

from ..autodiff.pending import pending_counts, upstream_nodes
from ..tensor import SymbolicTensor
from . import views
from .engine_run import EngineRun
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
        return _finish(view, names, problems, [], 0, None, source)

    _, pending = pending_counts([target], view.walk_sources, view.producer_all,
                                every_dtype=True)
    engine_parents, _ = pending_counts([target], view.walk_sources, view.producer)
    between = list(pending)
    run = EngineRun(view, target, engine_parents, feed_dict)
    paths, count = _paths(between, target, walk_ids, view.producer_all)
    listed = [_judge_path(steps, run) for steps in paths]

    # An integer target or source is the reason, ahead of all else (a tape does not
    # watch an integer source: that is the same reason, said once).
    causes = [Cause("integer", message, "Differentiate float tensors: integers and bools "
                                        "are constants to autodiff.")
              for message in _dtype_problems(target, source, names)]
    causes += [p for p in problems
               if not (p.kind == "not_watched" and source.dtype.kind != "f")]
    if not between and not problems:
        causes += _no_path_causes(view, target, source, names)
    for path in listed:
        for cause in (path.blocked, path.condition):
            if cause is not None and all(not _same(cause, c) for c in causes):
                causes.append(cause)
    return _finish(view, names, causes, listed, count, run, source)


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


# -- when no path exists ------------------------------------------------------------
def _no_path_causes(view, target, source, names):
    source_name, target_name = names
    causes, integers = [], []
    if view.mode == "tape" and view.producer(target.id) is None:
        moment = view.tape.when_made(target)
        if moment != "recording":
            text, fix = views.WHEN_MADE[moment]
            return [Cause("not_recording", f"{target_name} {text}", fix)]
        # The source is watched here (an unwatched one is a problem found before):
        # the record stops short of the target. An integer tensor made from the
        # source is the usual reason, so it leads, though the record cannot prove it.
        integers, others = _tape_hints(view, target, source_name)
        untracked = ("an integer tensor such as the one above, or values that do not depend on "
                     f"{source_name}" if integers else
                     f"constants, tensors nobody watched, or a copy of {source_name} made "
                     f"outside the tape")
        causes.append(Cause("no_record", f"no op the tape recorded made {target_name}: a tape "
                            f"records an op only when it reads a watched tensor or a float "
                            f"tensor computed from one, so {target_name} was computed from "
                            f"tensors the tape did not follow ({untracked})",
                            "" if integers else
                            f"Compute {target_name} from {source_name} itself, with float ops, "
                            f"inside the tape's block."))
        # A value taken out of the tape explains the missing record best: it leads.
        left = [c for c in others if c.kind == "left_the_tape"]
        causes = left + causes + [c for c in others if c.kind != "left_the_tape"]
    elif view.mode == "tape":   # recorded, from other tensors: the source's trail may end early
        integers, _ = _tape_hints(view, target, source_name)
    for node in upstream_nodes([target], view.producer_all, every_dtype=True):
        branch = node.context
        if getattr(branch, "taken", None) is not None:
            causes.append(Cause("cond_branch_not_taken", f"{target_name} was computed through "
                                f"cond '{branch.name}', which ran {branch.taken}: the branch "
                                f"that did not run left nothing on the tape, so if only it "
                                f"reads {source_name}, there is no path", "", node,
                                certain=False))
            break
    if not causes or all(not c.certain for c in causes):
        causes.insert(0, Cause("no_path", f"no path connects {source_name} to {target_name}: "
                               f"{target_name} does not depend on {source_name}"
                               + (" in anything the tape recorded" if view.mode == "tape"
                                  else ""), ""))
    return integers + causes     # an integer cast of the source leads: the likely cut


def _tape_hints(view, target, source_name):
    """Where the tape may have lost the source's trail, as (integer casts, other hints).

    A tape follows float tensors only: an op that makes an integer or bool tensor
    from one is kept aside (``tape.dropped_nodes()``), and what is computed from its
    result is not recorded at all. Such an op, fed by the source (or by floats
    computed from it) before the target was made, is the likely cut; the nearest
    the target comes first.
    """
    tape = view.tape
    # The tensors the record shows to depend on the source (a node is always made
    # after the nodes it reads, so one pass in the order they were made will do).
    walk_ids = {s.id for s in view.walk_sources}
    reached = set(walk_ids)
    for node in tape.recorded_nodes():
        if any(x.id in reached for x in node.inputs):
            reached.update(out.id for out in node.outputs)
    integers = []
    for node in reversed(tape.dropped_nodes()):
        if (any(x.id in reached for x in node.inputs)
                and min(out.id for out in node.outputs) < target.id):
            dtype = next(out.dtype for out in node.outputs if out.dtype.kind != "f")
            read = (source_name if any(x.id in walk_ids for x in node.inputs)
                    else f"a value computed from {source_name}")
            integers.append(Cause("integer", f"{node.name} ({node.op.name}) made "
                                  f"{a_or_an(dtype)} tensor from {read}: integers and bools "
                                  f"carry no gradient, so the tape stopped following {source_name} "
                                  f"there, and a target computed from that tensor is cut off",
                                  "Keep the computation in floats; tg.grad_pass_through "
                                  "passes a gradient through a rounding or casting step on "
                                  "purpose.", node, certain=False))
    others = []
    # A float result computed from the source that no recorded op read, made before the
    # target: the usual trace of a value taken out of the tape (h.numpy(), float(h),
    # tg.constant(h.numpy())), whose copy is a constant to the tape.
    read = {x.id for node in tape.recorded_nodes() for x in node.inputs}
    for node in reversed(tape.recorded_nodes()):
        left = [out for out in node.outputs if out.id in reached and out.id not in read
                and out.dtype.kind == "f" and out.id < target.id]
        if left and any(x.id in reached for x in node.inputs):
            out = left[0]
            name = f"{out.name} ({node.name})" if out.name else f"the output of {node.name}"
            others.append(Cause("left_the_tape", f"{name}, a {node.op.name}, was "
                                f"computed from {source_name}, but no op the tape recorded "
                                f"read it: if the target was computed from its value "
                                f"(.numpy(), float(), .item() or tg.constant(...) of it), that "
                                f"copy is a constant to the tape, and the path ends there",
                                f"Compute with the tensor itself, not with its value: "
                                f"teachgrad ops instead of numpy ones.", node, certain=False))
            break
    if len(tape.recording_spans()) > 1:
        others.append(Cause("not_recording", "the tape stopped recording for a while "
                            "(stop_recording()); values computed then have no record, so a "
                            "target computed from one of them is cut off",
                            "Move that computation out of the stop_recording() block.",
                            certain=False))
    return integers, others


# -- the verdict ----------------------------------------------------------------------
def _finish(view, names, causes, paths, count, run, source):
    source_name, target_name = names
    gradient = None if run is None else run.gradient
    error = None if run is None else run.error
    live = [p for p in paths if p.blocked is None]
    if run is not None and run.raises is not None:
        node = run.raises
        status, error = "error", (f"LookupError: No gradient defined for operation "
                                  f"'{node.name}' (op type: {node.op.name})")
        summary = f"the gradient call raises LookupError at {node.name}, which has no rule."
        causes = sorted(causes, key=lambda c: c.kind != "no_gradient_rule")
    elif error is not None:
        status, summary = "error", "a VJP rule raised an error during the backward pass."
    elif run is not None and not run.ran:   # a graph with control flow: the paths only
        if live:
            status, summary = "symbolic", ("a gradient tensor exists; its value is known when "
                                           "the graph runs.")
        elif paths and all(p.blocked.kind == "cond_branch_not_taken" for p in paths):
            status = "zero"    # an If node's gradient gives zeros to an untaken branch's inputs
            summary = ("the gradient is zero: only the branch of the cond that does not run "
                       "reads the source.")
        else:
            status, summary = "none", _none_summary(causes, paths, count, names)
    elif gradient is None:
        status, summary = "none", _none_summary(causes, paths, count, names)
    elif isinstance(gradient, SymbolicTensor):
        status = "symbolic"
        summary = "a gradient tensor exists; pass feed_dict= to compute its value."
        if any(c.kind == "cond_branch_not_taken" for c in causes):
            summary = ("a gradient tensor exists, but it is zero whenever a cond runs the "
                       "branch that does not read the source.")
    else:
        value = gradient if isinstance(gradient, np.ndarray) else gradient.numpy()
        if np.any(value != 0):
            status = "nonzero"
            summary = f"the gradient is nonzero: it flows along {len(live)} of {count} path(s)."
        else:
            status = "zero"
            zeroed = [c for c in causes if c.kind in ("zeroed", "cond_branch_not_taken")]
            if zeroed:
                node = zeroed[0].node
                summary = f"the gradient is zero: {node.name} ({node.op.name}) turns it into zeros."
            else:
                causes = causes + [Cause("cancelled", "the gradients arriving along the paths "
                                         "add up to zero at these values: they cancel, or "
                                         "they are too small for the dtype and round to zero "
                                         "(a vanishing gradient)")]
                summary = "the gradient is zero: the contributions of the paths cancel."
    with_zero = ""
    if status == "none":
        with_zero = (f'With unconnected_gradients="zero" the gradient would be zeros of shape '
                     f'{tuple(source.shape)} and dtype {source.dtype} instead of None.')
    elif status != "error":
        with_zero = ('unconnected_gradients="zero" changes nothing here: the source is '
                     'connected.')
    return GradientExplanation(view.mode, source_name, target_name, status, gradient, summary,
                               causes, paths, count, with_zero, error)


def _none_summary(causes, paths, count, names):
    source_name, target_name = names
    first = causes[0] if causes else None
    if first is not None and first.kind == "integer" and first.node is None:
        return f"the gradient is None: {first.message}."      # an integer source or target
    if first is not None and first.kind == "integer" and not paths:
        node = first.node
        dtype = next(out.dtype for out in node.outputs if out.dtype.kind != "f")
        return (f"the gradient is None, most likely because the computation from "
                f"{source_name} turns into {a_or_an(dtype)} tensor at {a_or_an(node.op.name)} "
                f"op, where the tape stops following it: integers and bools carry no gradient.")
    if any(c.kind == "not_watched" for c in causes):
        return "the gradient is None: the tape was not watching the source."
    if any(c.kind == "not_recording" and c.certain for c in causes):
        return "the gradient is None: the target was computed while the tape was not recording."
    if not paths:
        return f"the gradient is None: no path connects {source_name} to {target_name}."
    which = "the path" if count == 1 else "every path"
    return f"the gradient is None: {which} from {source_name} to {target_name} is blocked."
