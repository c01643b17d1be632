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
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import validate
from ..ops.core.apply import unobserved
from . import hooks, rulecheck
from .op_check import check_op, failure_message
from .report import html_table


class GradientRuleError(AssertionError):
    """An op's VJP or JVP rule disagrees with finite differences. ``.check`` has the details."""

    def __init__(self, message, check):
        super().__init__(message)
        self.check = check


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
