"""A registry of exercises: a function, a point, a task, and a hint for a wrong answer.

    ex = tg.exercises.get("sin")
    ex                                  # <exercise sin: Write the VJP rule of tg.sin ...>
    ex.check(lambda g, ans, x: g * tg.cos(x))

The task says what to write, never the answer; the hint is added to the message
of a wrong answer. An instructor adds exercises from their own package with
``register`` (``list()`` shows them all). The ready-made points avoid kinks and
the edges of each function's domain, and the binary ops broadcast, so that
forgetting to sum a broadcast cotangent shows.
"""
from dataclasses import dataclass, replace
from typing import Callable

from .. import nn, ops
from .check import check_jvp, check_vjp

KINDS = ("vjp", "jvp")


@dataclass(frozen=True)
class Exercise:
    """Write the VJP (or JVP) rules of ``f``; ``check(*rules)`` says whether they are right.

    Attributes:
      name: how ``get`` finds it.
      f: the function whose rules are written (a tensor function, one tensor out).
      inputs: the point to check at, one array-like per input of ``f``.
      task: what to write, in words (not the answer).
      hint: added to the feedback when the rules are not right yet.
      kind: ``"vjp"`` (rules ``rule(g, ans, *inputs)``) or ``"jvp"``
        (rules ``rule(x_dot, ans, *inputs)``).
      slips: common wrong rules, ``(input index, wrong rule, what to say)``: a rule
        that gives what a slip gives is told what it missed (``check_vjp``'s ``slips``).
    """
    name: str
    f: Callable
    inputs: tuple
    task: str
    hint: str = ""
    kind: str = "vjp"
    slips: tuple = ()

    def check(self, *rules, seed=0):
        """One rule per input of ``f``, of this exercise's kind."""
        return self.check_vjp(*rules, seed=seed) if self.kind == "vjp" \
            else self.check_jvp(*rules, seed=seed)

    def check_vjp(self, *rules, seed=0):
        """One VJP rule ``rule(g, ans, *inputs)`` per input of ``f``."""
        return self._with_hint(check_vjp(self.f, list(rules), list(self.inputs), seed=seed,
                                         slips=self.slips))

    def check_jvp(self, *rules, seed=0):
        """One JVP rule ``rule(x_dot, ans, *inputs)`` per input of ``f``."""
        return self._with_hint(check_jvp(self.f, list(rules), list(self.inputs), seed=seed))

    def _with_hint(self, feedback):
        if feedback or not self.hint:
            return feedback
        return replace(feedback, message=f"{feedback.message} Hint: {self.hint}")

    def __repr__(self):
        return f"<exercise {self.name}: {self.task}>"


def _vjp_task(what, rules="the VJP rule"):
    return f"Write {rules} of {what}."


def _conv2d_unturned(g, ans, x, w):
    """conv2d's input rule with the filters' channels swapped but the filters not turned:
    the slip lesson 11's exercise 4 warns of."""
    kh, kw = w.shape[0], w.shape[1]
    padded = ops.pad(g, [(0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1), (0, 0)])
    return nn.conv2d(padded, ops.transpose(w, (0, 1, 3, 2)), strides=1, padding="VALID")


def _conv2d_filters(g, x):
    """conv2d's filters' cotangent laid out (c, kh, kw, out): the images, batch and
    channels swapped, convolved with g as the filters."""
    images, as_filters = ops.transpose(x, (3, 1, 2, 0)), ops.transpose(g, (1, 2, 0, 3))
    return nn.conv2d(images, as_filters, strides=1, padding="VALID")


def _conv2d_filters_untransposed(g, ans, x, w):
    """The filters' rule without its last transpose back to (kh, kw, c, out)."""
    return _conv2d_filters(g, x)


def _conv2d_filters_turned(g, ans, x, w):
    """The filters' rule with the result turned by 180 degrees, as the input's is."""
    return ops.flip(ops.transpose(_conv2d_filters(g, x), (1, 2, 0, 3)), (0, 1))


_READY_MADE = [
    Exercise("sin", ops.sin, ([0.3, 1.2, -2.0],), _vjp_task("tg.sin"),
             "which function is the derivative of sin? And the chain rule multiplies by g."),
    Exercise("exp", ops.exp, ([0.5, -1.0, 2.0],), _vjp_task("tg.exp"),
             "the derivative of e^x is a value the rule is already given."),
    Exercise("log", ops.log, ([0.5, 1.5, 4.0],), _vjp_task("tg.log (the natural logarithm)"),
             "the derivative of ln x is a power of x."),
    Exercise("tanh", ops.tanh, ([0.3, -0.8, 1.5],), _vjp_task("tg.tanh"),
             "the derivative of tanh can be written with tanh itself, which the rule gets as "
             "ans."),
    Exercise("sigmoid", ops.sigmoid, ([0.3, -2.0, 1.0],), _vjp_task("tg.sigmoid"),
             "like tanh's, the sigmoid's derivative can be written with its own value, ans."),
    Exercise("multiply", ops.multiply, ([[1.0], [2.0], [-1.5]], [0.5, -1.0, 3.0, 2.0]),
             _vjp_task("z = x * y, for x of shape (3, 1) and y of shape (4,), which both "
                       "broadcast to (3, 4)", "the two VJP rules"),
             "each input's cotangent has that input's shape: add up the cotangents of the "
             "copies broadcasting made."),
    Exercise("divide", ops.divide, ([[1.0, -2.0], [3.0, 0.5]], [2.0, -4.0]),
             _vjp_task("z = x / y, with y of shape (2,) broadcast along the rows",
                       "the two VJP rules"),
             "x / y is x * y^-1; and y was broadcast along the rows."),
    Exercise("matmul", ops.matmul, ([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]],
                                    [[0.5, 1.0], [2.0, -1.0], [1.5, 0.25]]),
             _vjp_task("C = A @ B, for A of shape (2, 3) and B of shape (3, 2)",
                       "the two VJP rules"),
             "each cotangent has its input's shape, and g has C's: the shapes say which "
             "factor goes on which side, and which to transpose."),
    Exercise("sum_rows", lambda x: ops.sum(x, axis=1), ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],),
             _vjp_task("y = tg.sum(x, axis=1) for x of shape (2, 3)"),
             "every entry of a row added once to its row's sum."),
    Exercise("conv2d", lambda x, w: nn.conv2d(x, w, strides=1, padding="VALID"),
             ([[[[0.5, -1.0], [1.5, 0.2], [-0.3, 0.8], [1.0, -2.0]],
                [[0.0, 0.4], [-1.2, 1.1], [0.7, -0.6], [2.0, 0.3]],
                [[-0.9, 1.3], [0.6, -0.1], [1.4, 0.9], [-0.5, -1.5]]]],
              [[[[0.3, -0.2, 1.0], [0.5, 0.1, -0.4]], [[-1.0, 0.6, 0.2], [0.8, -0.3, 0.7]]],
               [[[0.4, 0.9, -0.5], [-0.7, 0.2, 0.1]], [[1.2, -0.8, 0.3], [0.0, 0.5, -1.1]]]]),
             _vjp_task("y = tg.nn.conv2d(x, w, strides=1, padding='VALID'), for x of shape "
                       "(1, 3, 4, 2) and w of shape (2, 2, 2, 3), with teachgrad ops",
                       "the two VJP rules"),
             "each is a convolution again: for x, g padded by the filter's size less one, "
             "with the filters turned by 180 degrees and their channels swapped; for w, the "
             "images with g as the filters, batch and channels trading places.",
             slips=((0, _conv2d_unturned, "It is what the convolution gives with the filters "
                     "not turned by 180 degrees: in the backward pass the taps are counted "
                     "backwards (p' = kh - 1 - p), so flip the filters along their height and "
                     "width (tg.flip(w, (0, 1))) as well as swapping their channels."),
                    (1, _conv2d_filters_untransposed, "It is the filters' cotangent laid out "
                     "(c, kh, kw, out), as the convolution of the images with g gives it: "
                     "put it back in w's layout (kh, kw, c, out) with "
                     "tg.transpose(grad, (1, 2, 0, 3))."),
                    (1, _conv2d_filters_turned, "It is the filters' cotangent turned by 180 "
                     "degrees: only the input's rule turns the filters; the filters' rule "
                     "convolves the images with g as it is."))),
    Exercise("sin_jvp", ops.sin, ([0.3, 1.2, -2.0],), _vjp_task("tg.sin", "the JVP rule"),
             "a JVP rule maps the input's tangent x_dot to the output's: the local derivative "
             "times x_dot.", kind="jvp"),
    Exercise("multiply_jvp", ops.multiply, ([[1.0], [2.0], [-1.5]], [0.5, -1.0, 3.0, 2.0]),
             _vjp_task("z = x * y, for x of shape (3, 1) and y of shape (4,)",
                       "the two JVP rules (each input's contribution to z's tangent)"),
             "each contribution has the output's shape (3, 4): the product rule, one term per "
             "input.", kind="jvp"),
]

_REGISTRY = {}


def register(exercise=None, *, name=None, f=None, inputs=None, task=None, hint="",
             kind="vjp", replace_existing=False):
    """Add an exercise to the registry (from a course's own package, say).

    Pass an ``Exercise``, or its fields: ``register(name="cube", f=cube, inputs=([1.0, 2.0],),
    task="Write the VJP rule of cube.", hint="3 x^2 is only half of it.")``.
    Returns the exercise. A name already taken is an error unless
    ``replace_existing=True``.
    """
    if exercise is None:
        if name is None or f is None or inputs is None or task is None:
            raise ValueError("register needs an Exercise, or name=, f=, inputs= and task=.")
        exercise = Exercise(name, f, tuple(inputs), task, hint, kind)
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register takes a tg.exercises.Exercise, not "
                        f"{type(exercise).__name__}.")
    if exercise.kind not in KINDS:
        raise ValueError(f"An exercise's kind is one of {KINDS}, not {exercise.kind!r}.")
    if exercise.name in _REGISTRY and not replace_existing:
        raise ValueError(f"There is already an exercise called {exercise.name!r}; pass "
                         f"replace_existing=True to replace it.")
    _REGISTRY[exercise.name] = exercise
    return exercise


def unregister(name):
    """Remove the exercise called ``name`` from the registry."""
    get(name)
    del _REGISTRY[name]


def names():
    """The names of the registered exercises, in the order they were registered."""
    return list(_REGISTRY)


def exercises():
    """The registered exercises, each showing its task; ``tg.exercises.list()`` too."""
    return list(_REGISTRY.values())


def get(name):
    """The registered exercise called ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"No exercise called {name!r}; there are: "
                         f"{', '.join(_REGISTRY)}.") from None


for _exercise in _READY_MADE:
    register(_exercise)
