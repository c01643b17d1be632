"""``tg.debug.check_numerics()``: stop at the first op that makes a NaN or an inf.

A NaN spreads: once one entry is NaN, every value computed from it is NaN too,
so by the time the loss prints ``nan`` the op that started it is long gone.
Inside ``with tg.debug.check_numerics():`` every op's floating-point outputs
are checked as soon as it runs, in the forward pass, in the backward pass
(the ops that VJP rules run), and in graphs run by a Session; the first one
holding a NaN or an inf raises ``NumericsError``, which names

* the op, and the line of your code that made it (for an op of the backward
  pass: the forward op whose VJP rule made it, and that op's line);
* each input's shape, range, and how many NaNs and infs it holds;
* the likely reason.

    x = tg.constant([1.0, 0.0])
    with tg.debug.check_numerics():
        y = tg.log(x)            # NumericsError: log produced -inf ...

When the block is not running, nothing is checked and nothing is paid.
"""
import contextlib

import numpy as np

from .. import backend
from . import hooks
from .summary import summarize


class NumericsError(FloatingPointError):
    """An op produced a NaN or an inf while ``check_numerics`` was on.

    Attributes:
      node: the op's Node (``node.name``, ``node.op.name``, ``node.inputs``).
      phase: ``"forward"`` or ``"backward"`` (an op a VJP rule ran).
      inputs, outputs: an ``ArraySummary`` of each.
      source: the ``SourceLine`` of user code that made the op, if known.
      forward_node: for a backward op, the forward node whose rule made it.
    """

    def __init__(self, message, node, phase, inputs, outputs, source, forward_node):
        super().__init__(message)
        self.node = node
        self.phase = phase
        self.inputs = inputs
        self.outputs = outputs
        self.source = source
        self.forward_node = forward_node


#: Why an op with finite inputs could make a NaN or an inf in the forward pass, and
#: what to do. A forward value is fixed by computing it differently (a stable form,
#: a clipped or shifted input): a custom gradient changes only the backward pass.
_DOMAIN_HINTS = {
    "log": "log(0) is -inf and the log of a negative number is NaN; keep the input "
           "positive (tg.maximum(x, eps)), or rewrite in a stable form (tg.log1p(x) for "
           "log(1 + x), tg.log_softmax for log(softmax)).",
    "log1p": "log1p(-1) is -inf and log1p below -1 is NaN; keep the input above -1 (clip "
             "it), or rewrite in a stable form.",
    "sqrt": "the square root of a negative number is NaN; clip the input at 0 "
            "(tg.maximum(x, 0.0)) if it is negative only by rounding.",
    "divide": "x / 0 is inf, and 0 / 0 is NaN; keep the divisor away from 0 (add an "
              "epsilon, or tg.where(d == 0, 1.0, d) and handle that case separately).",
    "power": "0 to a negative power is inf, and a negative base to a fractional power "
             "is NaN; keep the base in the domain (clip it, or take tg.abs(x) if the sign "
             "does not matter).",
    "exp": "exp overflows to inf above about 709.78 in float64 and 88.72 in float32; "
           "rewrite the computation in a stable form that never makes the huge value "
           "(tg.logsumexp for log(sum(exp(x))); tg.maximum(x, 0) + tg.log1p(tg.exp(-|x|)) "
           "for log(1 + exp(x)), the softplus), or clip the input (tg.minimum(x, 80.0)).",
}
_OVERFLOW_HINT = ("the inputs are finite, so the result overflowed: the values are too "
                  "large for {dtype} (its largest is about {big:.3g}); compute in a stable "
                  "form (e.g. in log space), or rescale or clip the inputs{wider}.")


def _float_arrays(values):
    return [(i, v) for i, v in enumerate(values) if v.dtype.kind == "f"]


def _all_finite(array):
    return bool(backend.xp.isfinite(array).all())


class NumericsCheck(hooks.Check):
    """The check behind ``check_numerics``: every float output must be finite."""

    def check_eager(self, node):
        for out in node.outputs:
            if out.dtype.kind == "f" and not _all_finite(out.value):
                raise _error(node, [x.value for x in node.inputs],
                             [y.value for y in node.outputs])

    def check_graph_run(self, node, inputs, outputs):
        for out in outputs:
            if getattr(out, "dtype", None) is not None and out.dtype.kind == "f" \
                    and not _all_finite(out):
                raise _error(node, inputs, outputs)


@contextlib.contextmanager
def check_numerics():
    """Raise ``NumericsError`` at the first op (forward or backward) making a NaN or inf.

    numpy's own "invalid value" and "divide by zero" warnings are silenced in
    the block: the error says more. Yields the check object (rarely needed).
    Also usable as a decorator.
    """
    with np.errstate(all="ignore"), hooks.installed(NumericsCheck()) as check:
        yield check


def _error(node, inputs, outputs):
    in_summaries = [summarize(x) for x in inputs]
    out_summaries = [summarize(y) for y in outputs]
    forward = node.grad_of
    phase = "backward" if forward is not None else "forward"
    source = hooks.source_of(node)
    bad = next(s for s in out_summaries if not s.finite)
    what = " and ".join(p for p, n in (("NaN", bad.nans), ("inf", bad.infs)) if n)
    lines = [f"check_numerics: {node.op.name} produced {what} in the {phase} pass "
             f"({bad.nans + bad.infs} of {int(np.prod(bad.shape, dtype=np.int64))} entries).",
             f"  op: {node.name} ({node.op.name})"]
    if source is not None:
        lines.append(f"  made at {source}")
    if forward is not None:
        lines.append(f"  made by the VJP rule of the forward op {hooks.describe(forward)}")
    for i, s in enumerate(in_summaries):
        lines.append(f"  input {i}: {s}")
    for i, s in enumerate(out_summaries):
        lines.append(f"  output {i}: {s}")
    lines.append("  Why: " + _reason(node, in_summaries, out_summaries, forward))
    return NumericsError("\n".join(lines), node, phase, in_summaries, out_summaries, source,
                         forward)


def _reason(node, inputs, outputs, forward):
    with_nan = [i for i, s in enumerate(inputs) if s.nans]
    if with_nan:
        return (f"input {with_nan[0]} already holds NaN: this op only passed it on. It came "
                f"from outside the checked code (a constant, a fed value, a Variable, or an "
                f"op run before check_numerics was on).")
    with_inf = [i for i, s in enumerate(inputs) if s.infs]
    if with_inf:
        return (f"input {with_inf[0]} is already infinite (inf - inf, 0 * inf and inf / inf "
                f"are NaN); look for where that inf came from.")
    if forward is not None:
        if forward.op.name == "custom_gradient":
            name = (forward.params or {}).get("name", "")
            return (f"the grad_fn of custom_gradient function {name} made it from finite "
                    f"values: check its formula at these inputs, and guard "
                    f"its divisions, logs and square roots (tg.maximum(d, eps), or a "
                    f"tg.where that makes the input safe before the op).")
        return (f"the forward value of {forward.name} ({forward.op.name}) is finite but its "
                f"derivative is not there: e.g. sqrt and log have an infinite slope at 0, "
                f"and a tg.where that hides a NaN or inf branch in the forward pass still "
                f"multiplies it into the gradient. Fix the backward pass: give the function "
                f"a custom gradient (tg.custom_gradient) that is finite there, or formulate "
                f"it so the rule never sees the bad point (the double-where trick: "
                f"tg.where(ok, x, safe) before the op, tg.where(ok, y, fallback) after).")
    hint = _DOMAIN_HINTS.get(node.op.name)
    if hint is not None:
        return "the inputs are finite, so this op made it: " + hint
    dtype = next((s.dtype for s in outputs if not s.finite), "float64")
    wider = " (or compute in float64)" if np.finfo(dtype).bits < 64 else ""
    return _OVERFLOW_HINT.format(dtype=dtype, big=float(np.finfo(dtype).max), wider=wider)
