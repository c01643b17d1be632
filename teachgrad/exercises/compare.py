"""Comparing a rule's result with finite differences, entry by entry, and saying
where it is off and what the difference looks like (a flipped sign, a constant
factor, a forgotten cotangent, the function where its derivative belongs).

A NaN or an infinity in the result is wrong wherever it stands: the comparison
asks "is it close?", so a NaN (never close to anything) cannot pass.
"""
import numpy as np

from .feedback import Feedback

ATOL, RTOL = 1e-6, 1e-5          # for first derivatives


def first_entries(array):
    """The first entries of ``array``, for a message."""
    flat = np.ravel(array)
    return f"{flat[0]:.6g}" if flat.size == 1 else np.array2string(flat[:4], precision=4)


def compare(got, expected, i, where, what, alternative, alternative_hint, kink=None,
             itself=None):
    """A wrong_value Feedback at the first entry that differs (None when all agree).

    ``kink(entry)`` gives the one-sided slopes where f has no derivative (abs at 0):
    there any value between them is right (a subgradient), and a value outside them
    gets a message about the kink. ``itself`` is g times f's own value (a hint).
    """
    tol = ATOL * (1 + float(np.abs(expected).max(initial=0))) + RTOL * np.abs(expected)
    bad = ~(np.abs(got - expected) <= tol)      # NaN is bad
    kinks = {}
    if kink is not None:
        for flat in np.flatnonzero(bad):
            entry = tuple(int(k) for k in np.unravel_index(int(flat), got.shape))
            sides = kink(entry)
            if sides is not None:
                kinks[entry] = sides
                low, high = sides
                slack = ATOL * (1 + abs(low) + abs(high))
                if low - slack <= got[entry] <= high + slack:
                    bad[entry] = False
    if not bad.any():
        return None
    entry = tuple(int(k) for k in np.unravel_index(int(np.argmax(bad)), got.shape)) \
        if got.ndim else ()
    if entry in kinks:
        low, high = kinks[entry]
        return Feedback("wrong_value", f"the rule for input {i} is wrong at {where} entry "
                        f"{entry}, where f has a kink (no derivative): the slopes on its two "
                        f"sides are {low:.6g} and {high:.6g}, so any value between them (a "
                        f"subgradient) is right there, but yours is {float(got[entry]):.6g}.",
                        i, entry, float(got[entry]), float(expected[entry]))
    hint = _hint(got, expected, alternative, alternative_hint)
    if not np.isfinite(got[entry]):
        hint = (" Not a number (NaN) or an infinity comes from 0/0, inf - inf, or a log or "
                "square root of a number below 0: which step of the rule makes it?")
    if not hint and itself is not None and np.allclose(got, itself, rtol=1e-4, atol=1e-8):
        hint = (" It looks like g times the function's own value (ans): the function where "
                "its derivative belongs (sin where cos belongs, say).")
    return Feedback("wrong_value", f"the rule for input {i} is wrong at {where} entry {entry}: "
                    f"it gives {float(got[entry]):.6g}, the right value ({what}, by "
                    f"finite differences) is {float(expected[entry]):.6g}; {int(bad.sum())} of "
                    f"{bad.size} entries differ.{hint}", i, entry, float(got[entry]),
                    float(expected[entry]))


def _hint(got, expected, alternative, alternative_hint):
    big = np.abs(expected) > 1e-8
    if big.any():
        ratio = got[big] / expected[big]
        if np.allclose(ratio, -1, rtol=1e-4):
            return " The sign is flipped."
        if np.isfinite(ratio).all() and abs(ratio.flat[0]) > 1e-8 and \
                np.allclose(ratio, ratio.flat[0], rtol=1e-4):
            return f" It is off by a factor of {ratio.flat[0]:.4g} everywhere."
    other = alternative()
    if np.allclose(got, other, rtol=1e-4, atol=1e-6):
        return f" It looks like {alternative_hint}."
    return ""
