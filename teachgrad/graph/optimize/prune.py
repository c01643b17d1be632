"""Pruning: drop the nodes that no output needs.

Tracing records everything the Python function did, including work whose
result is never returned: a forward value only its gradient's shape was taken
from, a debugging print's tensor, the nodes the other passes leave behind when
they replace a node. A node is kept when an output depends on it, found by
walking back from the outputs through the nodes' inputs. The placeholders are
always kept: the function is fed through all of them. So are the effects of a
traced function (``tg.print``, a random draw; see ``effects.py``): what they do is
the point, whether or not an output reads them, and a traced function runs them on
every call.

A Session would skip such nodes anyway (a plan runs only what its fetches
need), so pruning changes no result and no run time; it gives the later
passes less to look at, and the lesson a picture of the work that is done.
"""
from ...ops.walk import upstream_nodes
from .effects import effect_outputs
from .rewrite import Rewriter


def needed_nodes(fn):
    """The nodes some output of ``fn`` or one of its effects depends on (``{id(node)}``):
    the engine's walk back (``upstream_nodes``), through inputs of every dtype."""
    roots = list(fn.outputs) + effect_outputs(fn.graph)
    return {id(node) for node in upstream_nodes(roots, fn.graph.producer, every_dtype=True)}


def prune(fn):
    """``fn`` without the nodes that none of its outputs need."""
    needed = needed_nodes(fn)
    fed = {id(p.node) for p in fn.inputs}    # kept by ``finish`` even when unused
    rw = Rewriter(fn)
    for node in fn.nodes:
        if id(node) in needed:
            rw.copy(node)
        elif id(node) not in fed:
            rw.note("removed", node)
    return rw.finish()
