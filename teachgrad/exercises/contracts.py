"""Each lesson exercise's contract, declared once: what the answer is, what it is called on,
and what it must not do. A check cell runs ``tg.exercises.check_exercise(name)``
(``lessons``), and every guard comes from the contract, so a new exercise cannot skip one.

    CONTRACT = Contract("jacobian_forward", lesson=13, number=3, kind="function",
                        expect="a function (f, x) returning the Jacobian of f at x",
                        check=_check_jacobian, forbidden={...}, accepted={...})
    register_contract(CONTRACT)

(the lessons' own are in ``lesson12``, ``lesson13``, ..., gathered by ``lessons``).
``kind`` says what the student gives: ``"function"`` (called by the check on fresh inputs
it makes, of at least two sizes, after the answer was defined; see ``calls``),
``"rule"`` (a batching or gradient rule the check installs and runs) or ``"prediction"``
(a value made of the ``words`` the exercise allows) or ``"value"`` (a number or tensor the
student computes in the exercise cell). ``check`` may be None: the check cell is then the
lesson's own code, which fetches the answer with ``answer(name)``; several answers may share
one check cell. ``needs`` names the earlier answers
the check runs too, with their exercise numbers, so that a stub reached from here says
which exercise to write first. ``forbidden`` and ``accepted`` are examples, as source
code run in the lesson's namespace: answers that break the contract in a way the values
alone would not show (one bind per example where one call is asked; reverse mode where
forward is asked), and answers the lesson's text accepts. The fooler test
(tests/test_exercise_foolers.py) runs every contract against both, and against the whole
catalogue of foolers, so a new contract is covered without a new test.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional

KINDS = ("function", "rule", "prediction", "value")


@dataclass(frozen=True)
class Contract:
    """One lesson exercise: see the module's docstring.

    Attributes:
      name: the name the student's answer has in the lesson.
      lesson, number: the lesson, and the exercise's number in it.
      kind: one of ``KINDS``.
      expect: what the answer is, in words (the messages repeat it).
      cell: the nbgrader grade_id of the exercise's check cell.
      check: ``check(lesson)`` runs the check (``lesson``: the notebook's globals);
        returns a sentence for a right answer, raises ``NotYet`` otherwise. None: the check
        cell is the lesson's own code.
      words: for a prediction, the words it is made of.
      needs: ``((name, number), ...)``: earlier exercises' answers the check runs.
      returns: what a function answer returns, or what a prediction or value is: one of
        ``kinds.RETURNS`` ("number", "tensor", "dict", ...), checked before the values are;
        None: the check says it.
      forbid: names of ``teachgrad`` functions the answer may not call (``"hvp"``).
      forbidden: ``{what it does: source}``: answers that must fail.
      accepted: ``{what it does: source}``: other right answers, which must pass.
    """
    name: str
    lesson: int
    number: int
    kind: str
    expect: str
    cell: str
    check: Optional[Callable] = None
    words: tuple = ()
    needs: tuple = ()
    returns: Optional[str] = None
    forbid: tuple = ()
    forbidden: dict = field(default_factory=dict)
    accepted: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"A contract's kind is one of {KINDS}, not {self.kind!r}.")

    def __repr__(self):
        return f"<contract {self.name}: lesson {self.lesson}, exercise {self.number}>"


_CONTRACTS = {}


def register_contract(contract):
    """Add ``contract`` (a ``Contract``) to the catalogue; returns it. Names are unique."""
    if not isinstance(contract, Contract):
        raise TypeError(f"register_contract takes a Contract, not {type(contract).__name__}.")
    if contract.name in _CONTRACTS and _CONTRACTS[contract.name] != contract:
        raise ValueError(f"There is already a contract for {contract.name!r}.")
    _CONTRACTS[contract.name] = contract
    return contract


def registered():
    """``{name: contract}`` of every registered contract (a copy)."""
    return dict(_CONTRACTS)
