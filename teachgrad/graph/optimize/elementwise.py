"""The elementwise ops, and how each one is written as program steps.

An op is *elementwise* when each output entry depends only on the entries at
the same position of its inputs (after broadcasting): ``add``, ``tanh``,
``where``, the comparisons... Such ops can be chained into one program (see
``program.py``). Each op's recipe is declared in its own block (``defeffect``'s
``elementwise``); most are a single ufunc, a few are the same sequence of
ufuncs as the op's own kernel, so a program computes exactly what the ops
computed one by one::

    tanh_grad(y, g) = (1 - y * y) * g
    sigmoid(x)      = exp(-logaddexp(0, -x))
    sigmoid_grad(y, g) = g * (y * (1 - y))
    relu(x)         = maximum(x, 0)
    relu_grad(g, x) = where(x > 0, g, 0)
"""
import functools

from ...ops.elementwise import arithmetic
from .program import ElementwiseProgram, Step, run_program


def recipe(op):
    """How ``op`` is written as program steps (from its ``defeffect``), or None: a
    function ``steps(emit, *inputs)``."""
    spec = op.elementwise
    if spec is None or callable(spec):
        return spec
    return lambda emit, *xs: emit(spec, *xs)   # one ufunc, named by the op


def is_elementwise(node):
    """Can ``node`` be written as program steps (and so join a fused program)?"""
    if node.op.forward is run_program:
        return True
    if node.op.elementwise is None or len(node.outputs) != 1:
        return False
    out = node.outputs[0]
    if out.dtype.kind not in "biuf":
        return False
    if callable(node.op.elementwise):
        # Recipes of several steps: their intermediate results are taken to have the
        # output's dtype (and shape), which holds when every input has it, unless the
        # recipe names another (relu_grad's comparison is bool). Not so for, e.g., a
        # sigmoid of an int, whose first step would stay int.
        if not all(x.shape == out.shape and x.dtype == out.dtype for x in node.inputs):
            return False
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
        found = refs.get(tensor.id)
        if found is None:
            found = refs[tensor.id] = ("in", len(inputs))
            inputs.append(tensor)
        return found

    for node in nodes:
        out = node.outputs[0]
        args = [ref(x) for x in node.inputs]
        if node.op.forward is run_program:   # an earlier program: inline its steps
            refs[out.id] = _inline(node.params["program"], args, steps)
            continue
        emit = functools.partial(_emit, steps, out.shape, out.dtype)
        refs[out.id] = recipe(node.op)(emit, *args)
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
