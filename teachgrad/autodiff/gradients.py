"""``tg.gradients``: symbolic gradients that become part of the graph.

The same backward engine as the tape walks the graph's nodes; because VJP rules
are written in teachgrad ops and ops add nodes while a graph is being built,
each rule adds its gradient nodes to the graph (named ``gradients/<node>_grad/...``
and labelled with the forward node that produced them) instead of computing.
"""
from .. import backend, dtypes, validate
from ..ops import IndexedSlices, ones_like, zeros_like
from ..ops.core.batching import BatchedTensor
from ..ops.core.grad_util import compatible, known
from ..state import state
from ..tensor import SymbolicTensor, Tensor, Variable
from . import events
from .aggregation import UnconnectedGradients, check_method, unconnected as unconnected_option
from .batched_gradients import has_batched, per_example_gradients
from .engine import backward


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def gradients(ys, xs, grad_ys=None, name="gradients", aggregation_method=None,
              stop_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
    """Symbolic derivatives of ``sum(ys)`` with respect to each of ``xs``.

    Args:
      ys: a tensor or list of tensors to differentiate.
      xs: a tensor (or Variable) or list of them to differentiate with respect to.
      grad_ys: cotangents for ``ys`` (same length), ones where None: each y is
        weighted by its grad_y.
      name: the name scope of the gradient nodes.
      aggregation_method: ``tg.AggregationMethod.ADD_N`` (one add_n node where
        contributions meet) or ``EXPERIMENTAL_TREE`` (pairwise adds).
      stop_gradients: tensors held constant: the gradient does not flow
        through them, which turns total derivatives into partial ones.
      unconnected_gradients: ``"none"`` or ``"zero"`` for an x that ys do not
        depend on.

    Returns:
      A list with one symbolic tensor (or None) per x.
    """
    validate.flags("tg.gradients", name=name)
    ys, xs = _as_list(ys), _as_list(xs)
    for y in ys:
        if not isinstance(y, Tensor):
            validate.fail(TypeError, "tg.gradients", "ys", "tensors of the graph (a tensor or "
                          "a list of them)", y)
    stop_gradients = [] if stop_gradients is None else _as_list(stop_gradients)
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    if has_batched(ys + xs):   # inside tg.vectorized_map: per example, through the batch
        return per_example_gradients(gradients, ys, xs, grad_ys, name=name,
                                     aggregation_method=aggregation_method,
                                     stop_gradients=stop_gradients,
                                     unconnected_gradients=unconnected_gradients)
    graph = _graph_of(ys)
    unconnected = unconnected_option(unconnected_gradients, "tg.gradients")
    check_method(aggregation_method)

    with graph.as_default(), graph.name_scope(name):
        xs = [_local_tensor(x, graph, "xs") for x in xs]
        stops = [_local_tensor(t, graph, "stop_gradients") for t in stop_gradients]
        seeds = [_seed(i, y, g, graph) for i, (y, g) in enumerate(zip(ys, grad_ys))]
        grads = backward(ys, seeds, xs, _producer(graph),
                         aggregation_method=aggregation_method, stop_tensors=stops,
                         observer=events.current_observer())
        grads = [g.to_dense() if isinstance(g, IndexedSlices) else g for g in grads]
        if unconnected is UnconnectedGradients.ZERO:
            grads = [_zeros_for(x, graph) if g is None else g for g, x in zip(grads, xs)]
    return grads


def _seed(i, y, g, graph):
    """The cotangent ``ys[i]`` starts from: ones where its grad_y is None, else the
    grad_y, checked (y's shape, and real for a real y)."""
    if g is None:
        return ones_like(y)
    g = g if isinstance(g, (SymbolicTensor, BatchedTensor)) else graph.as_graph_tensor(g, y)
    if not compatible(g.shape, y.shape):
        raise ValueError(
            f"grad_ys[{i}] has shape {_shape(g)}, but ys[{i}] ('{y.name}') has shape "
            f"{_shape(y)}. A grad_y is the gradient of the final result with respect "
            f"to its y, so it has y's shape: pass one of shape {_shape(y)} (or None "
            f"for ones).")
    if dtypes.is_floating(y.dtype) and not dtypes.is_floating(g.dtype) \
            and g.dtype.kind not in "iu":
        raise TypeError(f"Gradient type {g.dtype} generated for real-valued tensor "
                        f"{y.name} with type {y.dtype} must be real.")
    return g


def _zeros_for(x, graph):
    """The gradient of an ``x`` that the ys do not depend on: zeros of its shape.

    When the shape is fully known they are a constant, so the gradient runs without
    ``x`` (a placeholder need not be fed for it); otherwise ``zeros_like(x)`` reads
    the shape from ``x`` when the graph runs.
    """
    if known(x.shape):
        return graph.add_constant(backend.xp.zeros(x.shape, dtype=x.dtype), name="zeros")
    return zeros_like(x)


def _shape(t):
    return "unknown" if t.shape is None else tuple(t.shape)


def _graph_of(ys):
    """The graph to differentiate in: the one the ys belong to. Inside a loop body or
    a branch that is being built, ys of an enclosing graph are differentiated there
    (the body then captures the result)."""
    graphs = {y.graph for y in ys if isinstance(y, SymbolicTensor)}
    current = state.graph
    if len(graphs) > 1:
        raise ValueError("The ys of tg.gradients belong to different graphs; differentiate "
                         "the tensors of one graph at a time.")
    if graphs:
        graph = graphs.pop()
        if current is None or encloses(graph, current):
            return graph
        raise ValueError(f"{ys[0].name} belongs to another graph than the one being built.")
    if current is not None:
        return current
    raise RuntimeError("tg.gradients is not supported when eager execution is enabled. "
                       "Use tg.GradientTape instead, or call tg.gradients on graph tensors "
                       "(inside `with graph.as_default():` or a tg.function).")


def encloses(outer, graph):
    """Is ``outer`` the graph ``graph`` or one it is traced inside (a loop body's
    or a branch's enclosing graph)?"""
    while graph is not None:
        if graph is outer:
            return True
        graph = getattr(graph, "outer", None)
    return False


def _producer(graph):
    """The engine's ``producer`` for ``graph``: in a loop body or a branch being built,
    one that follows captured tensors back into the enclosing graphs, so that ``ys``
    computed there from values of the enclosing graph are differentiated with
    respect to ``xs`` out there too (TensorFlow's ``testCallGradInLoop``)."""
    across = getattr(graph, "producer_across_captures", None)
    return graph.producer if across is None else across()


def _local_tensor(t, graph, role):
    """``t`` as a source in ``graph``: itself (a tensor of ``graph`` or of a graph
    enclosing it, which the backward pass reaches through the captures), or the tensor
    that reads a Variable (in the outermost graph, where every read of it starts)."""
    if isinstance(t, Variable):
        read = graph.read_variable(t)
        outermost = getattr(graph, "outermost", None)
        return read if outermost is None else outermost().find_variable_read(t)
    if not isinstance(t, SymbolicTensor):
        raise TypeError(f"{role} must be tensors of the graph, got {type(t).__name__}.")
    if t.graph is graph or encloses(t.graph, graph):
        return t
    raise ValueError(f"{t.name} in {role} belongs to another graph.")
