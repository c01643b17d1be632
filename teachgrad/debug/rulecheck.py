"""Derivative rules against central finite differences, on float64 copies.

A VJP rule computes ``J^T u`` and a JVP rule ``J t`` without ever forming the
Jacobian ``J`` of ``f`` at ``x``. Both can be checked against the function
itself with one pair of extra evaluations per input, along a random direction
``t`` and a random cotangent ``u``:

    <t, J^T u>  (VJP rule)   =   <J t, u>  (JVP rule)
                             ~=  <u, f(x + h t) - f(x - h t)> / 2h   (finite differences)

The first equality is the dot-product identity that makes a JVP the transpose
of a VJP; the second is the definition of the derivative. Where they disagree
the rule is wrong, unless ``f`` has a kink at ``x`` (relu or abs at 0, a tie in
a max), where no derivative exists: then the one-sided differences
``f(x + h t) - f(x)`` and ``f(x) - f(x - h t)`` disagree by an amount that does
not shrink with ``h``, and the point is skipped, not blamed.

``verify_gradients``, the exercises and ``local_jacobian`` share these helpers.
"""
from dataclasses import dataclass

import numpy as np

from .. import backend


def xp():
    return backend.xp


def is_float(array):
    return array.dtype.kind == "f"


def float64_copy(array):
    """A float64 copy of a float array (other dtypes are returned as they are)."""
    return xp().asarray(array, dtype=np.float64).copy() if is_float(array) else array


def inner(a, b):
    """<a, b> as a Python float."""
    return float(xp().sum(xp().asarray(a, dtype=np.float64) * b))


def abs_inner(a, b):
    """sum |a| |b|: the size of <a, b> before any cancellation."""
    return float(xp().sum(xp().abs(xp().asarray(a, dtype=np.float64) * b)))


def step_size(output_dtypes):
    """The finite-difference step: cube root of the least precise output's epsilon,
    the step that balances truncation against rounding for central differences."""
    eps = max((float(np.finfo(d).eps) for d in output_dtypes), default=float(np.finfo(np.float64).eps))
    return eps ** (1 / 3), eps


def scale_of(array):
    """How far each entry may move: relative to its own size, at most 1.

    A step relative to an entry keeps its sign, so a small step never leaves
    the domain of log or sqrt (log at 1e-12 is differenced at 1e-12 +- 6e-18);
    a step of at most 1 keeps a big entry where the function is nearly linear
    (exp at 700). Zeros move relative to the typical entry.
    """
    size = xp().abs(array)
    typical = float(xp().sqrt(xp().mean(size * size))) if size.size else 0.0
    floor = 1e-2 * typical if typical > 0 else 1e-2
    return xp().minimum(xp().where(size > 0, size, floor), 1.0)


def random_like(array, rng):
    """Standard normal entries shaped like ``array`` (a float64 array of the backend)."""
    return xp().asarray(rng.standard_normal(np.shape(array)))


@dataclass(frozen=True)
class Difference:
    """Central and one-sided differences of ``<u, f>`` along a direction, at step h."""
    central: float      # <u, f(x + h t) - f(x - h t)> / 2h
    forward: float      # <u, f(x + h t) - f(x)> / h
    backward: float     # <u, f(x) - f(x - h t)> / h
    size: float         # sum |u| |J t|, estimated: the scale of the terms
    noise: float        # how much rounding in f can move `central`
    finite: bool        # did f stay finite at x +- h t?
    jt: list            # the estimate of J t, one array per output (None for non-float)


def difference(evaluate, arrays, index, t, u, h, base, out_eps):
    """Differences of ``<u, evaluate(arrays)>`` when ``arrays[index]`` moves by ``h t``.

    ``base`` is ``evaluate(arrays)`` (already known), ``u`` one cotangent per output
    (None for outputs that are not floats).
    """
    def moved(sign):
        args = list(arrays)
        args[index] = arrays[index] + sign * h * t
        return evaluate(args)
    plus, minus = moved(1), moved(-1)
    central = forward = backward = size = noise = 0.0
    finite = True
    jt = []
    for u_k, p, m, b in zip(u, plus, minus, base):
        if u_k is None:
            jt.append(None)
            continue
        # Rounding moves each output entry by up to eps |f|, or by the spacing of the
        # subnormal numbers near 0 (float32 keeps no digits at all below 1e-45).
        tiny = float(np.finfo(p.dtype).smallest_subnormal) if p.dtype.kind == "f" else 0.0
        p, m = xp().asarray(p, dtype=np.float64), xp().asarray(m, dtype=np.float64)
        finite = finite and bool(xp().isfinite(p).all() and xp().isfinite(m).all())
        slope = (p - m) / (2 * h)
        jt.append(slope)
        central += inner(u_k, slope)
        forward += inner(u_k, (p - b) / h)
        backward += inner(u_k, (b - m) / h)
        size += abs_inner(u_k, slope)
        noise += 4 * (out_eps * (abs_inner(u_k, p) + abs_inner(u_k, m))
                      + 2 * tiny * float(xp().sum(xp().abs(u_k)))) / (2 * h)
    return Difference(central, forward, backward, size, noise, finite, jt)


def agrees(rule_value, numeric, scale, noise, rtol):
    """Is the rule's number within rounding and truncation of the numeric one?"""
    return abs(rule_value - numeric) <= rtol * scale + noise + 1e-300


def rtol_for(out_eps):
    """The relative tolerance: loose enough for float32 outputs, tight for float64."""
    return 1e-4 if out_eps <= np.finfo(np.float64).eps else 1e-2


def judge(claims, evaluate, arrays, index, t, u, base, h, out_eps):
    """Compare rules' numbers with finite differences along ``t``, weighted by ``u``.

    ``claims`` maps a rule's name to ``(value, size)``: its ``<t, J^T u>`` or
    ``<J t, u>``, and the sum of the absolute terms of that inner product.
    Returns ``(verdicts, numeric, difference)``: for each rule "ok", "wrong",
    "kink" (no derivative at this point) or "domain" (f is not finite at
    x +- h t). A disagreement is checked again with a 100 times smaller step (a
    kink close to ``x`` may lie inside the first step but not the second)
    before it counts.
    """
    rtol = rtol_for(out_eps)
    d = difference(evaluate, arrays, index, t, u, h, base, out_eps)
    if not d.finite:
        d = difference(evaluate, arrays, index, t, u, h / 1000, base, out_eps)
        if not d.finite:
            return {name: "domain" for name in claims}, None, d

    def fits(value, size, diff):
        return agrees(value, diff.central, max(size, diff.size), diff.noise, rtol)
    verdicts = {name: "ok" for name, (value, size) in claims.items() if fits(value, size, d)}
    if len(verdicts) == len(claims):
        return verdicts, d.central, d
    small = difference(evaluate, arrays, index, t, u, h / 100, base, out_eps)
    smaller = difference(evaluate, arrays, index, t, u, h / 400, base, out_eps)
    gap, gap_smaller = small.forward - small.backward, smaller.forward - smaller.backward
    for name, (value, size) in claims.items():
        if name in verdicts:
            continue
        if small.finite and fits(value, size, small):
            verdicts[name] = "ok"
            continue
        off = abs(value - small.central)
        # A kink: the one-sided slopes differ by an amount that does not shrink with
        # h (for a smooth f the gap is proportional to h) and that explains the mismatch.
        kink = (abs(gap) > small.noise and abs(gap) >= 0.1 * off
                and abs(gap_smaller) >= 0.5 * abs(gap))
        verdicts[name] = "kink" if kink else "wrong"
    return verdicts, small.central, small


def numeric_vjp_entries(evaluate, arrays, index, u, scale, h, limit):
    """Finite-difference ``J^T u`` for the first ``limit`` entries of input ``index``,
    one entry at a time (for pointing at the entry a rule gets wrong)."""
    values = []
    flat_scale = xp().reshape(scale, (-1,))
    for k in range(min(int(np.prod(np.shape(arrays[index]), dtype=np.int64)), limit)):
        e = xp().zeros(int(np.prod(np.shape(arrays[index]), dtype=np.int64)))
        e[k] = float(flat_scale[k])
        e = xp().reshape(e, np.shape(arrays[index]))
        step = h
        plus = _evaluate_moved(evaluate, arrays, index, e * step)
        minus = _evaluate_moved(evaluate, arrays, index, -e * step)
        total = 0.0
        for u_k, p, m in zip(u, plus, minus):
            if u_k is not None:
                total += inner(u_k, (xp().asarray(p, dtype=np.float64) - m) / (2 * step))
        values.append(total / float(flat_scale[k]))
    return values


def _evaluate_moved(evaluate, arrays, index, delta):
    args = list(arrays)
    args[index] = arrays[index] + delta
    return evaluate(args)
