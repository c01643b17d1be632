"""What the passes may assume about each op: read from the op's own declaration.

An optimiser may only move, merge or skip work it understands. Each op says,
in its own block (``defeffect`` in ``teachgrad/ops/core/declare.py``), one of:

* ``"fresh"``: **pure** (the outputs depend on the inputs and the params
  alone: no state, no randomness, no side effects), and each output is a new
  array that the op made and nobody else holds, so it may be overwritten once
  its last reader has run;
* ``"view"``: pure, but an output may be a view of an input (a reshape), the
  constant itself (a const), or the input unchanged (identity, cast): it
  keeps an alias of its input;
* ``"reduction"``: pure and keeps no alias of its input, but its output need
  not be fresh (a full reduction hands back a numpy scalar);
* ``"stateful"``: running it *does* something beyond its outputs (``tg.print``
  writes a line, a ``tg.random`` draw moves its generator on), so it is an
  **effect**: never folded, never merged with an equal node (two draws are two
  draws), never fused, and kept by pruning even when no output needs it. A
  traced function runs every effect on every call, in the order the Python
  code made them (``has_effect``; ``Graph.runs_effects``).

Only pure ops are folded into constants or merged with an equal node; an array
may be overwritten in place only if it is fresh and every one of its readers
keeps no alias of it. An op that declares nothing (a placeholder, a Variable
read, a function call, a loop, a cond, a custom gradient, any op declared
outside teachgrad) gets the most careful answer: impure, not fresh, keeping
aliases. A new op is therefore safe, and merely not optimised, until it says more.
The programs the fusion pass makes are fresh (``program.py``).
"""

PURE = ("fresh", "view", "reduction")


def is_pure(op):
    return op.effect in PURE


def is_fresh(op):
    return op.effect == "fresh"


def keeps_no_alias(op):
    return op.effect in ("fresh", "reduction")


def has_effect(op):
    """Must ``op`` run each time its graph runs, whether or not an output needs it?"""
    return op.effect == "stateful"


def effect_outputs(graph):
    """The outputs of the effects in ``graph`` that must run with it (in creation order):
    none for a graph that runs only what its fetches need (``Graph.runs_effects``)."""
    if not graph.runs_effects:
        return []
    return [node.outputs[0] for node in graph.nodes if has_effect(node.op) and node.outputs]
