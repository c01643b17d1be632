"""The lessons' ready-made exercises: a function, a point, and what it teaches.

The points avoid kinks and the edges of each function's domain, and the
binary ops broadcast, so that forgetting to sum a broadcast cotangent shows.
"""
from dataclasses import dataclass
from typing import Callable

from .. import ops
from .check import check_jvp, check_vjp


@dataclass(frozen=True)
class Exercise:
    """Write the VJP (or JVP) rule of ``f``; ``check_vjp(*rules)`` says if it is right."""
    name: str
    f: Callable
    inputs: tuple
    task: str

    def check_vjp(self, *rules, seed=0):
        """One VJP rule ``rule(g, ans, *inputs)`` per input of ``f``."""
        return check_vjp(self.f, list(rules), list(self.inputs), seed=seed)

    def check_jvp(self, *rules, seed=0):
        """One JVP rule ``rule(x_dot, ans, *inputs)`` per input of ``f``."""
        return check_jvp(self.f, list(rules), list(self.inputs), seed=seed)

    def __repr__(self):
        return f"<exercise {self.name}: {self.task}>"


_EXERCISES = [
    Exercise("sin", ops.sin, ([0.3, 1.2, -2.0],), "d/dx sin x = cos x"),
    Exercise("exp", ops.exp, ([0.5, -1.0, 2.0],), "d/dx e^x = e^x (the output itself: use ans)"),
    Exercise("log", ops.log, ([0.5, 1.5, 4.0],), "d/dx ln x = 1/x"),
    Exercise("tanh", ops.tanh, ([0.3, -0.8, 1.5],), "d/dx tanh x = 1 - tanh^2 x (use ans)"),
    Exercise("sigmoid", ops.sigmoid, ([0.3, -2.0, 1.0],), "d/dx s(x) = s(x) (1 - s(x))"),
    Exercise("multiply", ops.multiply, ([[1.0], [2.0], [-1.5]], [0.5, -1.0, 3.0, 2.0]),
             "z = x * y with x of shape (3, 1) and y of shape (4,): both broadcast to (3, 4)"),
    Exercise("divide", ops.divide, ([[1.0, -2.0], [3.0, 0.5]], [2.0, -4.0]),
             "z = x / y, with y broadcast along the rows"),
    Exercise("matmul", ops.matmul, ([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]],
                                    [[0.5, 1.0], [2.0, -1.0], [1.5, 0.25]]),
             "C = A B: dA = dC B^T, dB = A^T dC"),
    Exercise("sum_rows", lambda x: ops.sum(x, axis=1), ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],),
             "y = x summed over axis 1: every entry of a row gets that row's cotangent"),
]

EXERCISES = {e.name: e for e in _EXERCISES}


def names():
    """The names of the ready-made exercises."""
    return list(EXERCISES)


def get(name):
    """The ready-made exercise called ``name``."""
    try:
        return EXERCISES[name]
    except KeyError:
        raise ValueError(f"No exercise called {name!r}; there are: "
                         f"{', '.join(EXERCISES)}.") from None
