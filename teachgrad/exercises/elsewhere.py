"""A rule checked at a second point that the check makes itself.

A rule that returns values computed once (the right cotangent at the exercise's point,
typed in or computed beforehand) is right at that point and nowhere else. So once a rule
is right at the given point, ``check_vjp`` and ``check_jvp`` check it again at a second
point: each input's entries scaled by up to 30%, signs and zeros kept (so the function's
domain is kept too: a logarithm's inputs stay positive, a kink at 0 stays there), with a
fresh cotangent. An input without a rule (None: data, such as a one-hot label) stays as
it is. Its random numbers are its own, so what the check said before is unchanged.
"""
import copy
from dataclasses import replace

import numpy as np

from .. import backend
from .guard import read_only


def at_another_point(check, i, rule):
    """None when the rule for input ``i`` is right at ``check``'s second point (or there
    is none: the function is not finite there); else its ``Feedback``, saying so."""
    if "_moved" not in check.__dict__:
        check._moved = _moved(check)
    moved = check._moved
    if moved is None:
        return None
    found = (moved._check_vjp if check.mode == "vjp" else moved._check_jvp)(i, rule)
    if found is None:
        return None
    return replace(found, message=f"the rule for input {i} is right at the given point, but "
                                  f"not at a second one the check chose: {found.message} A "
                                  f"rule computes from its arguments (the cotangent or "
                                  f"tangent, ans and the inputs), not from values computed "
                                  f"once.")


def _moved(check):
    rng = np.random.default_rng([check.seed, 1])
    moved = copy.copy(check)
    moved.__dict__.pop("_kinks", None)
    moved.arrays = [a if rule is None else backend.xp.asarray(read_only(
        np.asarray(backend.to_numpy(a)) * (1 + 0.3 * rng.uniform(-1, 1, a.shape))))
        for a, rule in zip(check.arrays, check.rules)]
    moved.ans = moved.evaluate(moved.arrays)[0]
    moved.g = read_only(rng.standard_normal(check.out_shape))
    if not np.isfinite(backend.to_numpy(moved.ans)).all() or \
            tuple(moved.ans.shape) != check.out_shape:
        return None
    return moved
