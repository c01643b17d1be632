"""The elementwise ops, and how each one is written as program steps.

An op is *elementwise* when each output entry depends only on the entries at
the same position of its inputs (after broadcasting): ``add``, ``tanh``,
``where``, the comparisons... Such ops can be chained into one program (see
``program.py``). Each recipe below writes one op as steps; most are a single
ufunc, a few are the same sequence of ufuncs as the op's own kernel, so a
program computes exactly what the ops computed one by one::

    tanh_grad(y, g) = (1 - y * y) * g
    sigmoid(x)      = exp(-logaddexp(0, -x))
    sigmoid_grad(y, g) = g * (y * (1 - y))
    relu(x)         = maximum(x, 0)
    relu_grad(g, x) = where(x > 0, g, 0)
"""
import functools

from ...ops import arithmetic, math, nn
from . import effects
from .program import ElementwiseProgram, Step, run_program


def _ufunc(name):
    return lambda emit, *xs: emit(name, *xs)


def _add_n(emit, *xs):
    total = emit("add", xs[0], xs[1])
    for x in xs[2:]:
        total = emit("add", total, x)
    return total


RECIPES = {
    arithmetic.add_p: _ufunc("add"),
    arithmetic.subtract_p: _ufunc("subtract"),
    arithmetic.multiply_p: _ufunc("multiply"),
    arithmetic.divide_p: _ufunc("true_divide"),
    arithmetic.power_p: _ufunc("power"),
    arithmetic.maximum_p: _ufunc("maximum"),
    arithmetic.minimum_p: _ufunc("minimum"),
    arithmetic.where_p: _ufunc("where"),
    arithmetic.add_n_p: _add_n,
    math.negative_p: _ufunc("negative"),
    math.exp_p: _ufunc("exp"),
    math.log_p: _ufunc("log"),
    math.log1p_p: _ufunc("log1p"),
    math.sqrt_p: _ufunc("sqrt"),
    math.square_p: _ufunc("square"),
    math.abs_p: _ufunc("abs"),
    math.sign_p: _ufunc("sign"),
    math.sin_p: _ufunc("sin"),
    math.cos_p: _ufunc("cos"),
    math.tanh_p: _ufunc("tanh"),
    math.tanh_grad_p: lambda emit, y, g: emit(
        "multiply", emit("subtract", 1, emit("multiply", y, y)), g),
    math.sigmoid_p: lambda emit, x: emit(
        "exp", emit("negative", emit("logaddexp", 0, emit("negative", x)))),
    math.sigmoid_grad_p: lambda emit, y, g: emit(
        "multiply", g, emit("multiply", y, emit("subtract", 1, y))),
    nn.relu_p: lambda emit, x: emit("maximum", x, 0),
    nn.relu_grad_p: lambda emit, g, x: emit("where", emit("greater", x, 0, dtype=bool), g, 0),
}
RECIPES.update({op: _ufunc(op.name) for op in effects.COMPARISONS})   # less, equal, ...


#: Recipes of several steps. Their intermediate results are taken to have the
#: output's dtype (and shape), which holds when every input has it, unless the
#: recipe names another (relu_grad's comparison is bool).
_SEVERAL_STEPS = {math.tanh_grad_p, math.sigmoid_p, math.sigmoid_grad_p, arithmetic.add_n_p,
                  nn.relu_grad_p}


def is_elementwise(node):
    """Can ``node`` be written as program steps (and so join a fused program)?"""
    if node.op.forward is run_program:
        return True
    if node.op not in RECIPES or len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    if out.dtype.kind not in "biuf":
        return False
    if node.op in _SEVERAL_STEPS:
        if not all(x.shape == out.shape and x.dtype == out.dtype for x in node.inputs):
            return False   # e.g. sigmoid of an int: its first step would stay int
        return node.op is not arithmetic.add_n_p or len(node.inputs) >= 2
    return True


def build_program(nodes):
    """One ElementwiseProgram computing the last of ``nodes`` (in creation order)
    from the tensors they read that none of them makes.

    Returns ``(program, inputs)``: ``inputs`` are those tensors, in the order the
    program takes them.
    """
    inputs, refs, steps = [], {}, []

    def ref(tensor):
        found = refs.get(tensor._id)
        if found is None:
            found = refs[tensor._id] = ("in", len(inputs))
            inputs.append(tensor)
        return found

    for node in nodes:
        out = node.outputs[0]
        args = [ref(x) for x in node.inputs]
        if node.op.forward is run_program:   # an earlier program: inline its steps
            refs[out._id] = _inline(node.params["program"], args, steps)
            continue
        emit = functools.partial(_emit, steps, out.shape, out.dtype)
        refs[out._id] = RECIPES[node.op](emit, *args)
    specs = [(x.shape, x.dtype) for x in inputs]
    return ElementwiseProgram(steps, specs), inputs


def _emit(steps, shape, out_dtype, fn, *args, dtype=None):
    """Append the step ``fn(*args)``; its result has the op's shape, and the op's
    dtype unless ``dtype`` says otherwise."""
    steps.append(Step(fn, [a if isinstance(a, tuple) else ("num", a) for a in args],
                      shape, out_dtype if dtype is None else dtype))
    return ("step", len(steps) - 1)


def _inline(program, args, steps):
    offset = len(steps)
    for step in program.steps:
        steps.append(Step(step.fn, [args[v] if kind == "in" else
                                    ("step", v + offset) if kind == "step" else (kind, v)
                                    for kind, v in step.args], step.shape, step.dtype))
    return ("step", len(steps) - 1)
