"""``tg.debug.verify_gradients()``: check every op's derivative rules while a model runs.

A wrong VJP rule does not crash anything: the model trains, just badly. Inside

    with tg.debug.verify_gradients():
        loss = model(x)
        grads = tape.gradient(loss, params)

each op that runs (forward ops, the ops of the backward pass, the nodes of
graphs run by a Session) is checked at the very inputs it ran on: its VJP
rule against central finite differences and, when it has a native JVP rule,
that rule too, through the dot-product identity ``<J t, u> = <t, J^T u>``
(see ``rulecheck``). The first op whose rule is off raises
``GradientRuleError`` with the line of your code that made the op and the
rule's own location. Ops it cannot judge are skipped with a note, never
blamed: ops without a derivative (comparisons, ``stop_gradient``), integer
inputs, points where the function has a kink (relu or abs at 0, ties in a
max), points where a small step leaves the function's domain, and control-flow
nodes (their body's ops are checked one by one as they run). A custom gradient
is checked as an op of its arguments: the decorated function, run again at
nearby points, against its grad_fn (gradients for Variables it reads are not).

The finite differences run on float64 copies, never on your arrays, and
nothing the check computes is recorded on your tapes or graphs.
"""
import contextlib
import inspect
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .. import validate
from ..autodiff.custom import checkable, custom_gradient_p
from ..autodiff.rule_calls import call_vjp
from ..autodiff.forward import jvp_of
from ..ops import IndexedSlices
from ..ops.core import Node
from ..state import state, unobserved
from ..tensor import Tensor
from . import hooks, rulecheck
from .report import html_table

#: Ops whose rules cannot be checked from the op alone, and why.
UNCHECKABLE = {
    "call": "a tg.function call: the ops of its graph are checked one by one as it runs",
    "While": "a while loop: the ops of its body are checked one by one as they run",
    "If": "a cond: the ops of the branch that runs are checked one by one",
}

#: How many entries of an input are differenced one at a time to find a wrong entry.
ENTRY_LIMIT = 256


class GradientRuleError(AssertionError):
    """An op's VJP or JVP rule disagrees with finite differences. ``.check`` has the details."""

    def __init__(self, message, check):
        super().__init__(message)
        self.check = check


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


@dataclass
class VerificationReport:
    """What ``verify_gradients`` found: one ``RuleCheck`` per op it judged or skipped
    with a note, plus counts of the ops with no derivative to check."""
    checks: list = field(default_factory=list)
    not_differentiable: dict = field(default_factory=dict)   # op name -> count

    @property
    def failures(self):
        return [c for c in self.checks if c.status == "wrong"]

    @property
    def passed(self):
        return [c for c in self.checks if c.status == "ok"]

    @property
    def skipped(self):
        return [c for c in self.checks if c.status == "skipped"]

    def __str__(self):
        lines = [f"verify_gradients: {len(self.passed)} ops right, {len(self.failures)} "
                 f"wrong, {len(self.skipped)} skipped with a note"]
        lines += ["  " + str(c) for c in self.checks if c.status != "ok"]
        if self.not_differentiable:
            counts = ", ".join(f"{k} x{v}" for k, v in self.not_differentiable.items())
            lines.append(f"  without a derivative to check: {counts}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        rows = [(c.status, c.node, c.op, str(c.source or ""), c.note) for c in self.checks]
        return (f"<p><b>verify_gradients</b>: {len(self.passed)} right, "
                f"{len(self.failures)} wrong, {len(self.skipped)} skipped</p>"
                + html_table(("status", "node", "op", "made at", "note"), rows))


class VerifyCheck(hooks.Check):
    """The check behind ``verify_gradients``."""

    def __init__(self, report, raise_on_failure, seed, custom_gradients=True):
        self.report = report
        self.raise_on_failure = raise_on_failure
        self.rng = np.random.default_rng(seed)
        self.custom_gradients = custom_gradients

    def check_eager(self, node):
        self._check(node, [x.value for x in node.inputs])

    def check_graph_run(self, node, inputs, outputs):
        self._check(node, list(inputs))

    def _check(self, node, arrays):
        op = node.op
        if not op.differentiable or not any(rulecheck.is_float(a) for a in arrays):
            counts = self.report.not_differentiable
            counts[op.name] = counts.get(op.name, 0) + 1
            return
        # The check's own evaluations (steps off the input, a mean of an empty slice)
        # must not warn about what the user's code never did.
        with unobserved(), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = check_op(op, arrays, node.params, self.rng, node, self.custom_gradients)
        if result is None:
            return
        self.report.checks.append(result)
        if result.status == "wrong" and self.raise_on_failure:
            raise GradientRuleError(failure_message(result, op), result)


@contextlib.contextmanager
def verify_gradients(raise_on_failure=True, seed=0, custom_gradients=True):
    """Check every op's VJP (and native JVP) rule as it runs, against finite differences.

    Args:
      raise_on_failure: raise ``GradientRuleError`` at the first wrong rule
        (the default); with False, run on and read the report afterwards.
      seed: for the random directions and cotangents (the same seed, the same checks).
      custom_gradients: check the grad_fn of each ``tg.custom_gradient`` function too,
        against finite differences of the function it stands for (the default: a
        student's own rule is where a wrong gradient most often comes from); with
        False they are skipped with a note.

    Yields a ``VerificationReport`` that fills in as ops run.
    """
    where = "tg.debug.verify_gradients"
    raise_on_failure = validate.boolean(raise_on_failure, "raise_on_failure", where)
    custom_gradients = validate.boolean(custom_gradients, "custom_gradients", where)
    seed = validate.integer(seed, "seed", where, minimum=0)
    report = VerificationReport()
    with hooks.installed(VerifyCheck(report, raise_on_failure, seed, custom_gradients)):
        yield report


def _skip(named, op, note):
    return RuleCheck(named.name, op.name, "skipped", hooks.source_of(named), note)


def check_op(op, arrays, params, rng, named, custom_gradients=True):
    """Judge ``op``'s rules at ``arrays``; ``named`` is the node to report it as."""
    if op is custom_gradient_p and not custom_gradients:
        return _skip(named, op, "a custom gradient: its op holds the result, not the function, "
                                "so there is nothing to difference (check the function with "
                                "tg.gradcheck)")
    if op is custom_gradient_p:   # judged as the function of its arguments it stands for
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
    arrays = [rulecheck.float64_copy(a) for a in arrays]

    def evaluate(args):
        out = op.forward(*args, **params)
        return list(out) if op.multiple_results else [out]
    base = evaluate(arrays)
    float_out = [b for b in base if rulecheck.is_float(b)]
    if not float_out:
        return None
    if not all(bool(rulecheck.xp().isfinite(b).all()) for b in float_out):
        return _skip(named, op, "its outputs are not all finite here")
    h, out_eps = rulecheck.step_size([b.dtype for b in float_out])
    node = Node(op, tuple(Tensor(a) for a in arrays), tuple(Tensor(b) for b in base), params)
    u = [rulecheck.random_like(b, rng) if rulecheck.is_float(b) else None for b in base]
    needed = [rulecheck.is_float(a) for a in arrays]
    try:
        grads = call_vjp(node, [None if c is None else Tensor(c) for c in u], needed)
    except ValueError as error:   # the engine's shape check
        return _wrong(named, op, "VJP", (), str(error))
    grads = [g.to_dense() if isinstance(g, IndexedSlices) else g for g in grads]
    native = op.jvp is not None and state.native_jvp

    inputs = []
    for i, a in enumerate(arrays):
        if not needed[i]:
            continue
        scale = rulecheck.scale_of(a)
        t = rulecheck.random_like(a, rng) * scale
        g = rulecheck.xp().zeros_like(a) if grads[i] is None else grads[i].value
        claims = {"VJP": (rulecheck.inner(t, g), rulecheck.abs_inner(t, g))}
        jt_rule = None
        if native:
            tangents = [None] * len(arrays)
            tangents[i] = Tensor(t)
            jt_rule = [None if y is None else y.value for y in jvp_of(node, tangents)]
            pairs = [(c, y) for c, y in zip(u, jt_rule) if c is not None and y is not None]
            claims["JVP"] = (sum(rulecheck.inner(c, y) for c, y in pairs),
                             sum(rulecheck.abs_inner(c, y) for c, y in pairs))
        verdicts, numeric, diff = rulecheck.judge(claims, evaluate, arrays, i, t, u, base, h,
                                                  out_eps)
        inputs.append(InputCheck(i, claims["VJP"][0], claims.get("JVP", (None,))[0], numeric,
                                 verdicts["VJP"], verdicts.get("JVP")))
        wrong = [name for name in claims if verdicts[name] == "wrong"]
        if wrong:
            entry = _wrong_vjp_entry(evaluate, arrays, i, u, g, scale, h) if "VJP" in wrong \
                else _wrong_jvp_entry(jt_rule, diff.jt)
            return _wrong(named, op, " and ".join(wrong), tuple(inputs), entry)
        if "domain" in verdicts.values():
            return _skip(named, op, f"a small step of input {i} leaves the function's domain "
                                    f"(the outputs stop being finite): no finite differences")
        if "kink" in verdicts.values():
            return _skip(named, op, f"not differentiable at this point along input {i} "
                                    f"(a kink: relu or abs at 0, a tie in max or min); the "
                                    f"one-sided slopes differ")
    return RuleCheck(named.name, op.name, "ok", hooks.source_of(named), "", tuple(inputs))


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

