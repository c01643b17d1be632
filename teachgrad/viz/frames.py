"""Frames: what the BackpropStepper shows at each step of a backward pass.

The backward engine (``teachgrad/autodiff/engine.py``) reports everything it
does as events (``teachgrad/autodiff/events.py``). ``backprop_frames(trace)``
folds those events, in order, into one ``Frame`` per event: the state of
every node, the queue, the pending counts, the gradient contributions each
tensor has received, and one sentence saying what the step did and why.

Nothing is computed again: a frame only holds what the events carried (the
tensors in it are the very objects the engine made). The folding is the
lesson's algorithm read backwards:

* ``Start``: every node between sources and targets is *not reached*; the
  nodes with pending count 0 are *queued*.
* ``Pop``: the front node is *being processed* (the one before it is *done*).
* ``Aggregate``: a tensor's contributions are summed (``add_n`` or ``tree``).
* ``CallVJP``: the node's rule hands each input a contribution.
* ``Release``: an input's producer has one consumer less to wait for
  (*waiting*, with its pending count); ``Enqueue``: it is *queued*.
* ``Skip``: the rule is not called (the node ends *skipped*, not *done*).
* ``LoopIteration``: a while loop starts an iteration.
* ``Finish``: the gradients returned, one per source.

This module is pure Python (no widgets), so tests check frames directly. The frames'
data are in ``frame_types.py``, the folding in ``backprop_fold.py`` (one handler per
event) and ``fold_state.py`` (what the events have built so far).
"""
from types import MappingProxyType

from ..autodiff import events
from .backprop_fold import Folder
from .frame_types import BackpropFrames


def backprop_frames(trace, labels=None, prefix="t", start=0):
    """One ``Frame`` per event of a backward pass's ``Trace``, in order.

    Nodes and tensors are called as ``names.Names`` calls them (``a`` for an op
    given ``name="a"``, unnamed ones ``t1, t2, ...``; ``prefix`` replaces the
    ``t``); ``labels`` may name some tensors (``{tensor.id: "u"}``) in their place."""
    event_list = _events_of(trace)
    folder = Folder(labels or {}, prefix, start)
    frames = tuple(folder.fold(i, event) for i, event in enumerate(event_list))
    done = folder.state
    return BackpropFrames(trace, frames, tuple(done.nodes), MappingProxyType(done.names),
                          MappingProxyType(done.labels), done.targets, done.sources,
                          done.namer)


def _events_of(trace):
    event_list = getattr(trace, "events", None)
    if not isinstance(event_list, list):
        raise TypeError(f"Expected a Trace from `with tg.viz.record() as rec:` (use "
                        f"rec.traces[i]) as the trace to step through, got "
                        f"{type(trace).__name__}.")
    if not event_list:
        raise ValueError("The trace has no events. Run tape.gradient(...) or tg.gradients(...) "
                         "inside `with tg.viz.record() as rec:` and pass rec.traces[0].")
    if any(isinstance(e, events.JVP) for e in event_list):
        raise ValueError("This trace holds forward-mode JVP events, not a backward pass: "
                         "step through it with tg.viz.JVPStepper(trace).")
    return event_list

