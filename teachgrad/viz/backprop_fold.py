"""Each backward-pass event folded into the frames' state, with the one sentence that says
what the step did and why (see ``frames`` for the algorithm, read backwards).
"""
from ..autodiff import events
from . import collect
from .fold_state import FoldState
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


class Folder:
    """Folds events into frames: one handler per event, each returning its sentence,
    over a ``FoldState`` (``state``) that holds what the events have built so far."""

    def __init__(self, given, prefix, start=0):
        self.state = FoldState(given, prefix, start)
        self._handlers = {
            events.Start: self._start, events.Pop: self._pop, events.Aggregate: self._aggregate,
            events.CallVJP: self._call_vjp, events.Skip: self._skip,
            events.Release: self._release, events.Enqueue: self._enqueue,
            events.Finish: self._finish, events.LoopIteration: self._loop_iteration,
        }

    def fold(self, index, event):
        """The Frame that event number ``index`` of the trace ends in."""
        handler = self._handlers.get(type(event))
        if handler is None:
            raise TypeError(f"Event {index} is a {type(event).__name__}, which a backward pass "
                            f"does not report; expected one of "
                            f"{', '.join(t.__name__ for t in self._handlers)}.")
        if not self.state.started and type(event) not in (events.Start, events.LoopIteration):
            raise ValueError(f"Event {index} ({type(event).__name__}) comes before the Start "
                             "event: pass a whole trace from tg.viz.record().")
        return self.state.frame(index, event, handler(event))

    # -- the events --------------------------------------------------------------
    def _start(self, event):
        st = self.state
        if st.started:
            raise ValueError("The trace holds two Start events: pass one backward pass's trace "
                             "(each gradient call records its own, rec.traces[i]).")
        st.started = True
        st.targets, st.sources = tuple(event.targets), tuple(event.sources)
        st.nodes = sorted(event.pending, key=lambda n: n.id)   # creation order
        # The names the drawing of the pass uses too (collect.from_start is its scene).
        st.namer = of_scene(collect.from_start(event), st.prefix, st.given, st.start)
        for k, node in enumerate(st.nodes):
            st.names[node] = f"n{k}"
            st.labels[node] = st.namer.node(node)
            for i, out in enumerate(node.outputs):
                st.outputs[out.id] = (node, i)
        st.states = {node: NOT_REACHED for node in st.nodes}
        st.states.update((node, QUEUED) for node in event.queue)
        st.tensor_states = {t.id: NOT_REACHED for t in st.sources + st.targets}
        for t in st.sources + st.targets:
            st.label(t)
        st.pending = dict(event.pending)
        st.queue = st.first_queue = tuple(event.queue)
        # A seed (the targets' cotangents) is in the event only if the engine reports it.
        for y, g in zip(st.targets, getattr(event, "target_grads", None) or ()):
            st.receive(y, g)
        st.changed("states", "tensor_states", "pending", "grads")
        between = plural(len(st.nodes), "op lies", "ops lie")
        targets = st.tensors(st.targets)
        seeds = [g for g in getattr(event, "target_grads", None) or () if g is not None]
        words = (f"The backward pass begins at {targets}, whose gradient with respect to "
                 f"itself is {_seed(targets, seeds)}. " if len(st.targets) == 1 else
                 f"The backward pass begins at {targets}, each seeded with its gradient with "
                 f"respect to itself (the seed: ones, unless output gradients were given). ")
        words += DEFINITIONS.format(target="target" if len(st.targets) == 1 else "targets")
        if not st.queue:
            return words + (f"{between.capitalize()} between sources and targets, and none "
                            f"is ready, so no gradient flows.")
        one = len(st.queue) == 1
        return words + (f"{between.capitalize()} between the sources and the targets, and "
                        f"{st.words(st.queue)} {'is' if one else 'are'} queued first: "
                        f"{'its' if one else 'their'} pending count is 0, since no other op "
                        f"must hand {'it' if one else 'them'} a cotangent.")

    def _pop(self, event):
        st = self.state
        st.finish_processing()
        node = event.node
        # The engine reports a LoopIteration before the first node of each loop
        # iteration it enters; a node that no loop iteration ran ends the loop.
        if getattr(getattr(node, "context", None), "iteration", None) is None:
            st.loop = None
        st.processing = node
        st.states[node] = PROCESSING
        st.queue = tuple(event.queue)
        st.changed("states")
        rest = (f"the queue now holds {st.words(st.queue)}" if st.queue
                else "the queue is now empty")
        why = ("every op that uses its output has handed back its cotangent, so its gradient "
               "is complete" if node not in st.first_queue else
               "it made a target, and no op between it and the targets uses its output, so its "
               "gradient is the target's seed")
        return f"Pop {st.with_op(node)} from the front of the queue: {why}; {rest}."

    def _aggregate(self, event):
        st = self.state
        if event.node is not None:
            tensor = event.node.outputs[event.index]
        else:
            tensor = st.source_summed(event.contributions)
        label = st.label(tensor)
        st.grads[tensor.id] = TensorGradient(label, tuple(event.contributions),
                                                 event.result, event.method)
        st.changed("grads")
        k = len(event.contributions)
        how = _METHODS.get(event.method, event.method)
        return (f"The {k} contributions to the gradient of {label} are summed with {how}, "
                f"because its gradient is the sum of what each use hands back: "
                f"{_sum(event.contributions)} = {format_value(event.result)}.")

    def _call_vjp(self, event):
        st = self.state
        node = event.node
        target_ids = {t.id for t in st.targets}
        for out, g in zip(node.outputs, event.output_grads):
            # Without a recorded seed, a target's cotangent is first seen here.
            if g is not None and out.id in target_ids and out.id not in st.grads:
                st.receive(out, g)
        handed = []
        for x, g in zip(node.inputs, event.input_grads):
            if g is not None:
                st.receive(x, g)
                handed.append(f"{st.label(x)} the contribution {format_value(g)}")
        st.changed("grads", "tensor_states")
        grads = [g for g in event.output_grads if g is not None]
        out = (f"output gradient {format_value(grads[0])}" if len(grads) == 1 else
               f"output gradients {', '.join(format_value(g) for g in event.output_grads)}")
        gives = (f"it hands {join_words(handed)}" if handed
                 else "it hands no input a gradient (none of them leads to a source)")
        return f"Apply the {event.rule} rule (the chain rule for this op) to the {out}: {gives}."

    def _skip(self, event):
        st = self.state
        st.skipped.add(event.node)
        why = _SKIPS.get(event.reason, event.reason)
        return f"Skip {st.labels.get(event.node, node_label(event.node))}: {why}."

    def _release(self, event):
        st = self.state
        node, count = event.node, event.count
        st.pending[node] = count
        if st.states.get(node, NOT_REACHED) == NOT_REACHED or st.states[node] == WAITING:
            st.states[node] = WAITING
        st.changed("pending", "states")
        by = st.labels.get(st.processing, "the op being processed")
        left = (f"it still waits for {plural(count, 'more consumer')}" if count
                else "every op that uses it has reported")
        return (f"{by} has handed its cotangent back, so the pending count of "
                f"{st.labels.get(node, node_label(node))} drops to {count}: {left}.")

    def _enqueue(self, event):
        st = self.state
        st.queue = st.queue + (event.node,)
        st.states[event.node] = QUEUED
        st.changed("states")
        return (f"{st.labels.get(event.node, node_label(event.node))}'s pending count is 0, "
                f"so it joins the back of the queue (queue: {st.words(st.queue)}).")

    def _finish(self, event):
        st = self.state
        st.finish_processing()
        st.loop = None
        parts = []
        for source, g in zip(st.sources, event.gradients):
            label = st.label(source)
            if g is None:
                parts.append(f"{label} gets None (no path connects it to the targets)")
                continue
            known = st.grads.get(source.id)
            if known is None or known.total is None:
                contributions = known.contributions if known is not None else (g,)
                st.grads[source.id] = TensorGradient(label, contributions, g, "nop")
            st.tensor_states[source.id] = DONE
            parts.append(f"the gradient with respect to {label} is {format_value(g)}")
        st.changed("grads", "tensor_states", "states")
        if not parts:
            return "The backward pass is over: there were no sources."
        return f"The backward pass is over: {join_words(parts)}."

    def _loop_iteration(self, event):
        st = self.state
        st.loop = event
        name = loop_label(event.node, st.labels)
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
