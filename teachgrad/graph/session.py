"""Running a graph: work out which nodes a fetch needs, then run their kernels.

A plan is the list of nodes needed for some fetches given some feeds, in
creation order (which is a topological order: a node can only use tensors that
existed before it). In a traced function's graph (and its loop bodies and
branches) the effects (``tg.print``, ``tg.random`` draws) are needed too, fetched
or not: each runs on every call, in the order the Python code made them. Running a plan is a tight loop over kernels on plain
arrays: no Tensor objects, no tape, which is why a traced ``tg.function`` runs
faster than the same code eagerly.
"""
import operator
import types

import numpy as np

from .. import backend, nest, validate
from ..ops.core.inputs import with_context
from ..ops.walk import upstream_nodes
from ..state import state
from ..tensor import SymbolicTensor
from .graph import Graph, placeholder_p
from .optimize.effects import effect_outputs


class Plan:
    """The kernels to run, in order, to compute ``fetch_ids`` from ``feed_ids``."""

    def __init__(self, graph, fetch_ids, feed_ids):
        effect_ids = [t.id for t in effect_outputs(graph)]
        needed = _needed_nodes(graph, list(fetch_ids) + effect_ids, feed_ids)
        self.steps = []
        self.fetch_ids = set(fetch_ids)
        for node in graph.nodes:
            if node not in needed:
                continue
            if node.op is placeholder_p:
                shape = "unknown" if node.params["shape"] is None else node.params["shape"]
                raise ValueError(
                    f"You must feed a value for placeholder tensor '{node.name}' with dtype "
                    f"{node.params['dtype']} and shape {shape}.")
            in_ids = tuple(x.id for x in node.inputs)
            self.steps.append([node.op.forward, node.params, in_ids,
                               tuple(t.id for t in node.outputs),
                               node.op.multiple_results, node, (), _reader(in_ids)])
        # Free each array after its last use, so memory peaks like a hand-written step.
        last_use = {}
        for k, step in enumerate(self.steps):
            for i in step[2]:
                last_use[i] = k
        for i, k in last_use.items():
            if i not in self.fetch_ids:
                self.steps[k][6] += (i,)

    def run(self, values):
        """Run the kernels; ``values`` maps tensor ids to arrays (the feeds) and is filled in."""
        checks = state.checks()   # tg.debug checks, when on, see each node's arrays
        for forward, params, in_ids, out_ids, multiple, node, dead, read in self.steps:
            try:
                out = forward(*read(values), **params)
            except (ValueError, TypeError, IndexError) as error:
                shapes = ", ".join(str(np.shape(values[i])) for i in in_ids)
                raise with_context(error, f"{node.name} ({node.op.name})",
                                           shapes) from None
            if multiple:
                for i, o in zip(out_ids, out):
                    values[i] = o
            else:
                values[out_ids[0]] = out
            if checks:
                for check in checks:
                    check.ran_in_graph(node, [values[i] for i in in_ids],
                                       tuple(out) if multiple else (out,))
            for i in dead:
                values.pop(i, None)
        return values


def _reader(ids):
    """A function giving the arrays of the tensors ``ids`` from a run's ``values``, as a
    tuple: ``operator.itemgetter`` (which looks them all up in one C call, where a
    list comprehension costs a few hundred ns per step), wrapped for one id or none."""
    if len(ids) > 1:
        return operator.itemgetter(*ids)
    if len(ids) == 1:
        get = operator.itemgetter(ids[0])
        return lambda values: (get(values),)
    return lambda values: ()


def _needed_nodes(graph, fetch_ids, feed_ids):
    """The nodes the fetches depend on, short of the fed tensors: the engine's walk back
    (``upstream_nodes``), through inputs of every dtype, where a fed tensor has no maker."""
    def producer(tensor_id):
        return None if tensor_id in feed_ids else graph.producer(tensor_id)
    fetches = [types.SimpleNamespace(id=i) for i in fetch_ids]   # the walk reads only .id
    return upstream_nodes(fetches, producer, every_dtype=True)


def plan_for(graph, fetch_ids, feed_ids):
    """A cached Plan for these fetches and feeds."""
    key = (tuple(fetch_ids), frozenset(feed_ids))
    plan = graph.plans.get(key)
    if plan is None:
        plan = graph.plans[key] = Plan(graph, fetch_ids, feed_ids)
    return plan


def check_feed(tensor, value):
    """``value`` as an array of ``tensor``'s dtype and a shape it accepts."""
    name = f"feed_dict['{tensor.name}']"
    try:
        array = validate.tensor_like(value.numpy() if hasattr(value, "numpy") else value,
                                     name, "Session.run")
    except TypeError as error:
        raise TypeError(f"{error} The placeholder '{tensor.name}' takes values of dtype "
                        f"{tensor.dtype}.") from None
    if array.dtype != tensor.dtype:
        if not np.can_cast(array.dtype, tensor.dtype, casting="same_kind"):
            validate.fail(TypeError, "Session.run", name, f"a value of dtype {tensor.dtype} "
                          f"(the dtype of '{tensor.name}') or one that converts without loss",
                          value, f"Cannot feed a value of dtype {array.dtype} for tensor "
                          f"'{tensor.name}', which has dtype {tensor.dtype}.")
        array = array.astype(tensor.dtype)
    shape = tensor.shape
    if shape is not None and (array.ndim != len(shape) or any(
            d is not None and d != n for d, n in zip(shape, array.shape))):
        pretty = "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"
        raise ValueError(f"Cannot feed value of shape {array.shape} for tensor "
                         f"'{tensor.name}', which has shape {pretty}.")
    return array


class Session:
    """Runs a graph. ``Session(graph).run(fetches, feed_dict)``.

    Args:
      graph: the graph to run (by default, the graph of the fetched tensors).
    """

    def __init__(self, graph=None):
        if graph is not None and not isinstance(graph, Graph):
            validate.fail(TypeError, "tg.Session", "graph", "a tg.Graph (or None: the graph "
                          "of the fetched tensors)", graph,
                          "Build one with g = tg.Graph() and `with g.as_default():`.")
        self.graph = graph

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, fetches, feed_dict=None):
        """Compute ``fetches`` (a tensor, or a nested list/tuple/dict of them).

        Only the nodes the fetches need are run. ``feed_dict`` maps placeholders
        (or any tensor of the graph, to override it) to values. Returns numpy
        arrays in the structure of ``fetches``.
        """
        flat = nest.flatten(fetches)
        for t in flat:
            if not isinstance(t, SymbolicTensor):
                raise TypeError(f"Session.run fetches graph tensors, not {type(t).__name__}.")
        graph = self.graph or (flat[0].graph if flat else None)
        for t in flat:
            if t.graph is not graph:
                raise ValueError(f"{t.name} does not belong to the session's graph.")
        values = {}
        if feed_dict is not None and not isinstance(feed_dict, dict):
            validate.fail(TypeError, "Session.run", "feed_dict", "a dict mapping placeholders "
                          "to values, {x: [1.0, 2.0]}", feed_dict)
        for tensor, value in (feed_dict or {}).items():
            if not isinstance(tensor, SymbolicTensor) or tensor.graph is not graph:
                raise TypeError(f"feed_dict keys must be tensors of the session's graph, "
                                f"got {tensor!r}.")
            values[tensor.id] = check_feed(tensor, value)
        fetch_ids = [t.id for t in flat]
        plan_for(graph, fetch_ids, set(values)).run(values)
        results = [backend.to_numpy(values[i]) for i in fetch_ids]
        return nest.pack_sequence_as(fetches, results)
