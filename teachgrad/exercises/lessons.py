"""The lessons' exercises, each by its contract (``contracts``): ``contracts()`` lists them,
``contract(name)`` finds one, and a check cell runs ``check_exercise(name)``.
"""
import inspect

from . import lesson12, lesson13, lesson14, lesson15, lessons_early
from .contracts import registered

#: The modules that declare the lessons' contracts: each registers its own when imported.
LESSON_MODULES = (lessons_early, lesson12, lesson13, lesson14, lesson15)


def contracts():
    """Every lesson exercise's contract, in lesson and exercise order."""
    return sorted(registered().values(), key=lambda c: (c.lesson, c.number))


def contract(name):
    """The contract of the exercise whose answer is called ``name``."""
    try:
        return registered()[name]
    except KeyError:
        raise ValueError(f"No lesson exercise's answer is called {name!r}; there are: "
                         f"{', '.join(sorted(registered()))}.") from None


def check_exercise(name):
    """Run the check of the exercise whose answer is ``name`` on the answer the caller's
    cell sees (a notebook's globals), and print what it says; ``NotYet`` if not right."""
    frame = inspect.currentframe().f_back
    try:
        lesson = dict(frame.f_globals)
        lesson.update(frame.f_locals)
    finally:
        del frame
    print(contract(name).check(lesson))
