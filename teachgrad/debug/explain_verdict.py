"""``tg.explain_gradient``'s verdict: the status (nonzero, zero, none, symbolic, error)
and the one-sentence summary a report opens with, from the causes and paths found."""
import numpy as np

from ..tensor import SymbolicTensor
from .explanation import Cause, GradientExplanation
from .report import a_or_an


def finish(view, names, causes, paths, count, run, source):
    """The ``GradientExplanation``: the causes and paths, with a status and a summary."""
    source_name, target_name = names
    gradient = None if run is None else run.gradient
    error = None if run is None else run.error
    if run is not None and run.raises is not None:
        node = run.raises
        status, error = "error", (f"LookupError: No gradient defined for operation "
                                  f"'{node.name}' (op type: {node.op.name})")
        summary = f"the gradient call raises LookupError at {node.name}, which has no rule."
        causes = sorted(causes, key=lambda c: c.kind != "no_gradient_rule")
    elif error is not None:
        status, summary = "error", "a VJP rule raised an error during the backward pass."
    elif run is not None and not run.ran:   # a graph with control flow: the paths only
        status, summary = _unrun_status(causes, paths, count, names)
    elif gradient is None:
        status, summary = "none", _none_summary(causes, paths, count, names)
    elif isinstance(gradient, SymbolicTensor):
        status = "symbolic"
        summary = "a gradient tensor exists; pass feed_dict= to compute its value."
        if any(c.kind == "cond_branch_not_taken" for c in causes):
            summary = ("a gradient tensor exists, but it is zero whenever a cond runs the "
                       "branch that does not read the source.")
    else:
        status, summary, causes = _value_status(gradient, causes, paths, count)
    return GradientExplanation(view.mode, source_name, target_name, status, gradient, summary,
                               causes, paths, count, _with_zero(status, source), error)


def _unrun_status(causes, paths, count, names):
    """A graph with control flow whose gradient was not run: judged by its paths."""
    if any(p.blocked is None for p in paths):
        return "symbolic", ("a gradient tensor exists; its value is known when the graph "
                            "runs.")
    if paths and all(p.blocked.kind == "cond_branch_not_taken" for p in paths):
        # an If node's gradient gives zeros to an untaken branch's inputs
        return "zero", ("the gradient is zero: only the branch of the cond that does not run "
                        "reads the source.")
    return "none", _none_summary(causes, paths, count, names)


def _value_status(gradient, causes, paths, count):
    """A gradient with a value: nonzero, or zero (zeroed by an op, or cancelled)."""
    value = gradient if isinstance(gradient, np.ndarray) else gradient.numpy()
    if np.any(value != 0):
        live = [p for p in paths if p.blocked is None]
        return ("nonzero", f"the gradient is nonzero: it flows along {len(live)} of {count} "
                           f"path(s).", causes)
    zeroed = [c for c in causes if c.kind in ("zeroed", "cond_branch_not_taken")]
    if zeroed:
        node = zeroed[0].node
        return ("zero", f"the gradient is zero: {node.name} ({node.op.name}) turns it into "
                        f"zeros.", causes)
    causes = causes + [Cause("cancelled", "the gradients arriving along the paths "
                             "add up to zero at these values: they cancel, or "
                             "they are too small for the dtype and round to zero "
                             "(a vanishing gradient)")]
    return "zero", "the gradient is zero: the contributions of the paths cancel.", causes


def _with_zero(status, source):
    """What ``unconnected_gradients="zero"`` would change."""
    if status == "none":
        return (f'With unconnected_gradients="zero" the gradient would be zeros of shape '
                f'{tuple(source.shape)} and dtype {source.dtype} instead of None.')
    if status != "error":
        return 'unconnected_gradients="zero" changes nothing here: the source is connected.'
    return ""


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
