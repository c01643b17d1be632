"""The backward pass run for ``explain_gradient``, and what it says about each edge.

``EngineRun`` runs the real engine (``backward``) once, with an observer, to see
what every VJP rule returned: None, zeros, or a gradient. ``edge_cause(node, i)``
then says why no gradient passes from ``node`` back to its input ``i``: first
from what is known without running (an integer tensor, a stop, an op without
a rule), then from what the run showed (a rule or grad_fn that returned None,
a rule that returned zeros).

On a tape the run only reads the record. In a graph it adds gradient nodes,
which ``graph.scratch()`` takes away again; a While or If node's gradient would
also change the forward node (it gains outputs), so a graph with control
flow on the path is explained from its structure alone.
"""
from .. import backend
from ..autodiff import events
from ..autodiff.aggregation import aggregate
from ..autodiff.custom_op import custom_gradient_p
from ..autodiff.engine import backward
from ..graph.session import Session
from ..ops import IndexedSlices, ones_like
from ..ops.core.apply import unobserved
from ..ops.core.declare import declares_no_gradient
from ..ops.elementwise.casts import stop_gradient_p
from ..tensor import Tensor
from .explanation import Cause
from .report import a_or_an

#: Ops whose gradient, built in a graph, changes the forward nodes.
_GROWING_OPS = ("While", "If")


class EngineRun:
    """The backward pass run for real, with an observer, to see what each rule returned.

    Ops with no gradient rule are held as stop tensors so that the run finishes
    (the real call would raise LookupError; ``raises`` says whether it would).
    """

    def __init__(self, view, target, engine_parents, feed_dict):
        self.view, self.target = view, target
        self.feed_dict = feed_dict
        self.calls, self.received, self.branch = {}, {target.id}, {}
        self.gradient, self.error, self.ran, self.raises = None, None, False, None
        self.no_rule = [n for n in engine_parents
                        if n.op.differentiable and n.op.vjp_rules is None
                        and n.op.vjp_all is None]
        self.stop_nodes = {view.producer(t.id) for t in view.stop_tensors}
        if view.mode == "tape":
            self._run_on_tape()
        else:
            self._find_branches()
            if not any(n.op.name in _GROWING_OPS for n in engine_parents):
                self._run_in_graph()
        for node in self.no_rule:
            if any(t.id in self.received for t in node.outputs):
                self.raises = node
                break

    def _observe(self, trace):
        for event in trace.events:
            if isinstance(event, events.CallVJP):
                self.calls[event.node] = event
                for x, g in zip(event.node.inputs, event.input_grads):
                    if g is not None:
                        self.received.add(x.id)

    def _run_engine(self, seeds, sources, stops):
        trace = events.Trace()
        try:
            grads = backward([self.target], seeds, sources, self.view.producer,
                             stop_tensors=stops, observer=trace)
        except Exception as error:   # a rule that fails: report it, do not crash the report
            self.error = f"{type(error).__name__}: {error}"
            grads = [None] * len(sources)
        self._observe(trace)
        self.ran = True
        return grads

    def _run_on_tape(self):
        stops = [t for n in self.no_rule for t in n.outputs]
        with unobserved():
            seeds = [Tensor(backend.xp.ones_like(self.target.value))]
            sources = self.view.walk_sources
            grads = [g for g in self._run_engine(seeds, sources, stops) if g is not None]
            if self.view.sources and grads:
                self.gradient = aggregate(grads, None)[0]
                if isinstance(self.gradient, IndexedSlices):
                    self.gradient = self.gradient.to_dense()

    def _run_in_graph(self):
        graph = self.view.graph
        stops = self.view.stop_tensors + [t for n in self.no_rule for t in n.outputs]
        with unobserved(), graph.scratch(), graph.as_default():
            grads = self._run_engine([ones_like(self.target)], self.view.sources, stops)
            grad = grads[0] if grads else None
            if isinstance(grad, IndexedSlices):
                grad = grad.to_dense()
            self.gradient = grad
            if grad is not None and self.feed_dict is not None and self.error is None:
                self.gradient = Session(graph).run(grad, self.feed_dict)

    def _find_branches(self):
        """With a feed_dict: which branch each If node of the graph takes."""
        if self.feed_dict is None:
            return
        graph = self.view.graph
        with unobserved(), graph.scratch():
            for node in graph.get_operations():
                if node.op.name == "If":
                    self.branch[node] = bool(Session(graph).run(node.inputs[0], self.feed_dict))

    # -- one edge of a path ---------------------------------------------------------
    def edge_cause(self, node, i):
        """Why no gradient passes from ``node``'s output back to its input i (None: it does):
        first what the graph itself says, then what the rule did when the engine ran."""
        cause = self._declared_cause(node, i)
        return cause if cause is not None else self._run_cause(node, i)

    def _declared_cause(self, node, i):
        """An integer input, a stop, an op without a derivative or a rule, a rule that
        declares no gradient for this input."""
        x = node.inputs[i]
        op = node.op
        if x.dtype.kind != "f":
            maker = self.view.producer_all(x.id)
            tensor = f"{a_or_an(x.dtype)} tensor"
            what = (f"{maker.name} ({maker.op.name}) makes {tensor} that {node.name} reads"
                    if maker is not None else f"{node.name} reads {tensor}")
            return Cause("integer", f"{what}: integers and bools carry no gradient (they are "
                         f"constants)",
                         "Keep the computation in floats; tg.grad_pass_through passes a "
                         "gradient through a rounding or casting step on purpose.",
                         maker or node, i)
        if node in self.stop_nodes:
            return Cause("stop_gradients_entry", f"{node.name}'s output is in stop_gradients=, "
                         f"so tg.gradients holds it constant", "Remove it from "
                         "stop_gradients= if the gradient should flow through it.", node, i)
        if op is stop_gradient_p:
            return Cause("stop_gradient", f"{node.name} is a tg.stop_gradient: its output is "
                         f"a constant to autodiff", "Remove the tg.stop_gradient if the "
                         "gradient should flow here.", node, i)
        if not op.differentiable:
            return Cause("not_differentiable", f"{node.name} ({op.name}) has a zero "
                         f"derivative (it is piecewise constant, or depends only on shapes)",
                         "Use a smooth op, or tg.grad_pass_through for a straight-through "
                         "estimator.", node, i)
        if op.vjp_rules is None and op.vjp_all is None:
            return Cause("no_gradient_rule", f"{node.name} ({op.name}) has no gradient rule: "
                         f"the gradient call raises LookupError there",
                         "Give it one with tg.ops.defvjp, or tg.stop_gradient its input "
                         "if it is meant to be a constant.", node, i)
        if op is custom_gradient_p:
            inside = self._custom_cause(node, i)
            if inside is not None:
                return inside
        elif declares_no_gradient(op, i):
            return Cause("rule_returned_none", f"{node.name} ({op.name}) declares no gradient "
                         f"for its input {i}", "", node, i)
        return None

    def _run_cause(self, node, i):
        """What the engine's run shows: an untaken cond branch, a rule that returned None
        or turned a nonzero cotangent into zeros."""
        op = node.op
        if op.name == "If":
            return self._cond_cause(node, i)
        call = self.calls.get(node)
        if call is None:
            return None
        g = call.input_grads[i]
        if g is None:
            return Cause("rule_returned_none", f"the VJP rule of {node.name} ({op.name}) "
                         f"returned None for its input {i}", "", node, i)
        if self.view.mode == "tape" and _all_zero(g) and not all(
                o is None or _all_zero(o) for o in call.output_grads):
            return Cause("zeroed", _zeroed_message(node, i), "", node, i)
        return None

    def _custom_cause(self, node, i):
        n_results, n_args = node.params["n_results"], node.params["n_args"]
        name = node.params["name"]
        if i < n_results:
            return Cause("custom_gradient_inside", f"the path runs through the ops inside "
                         f"custom_gradient function {name}; its grad_fn replaces their "
                         f"gradient, and hands gradients only to {name}'s arguments and "
                         f"Variables", f"Pass the source to {name} as an argument, so "
                         f"grad_fn can return its gradient.", node, i)
        call = self.calls.get(node)
        if call is not None and call.input_grads[i] is None:
            k = i - n_results
            what = f"argument {k}" if k < n_args else \
                f"Variable {node.params['variables'][k - n_args].name or k - n_args}"
            return Cause("grad_fn_returned_none", f"the grad_fn of custom_gradient function "
                         f"{name} returned None for its {what}", "Return a gradient "
                         "there (zeros, if that is the truth).", node, i)
        return None

    def _cond_cause(self, node, i):
        true_fn, false_fn = node.params["true_fn"], node.params["false_fn"]
        n_true = len(true_fn.external)
        side, other = ("true_fn", false_fn) if i <= n_true else ("false_fn", true_fn)
        x = node.inputs[i]
        if any(e is x for e in other.external):
            return None        # both branches read it
        name = f"'{node.params['branches'].name}'"
        taken = self.branch.get(node)
        if taken is None:
            return Cause("cond_branch_not_taken", f"only {side} of cond {name} reads it: its "
                         f"gradient through the cond is zero whenever the other branch runs",
                         "Pass feed_dict= to see which branch runs.", node, i,
                         conditional=True)
        if (taken and side == "true_fn") or (not taken and side == "false_fn"):
            return None
        ran = "true_fn" if taken else "false_fn"
        return Cause("cond_branch_not_taken", f"only {side} of cond {name} reads it, and "
                     f"{ran} is the branch that runs: the gradient is zero", "", node, i)


def _all_zero(g):
    if isinstance(g, IndexedSlices):
        g = g.to_dense()
    return not bool(backend.xp.any(g.value != 0))


_ZEROED = {
    "relu": "every entry of its input is <= 0, so relu passes no gradient back (a 'dead' ReLU)",
    "where": "the condition never picks this input",
    "maximum": "the other input is the larger one at every entry",
    "minimum": "the other input is the smaller one at every entry",
    "multiply": "the other factor is zero at every entry",
    "max": "these entries are never the largest",
    "min": "these entries are never the smallest",
    "abs": "its input is 0 everywhere, where the derivative of |x| is taken to be 0",
}


def _zeroed_message(node, i):
    why = _ZEROED.get(node.op.name, "its VJP rule gives zeros at these values")
    return f"{node.name} ({node.op.name}) turns the gradient into zeros for its input {i}: {why}"
