"""A program's formula: its steps written back as one line of math, for people.

The drawing of an optimised graph labels a fused node with it
(``fused: tanh(x0 + x1)``), so a student can read what the node computes
without reading its steps. A result used twice is named first
(``s0 = tanh(x0); (1 - s0 * s0) * x1``), and parentheses keep the order of
evaluation, which matters for floats: ``a + (b + c)`` is not ``a + b + c``.

``recipe_formula`` writes a fused op's own recipe the same way, with the op's
parameter names: ``(1 - y * y) * g`` for tanh_grad.
"""
import collections
import inspect
import re

#: Functions written as infix operators in a program's formula, with their precedence.
_INFIX = {"add": ("+", 2), "subtract": ("-", 2), "multiply": ("*", 3),
          "true_divide": ("/", 3), "power": ("**", 5),
          "less": ("<", 1), "less_equal": ("<=", 1), "greater": (">", 1),
          "greater_equal": (">=", 1), "equal": ("==", 1), "not_equal": ("!=", 1)}
_NEGATIVE, _ATOM = 4, 6


def formula_of(steps):
    """``(lets, result)``: the named results (``["s0 = tanh(x0)"]``) and the
    expression of the last step over x0, x1, ... and those names."""
    uses = {}
    for step in steps:
        for kind, v in step.args:
            if kind == "step":
                uses[v] = uses.get(v, 0) + 1
    texts, lets = [], []      # per step: (text, precedence)

    def operand(arg, needs_parens):
        kind, value = arg
        if kind == "in":
            return f"x{value}"
        if kind == "num":
            return repr(value)
        text, prec = texts[value]
        return f"({text})" if needs_parens(prec) else text

    for j, step in enumerate(steps):
        if step.fn in _INFIX and len(step.args) == 2:
            symbol, p = _INFIX[step.fn]
            left = operand(step.args[0], lambda q: q < p or (q == p and symbol == "**"))
            right = operand(step.args[1], lambda q: q <= p)
            entry = (f"{left} {symbol} {right}", p)
        elif step.fn == "negative":
            entry = (f"-{operand(step.args[0], lambda q: q < _ATOM)}", _NEGATIVE)
        else:
            args = ", ".join(operand(arg, lambda q: False) for arg in step.args)
            entry = (f"{step.fn}({args})", _ATOM)
        if uses.get(j, 0) > 1 and j < len(steps) - 1:
            lets.append(f"s{len(lets)} = {entry[0]}")
            entry = (f"s{len(lets) - 1}", _ATOM)
        texts.append(entry)
    return lets, texts[-1][0]


#: A recipe's step as ``formula_of`` reads it (what it applies, and to what).
_RecipeStep = collections.namedtuple("_RecipeStep", "fn args")


def recipe_formula(op):
    """The algebra of ``op``'s elementwise recipe (``steps(emit, y, g)``), in its
    parameters' names: ``"(1 - y * y) * g"``; None for an op without a recipe function."""
    recipe = op.elementwise
    if not callable(recipe):
        return None
    names = list(inspect.signature(recipe).parameters)[1:]   # after emit
    steps = []

    def emit(fn, *args, dtype=None):
        steps.append(_RecipeStep(fn, [a if isinstance(a, tuple) else ("num", a) for a in args]))
        return ("step", len(steps) - 1)
    recipe(emit, *[("in", i) for i in range(len(names))])
    lets, result = formula_of(steps)
    return re.sub(r"\bx(\d+)\b", lambda m: names[int(m.group(1))], "; ".join(lets + [result]))
