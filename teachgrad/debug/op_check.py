"""Judging one op's rules at the inputs it ran on: the check behind
``tg.debug.verify_gradients`` (``verify.py``), and the text of its failures.

The op runs again on float64 copies of its inputs; its VJP rule gets a random
cotangent ``u`` and its native JVP rule (if any) a random direction ``t`` per input;
``rulecheck.judge`` compares ``<t, J^T u>`` and ``<J t, u>`` with central finite
differences. A wrong rule is then located to its first wrong entry.
"""
import inspect
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..autodiff.custom_op import checkable, custom_gradient_p
from ..autodiff.forward import jvp_of
from ..autodiff.rule_calls import call_vjp
from ..ops import IndexedSlices
from ..ops.core.op import Node
from ..state import state
from ..tensor import Tensor
from . import hooks, rulecheck

#: Ops whose rules cannot be checked from the op alone, and why.
UNCHECKABLE = {
    "call": "a tg.function call: the ops of its graph are checked one by one as it runs",
    "While": "a while loop: the ops of its body are checked one by one as they run",
    "If": "a cond: the ops of the branch that runs are checked one by one",
}

#: How many entries of an input are differenced one at a time to find a wrong entry.
ENTRY_LIMIT = 256


@dataclass(frozen=True)
class InputCheck:
    """The numbers for one input: along a random direction t, with a random cotangent u."""
    index: int
    vjp: float                 # <t, J^T u> from the VJP rule
    jvp: Optional[float]       # <J t, u> from the native JVP rule (None: JVP by transposition)
    numeric: Optional[float]   # <u, f(x + h t) - f(x - h t)> / 2h
    vjp_verdict: str           # "ok", "wrong", "kink", "domain"
    jvp_verdict: Optional[str]


@dataclass(frozen=True)
class RuleCheck:
    """The verdict on one op that ran."""
    node: str
    op: str
    status: str                        # "ok", "wrong" or "skipped"
    source: Optional[hooks.SourceLine]
    note: str = ""
    inputs: tuple = ()
    wrong_rule: Optional[str] = None   # "VJP", "JVP" or "VJP and JVP"
    entry: Optional[str] = None        # the first wrong entry, described
    rule_at: str = ""                  # file:line of the VJP rule judged (a grad_fn's own)

    def __str__(self):
        where = f" at {self.source}" if self.source is not None else ""
        text = f"{self.status:7s} {self.node} ({self.op}){where}"
        return f"{text}: {self.note}" if self.note else text


def _skip(named, op, note):
    return RuleCheck(named.name, op.name, "skipped", hooks.source_of(named), note)


def check_op(op, arrays, params, rng, named, custom_gradients=True):
    """Judge ``op``'s rules at ``arrays``; ``named`` is the node to report it as."""
    if op is custom_gradient_p:   # judged as the function of its arguments it stands for
        if not custom_gradients:
            return _skip(named, op, "a custom gradient: its op holds the result, not the "
                                    "function, so there is nothing to difference (check the "
                                    "function with tg.gradcheck)")
        view = checkable(params)
        if view is None:
            return _skip(named, op, "a custom gradient that is not meant to be the derivative "
                                    "(tg.grad_pass_through), or of a function without arguments")
        start = params["n_results"]
        op, arrays, params = view, arrays[start:start + params["n_args"]], {}
        if not any(rulecheck.is_float(a) for a in arrays):
            return None
    if op.name in UNCHECKABLE:
        return _skip(named, op, UNCHECKABLE[op.name])
    if op.vjp_rules is None and op.vjp_all is None:
        return _skip(named, op, "no gradient rule (a backward pass through it raises "
                                "LookupError)")
    if not all(bool(rulecheck.xp().isfinite(a).all()) for a in arrays if rulecheck.is_float(a)):
        return _skip(named, op, "its inputs are not all finite here")
    return _Trial(op, [rulecheck.float64_copy(a) for a in arrays], params, rng, named).run()


class _Trial:
    """One op run again at float64 copies of its inputs, its rules judged input by input."""

    def __init__(self, op, arrays, params, rng, named):
        self.op, self.arrays, self.params, self.rng, self.named = op, arrays, params, rng, named

    def evaluate(self, args):
        out = self.op.forward(*args, **self.params)
        return list(out) if self.op.multiple_results else [out]

    def run(self):
        op, named, arrays = self.op, self.named, self.arrays
        self.base = base = self.evaluate(arrays)
        float_out = [b for b in base if rulecheck.is_float(b)]
        if not float_out:
            return None
        if not all(bool(rulecheck.xp().isfinite(b).all()) for b in float_out):
            return _skip(named, op, "its outputs are not all finite here")
        self.h, self.out_eps = rulecheck.step_size([b.dtype for b in float_out])
        self.node = Node(op, tuple(Tensor(a) for a in arrays), tuple(Tensor(b) for b in base),
                         self.params)
        self.u = [rulecheck.random_like(b, self.rng) if rulecheck.is_float(b) else None
                  for b in base]
        needed = [rulecheck.is_float(a) for a in arrays]
        try:
            grads = call_vjp(self.node, [None if c is None else Tensor(c) for c in self.u],
                             needed)
        except ValueError as error:   # the engine's shape check
            return _wrong(named, op, "VJP", (), str(error))
        grads = [g.to_dense() if isinstance(g, IndexedSlices) else g for g in grads]
        self.native = op.jvp is not None and state.native_jvp
        inputs = []
        for i, a in enumerate(arrays):
            if needed[i]:
                verdict = self.judge_input(i, grads[i], inputs)
                if verdict is not None:
                    return verdict
        return RuleCheck(named.name, op.name, "ok", hooks.source_of(named), "", tuple(inputs))

    def judge_input(self, i, grad, inputs):
        """Append input ``i``'s InputCheck to ``inputs``; a RuleCheck if that settles the
        op (a wrong rule, or a point where it cannot be judged), else None."""
        op, named, a, u = self.op, self.named, self.arrays[i], self.u
        scale = rulecheck.scale_of(a)
        t = rulecheck.random_like(a, self.rng) * scale
        g = rulecheck.xp().zeros_like(a) if grad is None else grad.value
        claims = {"VJP": (rulecheck.inner(t, g), rulecheck.abs_inner(t, g))}
        jt_rule = None
        if self.native:
            jt_rule = self.native_jt(i, t)
            pairs = [(c, y) for c, y in zip(u, jt_rule) if c is not None and y is not None]
            claims["JVP"] = (sum(rulecheck.inner(c, y) for c, y in pairs),
                             sum(rulecheck.abs_inner(c, y) for c, y in pairs))
        verdicts, numeric, diff = rulecheck.judge(claims, self.evaluate, self.arrays, i, t, u,
                                                  self.base, self.h, self.out_eps)
        inputs.append(InputCheck(i, claims["VJP"][0], claims.get("JVP", (None,))[0], numeric,
                                 verdicts["VJP"], verdicts.get("JVP")))
        wrong = [name for name in claims if verdicts[name] == "wrong"]
        if wrong:
            entry = (_wrong_vjp_entry(self.evaluate, self.arrays, i, u, g, scale, self.h)
                     if "VJP" in wrong else _wrong_jvp_entry(jt_rule, diff.jt))
            return _wrong(named, op, " and ".join(wrong), tuple(inputs), entry)
        if "domain" in verdicts.values():
            return _skip(named, op, f"a small step of input {i} leaves the function's domain "
                                    f"(the outputs stop being finite): no finite differences")
        if "kink" in verdicts.values():
            return _skip(named, op, f"not differentiable at this point along input {i} "
                                    f"(a kink: relu or abs at 0, a tie in max or min); the "
                                    f"one-sided slopes differ")
        return None

    def native_jt(self, i, t):
        """J t from the op's native JVP rule, for a tangent ``t`` on input ``i`` alone."""
        tangents = [None] * len(self.arrays)
        tangents[i] = Tensor(t)
        return [None if y is None else y.value for y in jvp_of(self.node, tangents)]


def _wrong(named, op, rule, inputs, entry):
    return RuleCheck(named.name, op.name, "wrong", hooks.source_of(named),
                     f"the {rule} rule disagrees with finite differences", inputs, rule, entry,
                     _rule_location(op))


def _wrong_vjp_entry(evaluate, arrays, i, u, g, scale, h):
    """The first entry of input i where the VJP rule's J^T u is off."""
    numeric = rulecheck.numeric_vjp_entries(evaluate, arrays, i, u, scale, h, ENTRY_LIMIT)
    rule = np.asarray(rulecheck.backend.to_numpy(g), dtype=np.float64).ravel()
    top = max([abs(v) for v in numeric] + [float(np.abs(rule[:len(numeric)]).max(initial=0))])
    for k, value in enumerate(numeric):
        if abs(rule[k] - value) > 1e-4 * top + 1e-12:
            index = np.unravel_index(k, np.shape(arrays[i])) if np.ndim(arrays[i]) else ()
            return (f"input {i}, entry {tuple(int(j) for j in index)}: J^T u from the VJP rule "
                    f"is {rule[k]:.6g}, finite differences give {value:.6g}")
    return None


def _wrong_jvp_entry(rule, numeric):
    """The first output entry where the JVP rule's J t is off."""
    for out, (r, n) in enumerate(zip(rule, numeric)):
        if r is None or n is None:
            continue
        r = np.asarray(rulecheck.backend.to_numpy(r), dtype=np.float64)
        n = np.asarray(rulecheck.backend.to_numpy(n), dtype=np.float64)
        if r.shape != n.shape:
            return f"output {out}: the JVP rule gives shape {r.shape}, the output has {n.shape}"
        bad = np.abs(r - n) > 1e-4 * max(float(np.abs(n).max(initial=0)), 1e-300)
        if bad.any():
            index = np.unravel_index(int(np.argmax(bad)), n.shape) if n.ndim else ()
            return (f"output {out}, entry {tuple(int(j) for j in index)}: J t from the JVP rule "
                    f"is {float(r[index]):.6g}, finite differences give {float(n[index]):.6g}")
    return None


def _rule_location(op):
    rules = op.vjp_rules or (op.vjp_all,)
    places = []
    for rule in rules:
        code = getattr(inspect.unwrap(rule), "__code__", None)   # a grad_fn's own place
        if code is not None and f"{code.co_filename}:{code.co_firstlineno}" not in places:
            places.append(f"{code.co_filename}:{code.co_firstlineno}")
    return ", ".join(places)


def failure_message(check, op):
    """The text of a GradientRuleError."""
    lines = [f"verify_gradients: the {check.wrong_rule} rule of op '{op.name}' is wrong at the "
             f"inputs it ran on.", f"  op: {check.node} ({op.name})"]
    if check.source is not None:
        lines.append(f"  made at {check.source}")
    location = check.rule_at or _rule_location(op)
    if "VJP" in check.wrong_rule and location:
        lines.append(f"  its VJP rule is defined at {location}")
    for c in check.inputs:
        lines.append(f"  input {c.index}, along a random direction t with a random cotangent u:")
        lines.append(f"    <t, J^T u> from the VJP rule = {c.vjp:.8g}  ({c.vjp_verdict})")
        if c.jvp is not None:
            lines.append(f"    <J t, u> from the JVP rule   = {c.jvp:.8g}  ({c.jvp_verdict})")
        if c.numeric is not None:
            lines.append(f"    finite differences           = {c.numeric:.8g}")
    if check.entry:
        lines.append(f"  first wrong entry: {check.entry}")
    if check.inputs and check.inputs[-1].jvp is None:
        lines.append("  (its JVP comes from transposing the VJP rule, so it is off too)")
    if op.name == "custom_gradient":
        lines.append("  Fix the grad_fn that the tg.custom_gradient function returns "
                     "(tg.gradcheck checks the function on its own).")
    else:
        lines.append(f"  Fix the rule given to tg.ops.defvjp/defjvp for '{op.name}'; "
                     f"tg.exercises.check_vjp checks a rule on its own.")
    return "\n".join(lines)

