"""``tg.cond``: run one of two branches, and differentiate the one that ran.

Eagerly, ``cond`` simply calls the branch the predicate picks; the tape
records its ops (tagged with the branch, for the diagnostics and the
visualizers), so the gradient flows through that branch only.

In a graph, both branches are traced into subgraphs held by **one If node**;
its kernel runs the branch the predicate picks when the graph runs. The
gradient of an If node is **another If node** on the same predicate, whose
branches are the gradient graphs of the two branches:

* outputs that cannot carry a gradient (integers, bools) are left out of the
  differentiation;
* each gradient branch returns a cotangent for every input of the If node
  (the tensors either branch captured); where a branch does not use an input,
  or its gradient is None, the cotangent is zeros of that input's shape, since
  both branches must return the same things.

A gradient branch needs values its forward branch computed: the forward If
node then outputs them too (the branch that did not run outputs nothing
there, and its gradient branch never reads them).
"""
from .. import backend, dtypes, nest, validate
from ..autodiff.engine import backward
from ..autodiff.pending import trainable
from ..graph.session import plan_for
from ..ops import IndexedSlices, zeros, zeros_like
from ..ops.core.apply import add_to_graph
from ..ops.core.declare import (
    accepts,
    defshape,
    defvjp_all,
    primitive,
    rules_need_tensors,
    takes_complex,
)
from ..state import state
from . import batched
from .outputs import add_output
from .structure import check_same_structure, paths
from .subgraph import MirrorGraph, as_tensor, differentiable_sources, entered, trace


class Branch:
    """The context of the ops an eager ``cond`` ran: which branch, of which cond."""

    __slots__ = ("name", "taken")

    def __init__(self, name, taken):
        self.name = name
        self.taken = taken      # "true_fn" or "false_fn"

    def __repr__(self):
        return f"<cond {self.name!r}: ran {self.taken}>"


def cond(pred, true_fn, false_fn, name="cond"):
    """``true_fn()`` if ``pred`` is true, else ``false_fn()``.

    Args:
      pred: a scalar bool tensor (or a Python bool).
      true_fn, false_fn: functions of no arguments returning the same nested
        structure of tensors, with the same dtypes.
      name: the name of the If node in graphs.

        y = tg.cond(x > 0, lambda: x * x, lambda: -x)
    """
    validate.flags("tg.cond", name=name)
    validate.callable_(true_fn, "true_fn", "tg.cond")
    validate.callable_(false_fn, "false_fn", "tg.cond")
    if batched.inside_map(pred):   # each example may take its own branch
        return batched.batched_cond(pred, true_fn, false_fn)
    if state.graph is not None:
        return _graph_cond(pred, true_fn, false_fn, name)
    taken = "true_fn" if _truth(pred) else "false_fn"
    with entered(Branch(name, taken)):
        return (true_fn if taken == "true_fn" else false_fn)()


def _truth(pred):
    if isinstance(pred, bool):
        return pred
    pred = as_tensor(pred, name="pred", where="tg.cond")
    if pred.dtype != dtypes.bool_ or pred.shape != ():
        raise TypeError(f"cond's pred must be a scalar bool, got a tensor of dtype {pred.dtype} "
                        f"and shape {tuple(pred.shape)}.")
    return bool(pred.numpy())


class BranchState:
    """What an If node knows beyond its branches (its ``branches`` parameter)."""

    def __init__(self, name, n_outputs):
        self.name = name
        self.n_outputs = n_outputs
        self.saved = []    # (branch, tensor): branch intermediates output for the gradient
        self.node = None

    def __repr__(self):
        return f"<cond {self.name}: {self.n_outputs} outputs, {len(self.saved)} saved>"


def _leaves(result):
    return [] if result is None else nest.flatten(result)


def _graph_cond(pred, true_fn, false_fn, name):
    graph = state.graph
    pred = graph.as_graph_tensor(as_tensor(pred, name="pred", where="tg.cond"), None)
    if pred.dtype != dtypes.bool_ or pred.shape not in ((), None):
        raise TypeError(f"cond's pred must be a scalar bool, got {pred!r}.")
    true_traced, true_result = trace(lambda: true_fn(), [], f"{name}_true")
    false_traced, false_result = trace(lambda: false_fn(), [], f"{name}_false")
    if (true_result is None) != (false_result is None):
        which, other = ("true_fn", "false_fn") if true_result is None else ("false_fn", "true_fn")
        raise ValueError(f"tg.cond: {which} returned None but {other} returned a value. In a "
                         f"graph both branches must return the same structure of tensors "
                         f"(the graph cannot know which branch runs); return a value from both.")
    check_same_structure(true_result, false_result, "cond", "true_fn's result",
                         "false_fn's result")
    for path, a, b in zip(paths(true_result, "result"), true_traced.outputs,
                          false_traced.outputs):
        if a.dtype != b.dtype:
            raise TypeError(f"cond: {path} is {a.dtype} in true_fn's result but {b.dtype} in "
                            f"false_fn's. Both branches must return the same dtypes "
                            f"(cast one with tg.cast).")
    if true_result is None:
        return None   # nothing to compute: teachgrad's ops have no side effects
    outputs = build_if(pred, true_traced, false_traced, name)
    return nest.pack_sequence_as(true_result, list(outputs[:len(true_traced.outputs)]))


def build_if(pred, true_traced, false_traced, name):
    """Add an If node choosing between two traced branches."""
    state = BranchState(name, len(true_traced.outputs))
    inputs = [pred, *true_traced.external, *false_traced.external]
    outputs = add_to_graph(if_p, inputs, {"true_fn": true_traced, "false_fn": false_traced,
                                               "branches": state}, name=name)
    state.node = outputs[0].node
    return outputs


def _if_kernel(pred, *arrays, true_fn, false_fn, branches):
    n_true = len(true_fn.external)
    if bool(pred):
        side, chosen, captures = "true_fn", true_fn, arrays[:n_true]
    else:
        side, chosen, captures = "false_fn", false_fn, arrays[n_true:]
    out_ids = [t.id for t in chosen.outputs]
    saved_ids = [t.id for s, t in branches.saved if s == side]
    values = plan_for(chosen.graph, out_ids + saved_ids, set(chosen.feed_ids)).run(
        dict(zip(chosen.feed_ids, captures)))
    # Only the untaken branch's own gradient branch reads its intermediates, and it does
    # not run; they are zeros that take no memory, so that an op of the enclosing graph
    # that reads one (a second derivative's ones_like, say) gets an array of the right
    # dtype (numpy made an object array of None; CuPy refused it).
    saved = [values[t.id] if s == side else _untaken(t) for s, t in branches.saved]
    return (*[values[i] for i in out_ids], *saved)


def _untaken(tensor):
    """A stand-in for an intermediate of the branch not taken: a broadcast zero of its
    shape, its unknown sizes 0 (a loop's stack pads it with zeros to the others' size);
    None only when even its rank is unknown (the stack makes it zeros)."""
    if tensor.shape is None:
        return None
    shape = tuple(0 if d is None else d for d in tensor.shape)
    return backend.xp.broadcast_to(backend.xp.zeros((), dtype=tensor.dtype), shape)


def _merged_shape(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _if_shapes(pred, *inputs, true_fn, false_fn, branches):
    outs = [(_merged_shape(a.shape, b.shape), a.dtype)
            for a, b in zip(true_fn.outputs, false_fn.outputs)]
    return outs + [(t.shape, t.dtype) for _, t in branches.saved]


def saved_output(branches, side, tensor):
    """The If output carrying ``tensor`` of branch ``side`` (added if new)."""
    for k, (s, t) in enumerate(branches.saved):
        if t is tensor:
            return branches.node.outputs[branches.n_outputs + k]
    branches.saved.append((side, tensor))
    return add_output(branches.node, tensor.shape, tensor.dtype)


def _zeros_for(t):
    return zeros(t.shape, t.dtype) if t.shape is not None and None not in t.shape \
        else zeros_like(t)


def _if_vjp(cts, ans, pred, *inputs, true_fn, false_fn, branches):
    n = branches.n_outputs
    branches.node = ans[0].node   # (a forward-mode accumulator gets here before build_if ends)
    # Untrainable outputs are left out, and so are outputs that got no gradient.
    float_outputs = [j for j in range(n) if trainable(ans[j]) and cts[j] is not None]
    n_true = len(true_fn.external)
    saved_seeds = [(s, t, g) for (s, t), g in zip(branches.saved, cts[n:]) if g is not None]
    float_inputs = _carrying_inputs(true_fn, false_fn, float_outputs, saved_seeds)
    if not float_inputs:
        return [None] * (len(inputs) + 1)
    outer = state.graph
    seeds = [cts[j] for j in float_outputs]
    seeds = [g.to_dense() if isinstance(g, IndexedSlices) else g for g in seeds]

    def gradient_branch(side, traced, offset):
        graph = MirrorGraph(f"{branches.name}_{side}_grad", outer, traced.graph,
                            lambda t: graph.as_graph_tensor(saved_output(branches, side, t),
                                                             None))

        def branch():
            ys = [traced.outputs[j] for j in float_outputs]
            cotangents = [graph.as_graph_tensor(g, None) for g in seeds]
            for s, t, g in saved_seeds:   # second order: cotangents of saved values
                if s == side:
                    ys.append(t)
                    cotangents.append(graph.as_graph_tensor(g, None))
            mine = [k - offset for k in float_inputs if 0 <= k - offset < len(traced.external)]
            xs = [traced.graph.internal[k] for k in mine]
            found = dict(zip(mine, backward(ys, cotangents, xs, traced.graph.producer))) \
                if xs else {}
            return [graph.as_graph_tensor(_branch_grad(found, k - offset, traced, inputs[k]),
                                          None) for k in float_inputs]

        traced_grad, _ = trace(branch, [], graph.name, graph=graph)
        return traced_grad

    true_grad = gradient_branch("true_fn", true_fn, 0)
    false_grad = gradient_branch("false_fn", false_fn, n_true)
    outputs = build_if(pred, true_grad, false_grad, f"{branches.name}_grad")
    grads = [None] * (len(inputs) + 1)
    for g, k in zip(outputs, float_inputs):
        grads[k + 1] = g
    return grads


def _carrying_inputs(true_fn, false_fn, float_outputs, saved_seeds):
    """The If's inputs (after pred) that get a gradient: those either branch's
    differentiated outputs (or saved values given cotangents) depend on."""
    float_inputs = []
    n_true = len(true_fn.external)
    for side, traced, offset in (("true_fn", true_fn, 0), ("false_fn", false_fn, n_true)):
        reached = differentiable_sources(traced.graph, [traced.outputs[j] for j in float_outputs]
                                         + [t for s, t, _ in saved_seeds if s == side])
        float_inputs += [offset + c for c, t in enumerate(traced.graph.internal)
                         if t.id in reached]
    return float_inputs


def _branch_grad(found, k, traced, x):
    """One branch's gradient for input ``x`` (its capture ``k``): zeros where the branch
    does not read it or its rule gave None, dense otherwise."""
    g = found.get(k) if 0 <= k < len(traced.external) else None
    if g is None:
        return _zeros_for(x)
    return g.to_dense() if isinstance(g, IndexedSlices) else g


# If(pred, *true_fn captures, *false_fn captures; true_fn, false_fn, branches): the
# outputs of the branch that ran, then the intermediates saved for the gradient.
if_p = primitive("If", _if_kernel, multiple_results=True)
takes_complex(if_p)
defshape(if_p, _if_shapes)
accepts(if_p, missing=True)
rules_need_tensors(defvjp_all(if_p, _if_vjp))   # builds and runs branches
batched.refuse_batching(if_p, "If")
