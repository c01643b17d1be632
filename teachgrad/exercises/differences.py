"""How a computed array differs from the right one, in a sentence: never a wall of numbers.

    say_difference(got, expected)
    # 'it is all zero'                        (a gradient that never arrived)
    # 'it is 1.5 times the right one'         (a constant factor)
    # 'it is the right one transposed'
    # 'rows 3-7 differ (of 48); row 3 is the first'
    # 'it holds nan (not a number) at 12 of its 305 entries'

Small arrays (``SHOWN`` entries or fewer) are shown beside the right values: the code that
computes them is the exercise, not the values.
"""
import numpy as np

SHOWN = 6


def close(got, expected, rtol=1e-6, atol=1e-9):
    return got.shape == expected.shape and np.allclose(got, expected, rtol=rtol, atol=atol)


def say_difference(got, expected, rtol=1e-6, atol=1e-9):
    """``got`` and ``expected`` (float or complex arrays of one shape, not close): what is
    off."""
    bad = ~np.isfinite(got)
    if bad.any():
        return (f"it holds nan or inf at {int(bad.sum())} of its {got.size} entries: 0/0, "
                f"inf - inf, or a log or square root of a number below 0, at which step?")
    if got.size <= SHOWN:
        return f"it came out as {_show(got)}, but should be {_show(expected)}"
    if not np.any(got) and np.any(expected):
        return "it is all zero (was the gradient cut off, or never added up?)"
    ratio = _factor(got, expected)
    if ratio is not None:
        return f"it is {ratio:.4g} times the right one"
    offset = got - expected
    if np.allclose(offset, offset.flat[0], rtol=1e-6, atol=atol):
        return f"it is the right one plus {_number(offset.flat[0]):.4g} everywhere"
    if got.ndim == 2 and got.shape[0] == got.shape[1] and close(got.T, expected, rtol, atol):
        return "it is the right one transposed"
    if got.ndim >= 1 and got.shape[0] > 1:
        rows = [i for i in range(got.shape[0])
                if not np.allclose(got[i], expected[i], rtol=rtol, atol=atol)]
        words = ("row", "rows") if got.ndim > 1 else ("entry", "entries")
        return (f"{_spans(rows, *words)} differ{'s' if len(rows) == 1 else ''} (of "
                f"{got.shape[0]}); the others are right")
    return "its values are off"


def _factor(got, expected):
    nonzero = np.abs(expected) > 1e-12
    if not nonzero.any() or np.any(np.abs(got[~nonzero]) > 1e-12):
        return None
    ratios = got[nonzero] / expected[nonzero]
    if np.allclose(ratios, ratios[0], rtol=1e-6) and not np.isclose(ratios[0], 1.0):
        return _number(ratios[0])
    return None


def _number(value):
    """A numpy scalar as a Python float, or a complex number where its imaginary part is
    not zero (complex results: lesson 15)."""
    value = complex(value)
    return value.real if abs(value.imag) <= 1e-12 * max(abs(value.real), 1.0) else value


def _spans(indices, word, words):
    """[3, 4, 5, 6, 7, 9] as 'rows 3-7 and 9' (``word`` for one, ``words`` for more)."""
    spans, start = [], None
    for k, i in enumerate(indices):
        if start is None:
            start = i
        if k + 1 == len(indices) or indices[k + 1] != i + 1:
            spans.append(f"{start}" if start == i else f"{start}-{i}")
            start = None
    shown = spans[:4] + (["more"] if len(spans) > 4 else [])
    joined = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]
    return f"{words if len(indices) > 1 else word} {joined}"


def _show(array):
    return f"{_number(array):.6g}" if array.ndim == 0 else np.array2string(array, precision=6)


def must_match(got, expected, about, hint=None, rtol=1e-6, atol=1e-9):
    """Raise ``NotYet`` saying how ``got`` differs from ``expected`` (arrays of one shape),
    unless they are close."""
    from .feedback import NotYet
    if close(got, expected, rtol, atol):
        return
    raise NotYet(f"Not yet: {about} is not right: {say_difference(got, expected, rtol, atol)}."
                 + (f" Hint: {hint}" if hint else ""))
