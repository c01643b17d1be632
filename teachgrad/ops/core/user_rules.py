"""The declaration verbs you call: ``tg.ops.defvjp``, ``tg.ops.defjvp``, ``tg.ops.defvjp_all``.

They declare an op's rules as ``teachgrad.ops.core.declare``'s verbs do, with one
difference: your rules always get Tensors, even in a backward pass that nothing records
(where teachgrad's own rules run on raw arrays, in the ``OnArrays`` interpreter). So a
rule of yours may call ``x.numpy()``, or anything else a Tensor has, as lesson 6's does;
the engine boxes the cotangents (and tangents) it hands your rule, and unboxes what the
rule returns. Which verb declared a rule is the only thing that decides this: there is no
flag to forget, and no way for your rule to be handed arrays without your asking.
"""

from . import declare
from .declare import rules_need_tensors


def defvjp(op, *rules):
    """Give ``op`` one VJP rule per input: ``rule(ct, ans, *inputs, **params)``, where
    ``ct`` is the cotangent of the output and ``ans`` the output itself, both Tensors.
    ``None`` in place of a rule marks an input that carries no gradient (an index, say)."""
    return rules_need_tensors(declare.defvjp(op, *rules))


def defjvp(op, *rules):
    """Give ``op`` a native forward-mode rule: one rule per input,
    ``rule(x_dot, ans, *inputs, **params)``, returning that input's contribution to the
    output tangent (the contributions add up), on Tensors. Without one, forward mode
    transposes the VJP rules."""
    return rules_need_tensors(declare.defjvp(op, *rules))


def defvjp_all(op, rule):
    """Give ``op`` one VJP rule returning every input's cotangent (for an op with several
    inputs whose cotangents share work), on Tensors."""
    return rules_need_tensors(declare.defvjp_all(op, rule))
