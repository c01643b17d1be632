"""Can a rule with the right values be differentiated again?

A rule written with numpy (``np.cos(x)``) instead of teachgrad ops (``tg.cos(x)``)
computes the right numbers, but autodiff cannot see through it, so second
derivatives, and forward mode by transposition, would silently be wrong. Here
phi = <rule(first, f(x), x), v> is differentiated with the tape and by finite
differences, with respect to each input and to the rule's first argument (g or
x_dot); where they disagree, part of the rule was computed outside teachgrad.
Differentiating the rule again may also need the gradient of an op that has none
yet (often the very op whose rule is being written, reached through ``ans``):
then the message says which.
"""
import numpy as np

from .. import backend
from ..autodiff.tape import GradientTape
from ..debug import rulecheck
from ..ops import sum as tg_sum
from ..tensor import Tensor, constant
from .compare import first_entries
from .feedback import Feedback
from .guard import read_only
from .student import dense

ATOL2, RTOL2 = 1e-5, 1e-4        # differences of differences


def differentiable_again(check, i, rule):
    """Differentiate phi = <rule(first, f(x), x), v> with the tape and by differences,
    with respect to each input and to the rule's first argument (g or x_dot)."""
    first = check.g if check.mode == "vjp" else _tangent_for(check, i)
    arrays = check.arrays + [read_only(first)]
    result_shape = check.arrays[i].shape if check.mode == "vjp" else check.out_shape
    v = check.rng.standard_normal(result_shape)

    def phi(args):
        xs = [constant(a) for a in args[:-1]]
        r = dense(rule(constant(args[-1]), check.f(*xs), *xs))
        return [backend.xp.asarray(np.sum(np.asarray(r, dtype=np.float64) * v))]
    xs = [constant(a) for a in check.arrays]
    g_tensor = constant(arrays[-1])
    with GradientTape() as tape:
        tape.watch(xs + [g_tensor])
        ans = check.f(*xs)
        f_ops = {node.op for node in tape.recorded_nodes()}
        r = dense(rule(g_tensor, ans, *xs))
        phi_by_tape = tg_sum(r * constant(v)) if isinstance(r, Tensor) else None
    if phi_by_tape is None:
        return _not_again(i, "it returned a numpy array, not a teachgrad tensor")
    without_rule = list(dict.fromkeys(
        node.op for node in tape.recorded_nodes()
        if node.op.differentiable and node.op.vjp_rules is None and node.op.vjp_all is None))
    try:
        tape_grads = tape.gradient(phi_by_tape, xs + [g_tensor],
                                   unconnected_gradients="zero")
    except LookupError:
        if not without_rule:
            raise
        return _no_rule(check, i, without_rule, f_ops)
    for k, a in enumerate(arrays):
        numeric = np.array(rulecheck.numeric_vjp_entries(
            phi, arrays, k, [backend.xp.ones(())], rulecheck.scale_of(a), check.h,
            a.size)).reshape(a.shape)
        by_tape = np.asarray(backend.to_numpy(dense(tape_grads[k]).value),
                             dtype=np.float64)
        if _disagree(check, k, by_tape, numeric):
            what = f"input {k}" if k < len(check.arrays) else \
                ("g" if check.mode == "vjp" else "x_dot")
            return _not_again(i, f"its result changes with {what} in a way the tape does "
                                 f"not see (by the tape {first_entries(by_tape)}, by "
                                 f"differences {first_entries(numeric)})")
    return None


def _disagree(check, k, by_tape, numeric):
    """Do the tape's and the differences' derivatives of phi by argument ``k`` differ
    (apart from at a kink of f, where a VJP rule jumps)?"""
    off = ~np.isclose(by_tape, numeric, atol=ATOL2 * (1 + np.abs(numeric).max(
        initial=0)), rtol=RTOL2)
    if k < len(check.arrays) and check.mode == "vjp":
        for flat in np.flatnonzero(off):   # a kink of f: its rule jumps there
            at = tuple(int(j) for j in np.unravel_index(int(flat), off.shape))
            if check._kink(k, at) is not None:
                off[at] = False
    return bool(off.any())


def _no_rule(check, i, ops, f_ops):
    """The tape met ``ops``, which have no VJP rule, while differentiating the rule."""
    names = " and ".join(op.name for op in ops)
    kind = "an op" if len(ops) == 1 else "ops"
    if all(op in f_ops for op in ops):
        # Usually the op the student is writing this rule for: it has none yet.
        fix = ("Register your rule with tg.ops.defvjp and check again" if check.mode == "vjp"
               else f"Give {names} a VJP rule (tg.ops.defvjp) and check again")
        why = (f"it uses ans, which f computes with {names}, {kind} with no gradient rule "
               f"yet, so the tape cannot differentiate through ans. {fix}, or write the "
               f"rule in terms of the inputs instead of ans")
    else:
        why = (f"it uses {names}, {kind} with no gradient rule, so the tape cannot "
               f"differentiate through it. Give {names} a rule (tg.ops.defvjp), or write "
               f"the rule with teachgrad ops that have one")
    return Feedback("no_gradient_rule", f"the rule for input {i} gives the right values, "
                    f"but cannot be differentiated again: {why}.", i)

def _tangent_for(check, i):
    return check.rng.standard_normal(tuple(check.arrays[i].shape))

def _not_again(i, why):
    return Feedback("not_differentiable_again", f"the rule for input {i} gives the right "
                    f"values, but cannot be differentiated again: {why}. Part of it was "
                    f"computed outside teachgrad (with numpy, or via .numpy()), so autodiff "
                    f"cannot differentiate it again. "
                    f"Second derivatives, and forward mode by transposing the rule, would "
                    f"be wrong. Write it with teachgrad ops (tg.cos, not np.cos).", i)
