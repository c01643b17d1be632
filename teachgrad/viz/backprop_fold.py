"""Each backward-pass event folded into the frames' state, with the one sentence that says
what the step did and why (see ``frames`` for the algorithm, read backwards).
"""
from ..autodiff import events
from . import collect
from .fold_state import _FoldState
from .frame_types import DONE, NOT_REACHED, PROCESSING, QUEUED, WAITING, TensorGradient
from .names import of_scene
from .values import format_sum, format_value, join_words, loop_label, node_label, plural

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


class _Folder(_FoldState):
    """Folds events into frames: one handler per event, each returning its sentence."""

    def __init__(self, given, prefix, start=0):
        super().__init__(given, prefix, start)
        self._handlers = {
            events.Start: self._start, events.Pop: self._pop, events.Aggregate: self._aggregate,
            events.CallVJP: self.call_vjp, events.Skip: self._skip,
            events.Release: self._release, events.Enqueue: self._enqueue,
            events.Finish: self._finish, events.LoopIteration: self._loop_iteration,
        }

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
