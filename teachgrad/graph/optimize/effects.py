"""What the passes may assume about each op: read from the op's own declaration.

An optimiser may only move, merge or skip work it understands. Each op says,
in its own block (``defeffect`` in ``teachgrad/ops/core/apply.py``), one of:

* ``"fresh"``: **pure** (the outputs depend on the inputs and the params
  alone: no state, no randomness, no side effects), and each output is a new
  array that the op made and nobody else holds, so it may be overwritten once
  its last reader has run;
* ``"view"``: pure, but an output may be a view of an input (a reshape), the
  constant itself (a const), or the input unchanged (identity, cast): it
  keeps an alias of its input;
* ``"reduction"``: pure and keeps no alias of its input, but its output need
  not be fresh (a full reduction hands back a numpy scalar).

Only pure ops are folded into constants or merged with an equal node; an array
may be overwritten in place only if it is fresh and every one of its readers
keeps no alias of it. An op that declares nothing (a placeholder, a Variable
read, a function call, a loop, a cond, a custom gradient, any op declared
outside teachgrad) gets the most careful answer: impure, not fresh, keeping
aliases. A new op is therefore safe, and merely not optimised, until it says more.
The programs the fusion pass makes are fresh (``program.py``).
"""

def is_pure(op):
    return op.effect is not None


def is_fresh(op):
    return op.effect == "fresh"


def keeps_no_alias(op):
    return op.effect in ("fresh", "reduction")
