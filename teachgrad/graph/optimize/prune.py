"""Pruning: drop the nodes that no output needs.

Tracing records everything the Python function did, including work whose
result is never returned: a forward value only its gradient's shape was taken
from, a debugging print's tensor, the nodes the other passes leave behind when
they replace a node. A node is kept when an output depends on it, found by
walking back from the outputs through the nodes' inputs. The placeholders are
always kept: the function is fed through all of them.

A Session would skip such nodes anyway (a plan runs only what its fetches
need), so pruning changes no result and no run time; it gives the later
passes less to look at, and the lesson a picture of the work that is done.
"""
from .rewrite import Rewriter


def needed_nodes(fn):
    """The nodes some output of ``fn`` depends on (``{id(node)}``)."""
    needed, stack = set(), [t.node for t in fn.outputs]
    while stack:
        node = stack.pop()
        if id(node) in needed:
            continue
        needed.add(id(node))
        stack.extend(x.node for x in node.inputs)
    return needed


def prune(fn):
    """``fn`` without the nodes that none of its outputs need."""
    needed = needed_nodes(fn)
    rw = Rewriter(fn)
    for node in fn.nodes:
        if id(node) in needed:
            rw.copy(node)
    return rw.finish()
