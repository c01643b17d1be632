"""What the exercise checker says back: right, or exactly what is wrong."""
import traceback
from dataclasses import dataclass
from typing import Optional

from ..debug.report import escape

#: The verdicts, in the order they are checked.
VERDICTS = {
    "right": "the rule is right",
    "raised": "the rule raised an exception",
    "stopped": "the rule ran too long, and the check stopped it",
    "wrong_count": "the rule returned the wrong number of results",
    "returned_none": "the rule returned None where there is a gradient",
    "wrong_type": "the rule returned something other than one tensor of numbers",
    "wrong_shape": "the rule's result has the wrong shape",
    "wrong_value": "the rule's result is wrong at some entry",
    "not_differentiable_again": "the rule is right, but cannot be differentiated again",
    "no_gradient_rule": "the rule is right, but differentiating it again needs the gradient "
                        "of an op that has no gradient rule",
}


class NotYet(AssertionError):
    """A check that is not passed yet; the message says what was expected and hints why.

    In a notebook the message is the whole of what shows: IPython asks an exception for
    ``_render_traceback_()`` before it draws a traceback, and a check's traceback (the
    frames inside teachgrad) would bury the one line that teaches. Where the student's
    own code raised the error that the message reports, the line of it is shown too.
    Outside IPython (pytest, a script) the traceback is the usual one.
    """

    def _render_traceback_(self):
        lines = [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]
        cause = self.__cause__
        if cause is not None and not isinstance(cause, NotYet) and cause.__traceback__:
            last = traceback.extract_tb(cause.__traceback__)[-1]
            lines.append(f"  (your code raised {type(cause).__name__} at line {last.lineno}"
                         f"{': ' + last.line if last.line else ''})")
        return lines


@dataclass(frozen=True)
class Feedback:
    """The verdict on a student's rule.

    ``bool(feedback)`` is True when the rule is right. In a notebook it shows as
    a green or red box; ``str`` gives the same text.

    Attributes:
      verdict: a key of ``VERDICTS``.
      message: what is wrong and what to do, in words.
      input_index: which input's rule (VJP) or which input's tangent (JVP).
      entry: the first wrong entry (of the input for a VJP, of the output for a JVP).
      got, expected: the rule's value and the right value at that entry.
    """
    verdict: str
    message: str
    input_index: Optional[int] = None
    entry: Optional[tuple] = None
    got: Optional[float] = None
    expected: Optional[float] = None

    @property
    def ok(self):
        return self.verdict == "right"

    def __bool__(self):
        return self.ok

    def __str__(self):
        return ("Right! " if self.ok else "Not yet: ") + self.message

    __repr__ = __str__

    def _repr_html_(self):
        color, mark = ("#1a7f37", "&#10004;") if self.ok else ("#b42318", "&#10008;")
        return (f"<div style='border-left:4px solid {color};padding:4px 8px'>"
                f"<span style='color:{color}'>{mark}</span> {escape(str(self))}</div>")

    def assert_right(self):
        """Raise ``NotYet`` (an AssertionError) with the message unless the rule is right:
        what a check cell calls."""
        if not self.ok:
            raise NotYet(str(self))
        return self
