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

This module is pure Python (no widgets), so tests check frames directly.
"""
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Optional

from ..autodiff import events
from . import collect
from .labels import op_text
from .names import Names, of_scene
from .values import format_sum, format_value, join_words, loop_label, node_label, plural

NOT_REACHED, WAITING, QUEUED, PROCESSING, DONE, SKIPPED = (
    "not-reached", "waiting", "queued", "processing", "done", "skipped")
#: Every state a node (or a leaf tensor) can be in, in the order a node goes through them.
STATES = (NOT_REACHED, WAITING, QUEUED, PROCESSING, DONE, SKIPPED)

_METHODS = {
    "add_n": "one add_n op once all have arrived (AggregationMethod.ADD_N)",
    "tree": "pairwise adds, a running sum (AggregationMethod.EXPERIMENTAL_TREE)",
    "sparse": "a sparse sum (IndexedSlices rows are gathered, or scattered into the dense sum)",
}

#: The words the first frame defines, the first time the steps use them.
DEFINITIONS = ("Gradients flow back as cotangents: the cotangent of a tensor is the gradient "
               "of the {target} with respect to it. An op's pending count is how many ops that "
               "use its output have still to hand it a cotangent. ")

_SKIPS = {
    "stop gradient": "it produced a tensor in stop_gradients, which is held constant, so "
                     "the gradient stops here and its VJP rule is not called",
    "source": "it produced a source, whose gradient is what was asked for, so the pass "
              "goes no further back and its VJP rule is not called",
    "not differentiable": "its op is not differentiable, so no gradient flows through it",
    "no incoming gradient": "no gradient reached its outputs, so its VJP rule has "
                            "nothing to pass on",
}


@dataclass(frozen=True)
class TensorGradient:
    """What one tensor's gradient has received so far.

    ``contributions`` are in the order they arrived; ``total`` and ``method``
    are set once they are summed (``"add_n"``, ``"tree"`` or ``"sparse"``),
    or, for a source with a single contribution, at the end (``"nop"``).
    """
    label: str
    contributions: tuple
    total: Any = None
    method: Optional[str] = None

    @property
    def text(self):
        """The gradient so far, for reading: the sum once summed, the one contribution,
        or the running sum (``0.5 - 0.4444``) while more may come."""
        if self.total is not None:
            return format_value(self.total)
        return format_sum([format_value(c) for c in self.contributions])


@dataclass(frozen=True)
class Frame:
    """The backward pass just after one event.

    ``states`` maps every node to one of ``STATES`` and ``tensor_states``
    does the same for the sources and targets (leaf tensors); ``pending``
    holds each node's latest pending count (a popped node keeps its 0);
    ``queue`` is front first; ``gradients`` maps tensor ids to
    ``TensorGradient`` in the order their first contribution arrived;
    ``loop`` is the loop iteration under way, if any; ``result`` is set on the
    ``Finish`` frame only: one gradient per source. The mappings are
    read-only and shared between frames where nothing changed.
    """
    index: int
    event: Any
    kind: str
    sentence: str
    node: Any
    states: Mapping
    tensor_states: Mapping
    pending: Mapping
    queue: tuple
    processing: Any
    gradients: Mapping
    loop: Optional[events.LoopIteration] = None
    result: Optional[tuple] = None


@dataclass(frozen=True)
class BackpropFrames:
    """All the frames of one backward pass, and the names to show them with.

    ``nodes`` are the nodes between sources and targets in creation order and
    ``names`` gives each its drawing name (``n0``, ``n1``, ...); ``labels``
    gives nodes and tensor ids the words the sentences use, from ``namer`` (a
    ``names.Names``, which the drawing of the pass shares).
    """
    trace: Any
    frames: tuple
    nodes: tuple
    names: Mapping
    labels: Mapping
    targets: tuple
    sources: tuple
    namer: Any = None

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, index):
        return self.frames[index]

    @property
    def has_pass(self):
        """False for a trace of loop iterations only (a forward loop's trace)."""
        return any(f.kind == "Start" for f in self.frames)


def backprop_frames(trace, labels=None, prefix="t", start=0):
    """One ``Frame`` per event of a backward pass's ``Trace``, in order.

    Nodes and tensors are called as ``names.Names`` calls them (``a`` for an op
    given ``name="a"``, unnamed ones ``t1, t2, ...``; ``prefix`` replaces the
    ``t``); ``labels`` may name some tensors (``{tensor.id: "u"}``) in their place."""
    event_list = _events_of(trace)
    folder = _Folder(labels or {}, prefix, start)
    frames = tuple(folder.fold(i, event) for i, event in enumerate(event_list))
    return BackpropFrames(trace, frames, tuple(folder.nodes), MappingProxyType(folder.names),
                          MappingProxyType(folder.labels), folder.targets, folder.sources,
                          folder.namer)


def gradient_texts(frame):
    """``{tensor id: text}``: each tensor's gradient so far in ``frame`` (see
    ``TensorGradient.text``): what a drawing writes as ``grad = ...``."""
    return {key: grad.text for key, grad in frame.gradients.items()}


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


class _Folder:
    """Folds events into frames; holds the state the events have built so far."""

    def __init__(self, given, prefix, start=0):
        self.given, self.prefix, self.start = dict(given), prefix, start
        self.nodes, self.names, self.labels = [], {}, dict(given)
        self.namer = Names((), prefix=prefix, given=given, start=start)
        self.targets = self.sources = ()
        self.started = False
        self._states, self._tensor_states, self._pending = {}, {}, {}
        self._grads = {}
        self._views = {}          # which mappings changed since the last frame: none cached
        self._queue = self._first_queue = ()
        self._processing = None
        self._skipped = set()
        self._loop = None
        self._outputs = {}        # tensor id -> (producer, output index), for the labels
        self._handlers = {
            events.Start: self._start, events.Pop: self._pop, events.Aggregate: self._aggregate,
            events.CallVJP: self.call_vjp, events.Skip: self._skip,
            events.Release: self._release, events.Enqueue: self._enqueue,
            events.Finish: self._finish, events.LoopIteration: self._loop_iteration,
        }

    # -- one event -> one frame ------------------------------------------------
    def fold(self, index, event):
        handler = self._handlers.get(type(event))
        if handler is None:
            raise TypeError(f"Event {index} is a {type(event).__name__}, which a backward pass "
                            f"does not report; expected one of "
                            f"{', '.join(t.__name__ for t in self._handlers)}.")
        if not self.started and type(event) not in (events.Start, events.LoopIteration):
            raise ValueError(f"Event {index} ({type(event).__name__}) comes before the Start "
                             "event: pass a whole trace from tg.viz.record().")
        sentence = handler(event)
        return Frame(index, event, type(event).__name__, sentence, getattr(event, "node", None),
                     self._view("states"), self._view("tensor_states"), self._view("pending"),
                     self._queue, self._processing, self._view("grads"), self._loop,
                     event.gradients if type(event) is events.Finish else None)

    def _view(self, name):
        # Frames share one read-only copy of a mapping until it changes again.
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = MappingProxyType(dict(getattr(self, "_" + name)))
        return view

    def _changed(self, *names):
        for name in names:
            self._views.pop(name, None)

    # -- the events --------------------------------------------------------------
    def _start(self, event):
        if self.started:
            raise ValueError("The trace holds two Start events: pass one backward pass's trace "
                             "(each gradient call records its own, rec.traces[i]).")
        self.started = True
        self.targets, self.sources = tuple(event.targets), tuple(event.sources)
        self.nodes = sorted(event.pending, key=lambda n: n.id)   # creation order
        # The names the drawing of the pass uses too (collect.from_start is its scene).
        self.namer = of_scene(collect.from_start(event), self.prefix, self.given, self.start)
        for k, node in enumerate(self.nodes):
            self.names[node] = f"n{k}"
            self.labels[node] = self.namer.node(node)
            for i, out in enumerate(node.outputs):
                self._outputs[out.id] = (node, i)
        self._states = {node: NOT_REACHED for node in self.nodes}
        self._states.update((node, QUEUED) for node in event.queue)
        self._tensor_states = {t.id: NOT_REACHED for t in self.sources + self.targets}
        for t in self.sources + self.targets:
            self._label(t)
        self._pending = dict(event.pending)
        self._queue = self._first_queue = tuple(event.queue)
        # A seed (the targets' cotangents) is in the event only if the engine reports it.
        for y, g in zip(self.targets, getattr(event, "target_grads", None) or ()):
            self._receive(y, g)
        self._changed("states", "tensor_states", "pending", "grads")
        between = plural(len(self.nodes), "op lies", "ops lie")
        targets = self._tensors(self.targets)
        seeds = [g for g in getattr(event, "target_grads", None) or () if g is not None]
        words = (f"The backward pass begins at {targets}, whose gradient with respect to "
                 f"itself is {_seed(targets, seeds)}. " if len(self.targets) == 1 else
                 f"The backward pass begins at {targets}, each seeded with its gradient with "
                 f"respect to itself (the seed: ones, unless output gradients were given). ")
        words += DEFINITIONS.format(target="target" if len(self.targets) == 1 else "targets")
        if not self._queue:
            return words + (f"{between.capitalize()} between sources and targets, and none "
                            f"is ready, so no gradient flows.")
        one = len(self._queue) == 1
        return words + (f"{between.capitalize()} between the sources and the targets, and "
                        f"{self._words(self._queue)} {'is' if one else 'are'} queued first: "
                        f"{'its' if one else 'their'} pending count is 0, since no other op "
                        f"must hand {'it' if one else 'them'} a cotangent.")

    def _pop(self, event):
        self._finish_processing()
        node = event.node
        # The engine reports a LoopIteration before the first node of each loop
        # iteration it enters; a node that no loop iteration ran ends the loop.
        if getattr(getattr(node, "context", None), "iteration", None) is None:
            self._loop = None
        self._processing = node
        self._states[node] = PROCESSING
        self._queue = tuple(event.queue)
        self._changed("states")
        rest = (f"the queue now holds {self._words(self._queue)}" if self._queue
                else "the queue is now empty")
        why = ("every op that uses its output has handed back its cotangent, so its gradient "
               "is complete" if node not in self._first_queue else
               "it made a target, and no op between it and the targets uses its output, so its "
               "gradient is the target's seed")
        return f"Pop {self._with_op(node)} from the front of the queue: {why}; {rest}."

    def _aggregate(self, event):
        if event.node is not None:
            tensor = event.node.outputs[event.index]
        else:
            tensor = self._source_summed(event.contributions)
        label = self._label(tensor)
        self._grads[tensor.id] = TensorGradient(label, tuple(event.contributions),
                                                 event.result, event.method)
        self._changed("grads")
        k = len(event.contributions)
        how = _METHODS.get(event.method, event.method)
        return (f"The {k} contributions to the gradient of {label} are summed with {how}, "
                f"because its gradient is the sum of what each use hands back: "
                f"{_sum(event.contributions)} = {format_value(event.result)}.")

    def call_vjp(self, event):
        node = event.node
        target_ids = {t.id for t in self.targets}
        for out, g in zip(node.outputs, event.output_grads):
            # Without a recorded seed, a target's cotangent is first seen here.
            if g is not None and out.id in target_ids and out.id not in self._grads:
                self._receive(out, g)
        handed = []
        for x, g in zip(node.inputs, event.input_grads):
            if g is not None:
                self._receive(x, g)
                handed.append(f"{self._label(x)} the contribution {format_value(g)}")
        self._changed("grads", "tensor_states")
        grads = [g for g in event.output_grads if g is not None]
        out = (f"output gradient {format_value(grads[0])}" if len(grads) == 1 else
               f"output gradients {', '.join(format_value(g) for g in event.output_grads)}")
        gives = (f"it hands {join_words(handed)}" if handed
                 else "it hands no input a gradient (none of them leads to a source)")
        return f"Apply the {event.rule} rule (the chain rule for this op) to the {out}: {gives}."

    def _skip(self, event):
        self._skipped.add(event.node)
        why = _SKIPS.get(event.reason, event.reason)
        return f"Skip {self.labels.get(event.node, node_label(event.node))}: {why}."

    def _release(self, event):
        node, count = event.node, event.count
        self._pending[node] = count
        if self._states.get(node, NOT_REACHED) == NOT_REACHED or self._states[node] == WAITING:
            self._states[node] = WAITING
        self._changed("pending", "states")
        by = self.labels.get(self._processing, "the op being processed")
        left = (f"it still waits for {plural(count, 'more consumer')}" if count
                else "every op that uses it has reported")
        return (f"{by} has handed its cotangent back, so the pending count of "
                f"{self.labels.get(node, node_label(node))} drops to {count}: {left}.")

    def _enqueue(self, event):
        self._queue = self._queue + (event.node,)
        self._states[event.node] = QUEUED
        self._changed("states")
        return (f"{self.labels.get(event.node, node_label(event.node))}'s pending count is 0, "
                f"so it joins the back of the queue (queue: {self._words(self._queue)}).")

    def _finish(self, event):
        self._finish_processing()
        self._loop = None
        parts = []
        for s, g in zip(self.sources, event.gradients):
            label = self._label(s)
            if g is None:
                parts.append(f"{label} gets None (no path connects it to the targets)")
                continue
            known = self._grads.get(s.id)
            if known is None or known.total is None:
                contributions = known.contributions if known is not None else (g,)
                self._grads[s.id] = TensorGradient(label, contributions, g, "nop")
            self._tensor_states[s.id] = DONE
            parts.append(f"the gradient with respect to {label} is {format_value(g)}")
        self._changed("grads", "tensor_states", "states")
        if not parts:
            return "The backward pass is over: there were no sources."
        return f"The backward pass is over: {join_words(parts)}."

    def _loop_iteration(self, event):
        self._loop = event
        name = loop_label(event.node, self.labels)
        k = event.iteration
        if event.direction == "backward":
            said = (f"The backward loop of {name} enters iteration {k} (counted from 0): the "
                    f"ops that follow undo what the forward loop's iteration {k} did; the "
                    f"backward loop visits the iterations from the last to the first")
        else:
            said = f"The {event.direction} loop of {name} starts iteration {k} (counted from 0)"
        if event.loop_vars:
            said += f", from the loop variables ({', '.join(map(format_value, event.loop_vars))})"
        return said + "."

    # -- helpers -------------------------------------------------------------------
    def _finish_processing(self):
        node = self._processing
        if node is not None:
            self._states[node] = SKIPPED if node in self._skipped else DONE
            self._processing = None
            self._changed("states")

    def _receive(self, tensor, g):
        known = self._grads.get(tensor.id)
        contributions = (known.contributions if known is not None else ()) + (g,)
        self._grads[tensor.id] = TensorGradient(self._label(tensor), contributions)
        if tensor.id in self._tensor_states and self._tensor_states[tensor.id] == NOT_REACHED:
            self._tensor_states[tensor.id] = WAITING
        # A node whose output has a contribution is reached: it waits for the rest.
        producer = self._outputs.get(tensor.id)
        if producer is not None and self._states.get(producer[0]) == NOT_REACHED:
            self._states[producer[0]] = WAITING
            self._changed("states")

    def _source_summed(self, contributions):
        """The source whose contributions an ``Aggregate`` with no node sums.

        The event names no tensor, so it is found by identity: the source
        whose contributions so far are among the event's (the event may also
        hold a seed, when a source is itself a target)."""
        best, best_count = None, 0
        summed = {id(c) for c in contributions}
        for s in self.sources:
            known = self._grads.get(s.id)
            if known is None or known.total is not None:
                continue
            count = sum(id(c) in summed for c in known.contributions)
            if count == len(known.contributions) and count > best_count:
                best, best_count = s, count
        if best is None:
            raise ValueError("An Aggregate event sums contributions that no source received: "
                             "the trace's events do not come from one backward pass.")
        return best

    def _label(self, tensor):
        label = self.labels.get(tensor.id)
        if label is None:
            producer = self._outputs.get(tensor.id)
            if producer is not None and len(producer[0].outputs) == 1:
                label = self.labels[producer[0]]
            else:
                label = self.namer.tensor(tensor)
            self.labels[tensor.id] = label
        return label

    def _with_op(self, node):
        """``a (multiply)``: a node's name, and its op unless the name says it."""
        label = self.labels.get(node, node_label(node))
        if node in self.labels and not self.namer.says_op(node):
            return f"{label} ({op_text(node.op)})"
        return label

    def _tensors(self, tensors):
        return join_words([self._label(t) for t in tensors]) or "no target"

    def _words(self, nodes):
        return join_words([self.labels.get(n, node_label(n)) for n in nodes])


def _seed(target, seeds):
    """``the seed, 1 (dz/dz)``: what a single target's gradient starts as."""
    ratio = f"d{target}/d{target}" if target.isidentifier() else ""   # not dg(u)[0]/dg(u)[0]
    if len(seeds) == 1:
        return f"the seed, {format_value(seeds[0])}" + (f" ({ratio})" if ratio else "")
    ones = f"ones ({ratio} = 1)" if ratio else "ones"
    return f"the seed: {ones}, unless output gradients were given"


def _sum(contributions, shown=4):
    parts = [format_value(c) for c in contributions[:shown]]
    more = f" + ... ({len(contributions) - shown} more)" if len(contributions) > shown else ""
    return format_sum(parts) + more
