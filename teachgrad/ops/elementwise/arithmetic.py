"""Binary arithmetic with numpy broadcasting, comparisons, where and add_n.

Every broadcasting rule ends in ``unbroadcast``: an input that was broadcast
gets the sum of the cotangents of all its copies.

The kernels use Python's operators (``x * y``) rather than the ufunc calls
(``xp.multiply(x, y)``): on arrays, numpy and CuPy run the same ufunc either way,
but on the numpy scalars that 0-d results are, the operator takes a fast path
(about 0.04 µs against 0.6 µs for the call), which a chain of scalar ops feels.
"""

import sys

from ... import backend, validate
from ...state import per_thread
from ...tensor import Tensor, convert_to_tensor
from ..core.apply import innermost
from ..core.declare import (
    defbatch,
    defeffect,
    defjvp,
    defvjp,
    defvjp_all,
    not_differentiable,
    primitive,
    refuses_complex,
    takes_complex,
)
from ..core.grad_util import known, value_of
from ..core.inputs import input_error
from ..shape.reshape import broadcast_as, repeat_unbatched, unbroadcast
from .conjugate import conj_of
from .math import log

#: Why an ordering op refuses complex numbers (numpy's comparisons would order them by
#: real part first, TensorFlow's refuse them: there is no order that respects arithmetic).
NO_ORDER = ("complex numbers have no order. Compare tg.real(z), tg.imag(z) or tg.abs(z) "
            "instead.")


def _binary(x, y):
    """Pair up two operands; a Python scalar takes the other tensor's dtype.

    (``bind`` converts its arguments the same way, so the binary ops hand it theirs
    as they are; ``where`` pairs its two branches here first.)"""
    try:
        if not isinstance(x, Tensor):
            x = convert_to_tensor(x, like=y if isinstance(y, Tensor) else None)
        if not isinstance(y, Tensor):
            y = convert_to_tensor(y, like=x)
    except (TypeError, ValueError) as error:
        caller = sys._getframe(1)
        raise input_error(f"tg.{caller.f_code.co_name}", (x, y), error, caller) from None
    return x, y


# x + y.  d/dx = d/dy = 1
add_p = primitive("add", lambda x, y: x + y)
defeffect(add_p, "fresh", elementwise="add")
takes_complex(add_p)
def add(x, y): return innermost.process(add_p, x, y)
defvjp(add_p,
       lambda ct, ans, x, y: unbroadcast(ct, x),
       lambda ct, ans, x, y: unbroadcast(ct, y))
defjvp(add_p,
       lambda x_dot, ans, x, y: broadcast_as(x_dot, ans),
       lambda y_dot, ans, x, y: broadcast_as(y_dot, ans))

# x - y.  d/dx = 1, d/dy = -1
subtract_p = primitive("subtract", lambda x, y: x - y)
defeffect(subtract_p, "fresh", elementwise="subtract")
takes_complex(subtract_p)
def subtract(x, y): return innermost.process(subtract_p, x, y)
defvjp(subtract_p,
       lambda ct, ans, x, y: unbroadcast(ct, x),
       lambda ct, ans, x, y: unbroadcast(-ct, y))
defjvp(subtract_p,
       lambda x_dot, ans, x, y: broadcast_as(x_dot, ans),
       lambda y_dot, ans, x, y: broadcast_as(-y_dot, ans))

# x * y.  d/dx = y, d/dy = x
multiply_p = primitive("multiply", lambda x, y: x * y)
defeffect(multiply_p, "fresh", elementwise="multiply")
takes_complex(multiply_p)
def multiply(x, y): return innermost.process(multiply_p, x, y)
defvjp(multiply_p,
       lambda ct, ans, x, y: unbroadcast(ct * conj_of(y), x),
       lambda ct, ans, x, y: unbroadcast(ct * conj_of(x), y))
defjvp(multiply_p,
       lambda x_dot, ans, x, y: broadcast_as(x_dot * y, ans),
       lambda y_dot, ans, x, y: broadcast_as(x * y_dot, ans))

# x / y.  d/dx = 1/y, d/dy = -x/y^2 = -ans/y
divide_p = primitive("divide", lambda x, y: x / y)
defeffect(divide_p, "fresh", elementwise="true_divide")
takes_complex(divide_p)
def divide(x, y): return innermost.process(divide_p, x, y)
defvjp(divide_p,
       lambda ct, ans, x, y: unbroadcast(ct / conj_of(y), x),
       lambda ct, ans, x, y: unbroadcast(-(ct * conj_of(ans)) / conj_of(y), y))
defjvp(divide_p,
       lambda x_dot, ans, x, y: broadcast_as(x_dot / y, ans),
       lambda y_dot, ans, x, y: broadcast_as(-(y_dot * ans) / y, ans))


def _power_kernel(x, y):
    return x ** y

def _power_dx(ct, ans, x, y):
    # Where y = 0, x^0 = 1 is constant and d/dx is 0, also at x = 0 (where y x^(y-1)
    # would be 0 * inf = NaN): there the exponent y - 1 becomes 1, and y x^1 = 0. This
    # keeps x ** 0.0, and the second derivative of x ** 1.0, right at 0. Only at x = 0:
    # elsewhere y x^(y-1) is finite, and its derivative in y at y = 0, x^(-1), must stay
    # (a second derivative). (Only when y may be 0: an exponent known to be nonzero,
    # x ** 2, keeps the rule's two ops.)
    exponent = y - 1
    if _may_be_zero(y):
        exponent = where(y == 0, where(x == 0, 1, exponent), exponent)
    return unbroadcast(ct * conj_of(y) * conj_of(power(x, exponent)), x)


def _may_be_zero(t):
    """Could tensor ``t`` hold a 0? Its value decides when it is known: eagerly, or a
    graph's constant; otherwise (a placeholder, a computed tensor in a graph) it could.
    (``t`` is a raw array when the rule runs on arrays.)"""
    value = value_of(t)
    if value is None:   # a graph tensor: known only for a constant (one example of a batch: no)
        node = getattr(t, "node", None)
        if node is None or node.op.name != "const":
            return True
        value = t.node.params["value"]
    if value.ndim == 0:                     # the usual exponent: no array reduction
        return bool(value == 0)
    return bool((value == 0).any())

def _power_dy(ct, ans, x, y):
    if x.dtype.kind == "c" or y.dtype.kind == "c":   # ln x is defined off 0 (TensorFlow's)
        return unbroadcast(ct * conj_of(ans * log(where(x == 0, 1, x))), y)
    return unbroadcast(ct * ans * log(where(x > 0, x, 1)), y)

# x^y.  d/dx = y x^(y-1);  d/dy = ln(x) x^y, taken as 0 where x <= 0 (as TensorFlow does;
# for complex numbers, where x = 0). The cotangents multiply by the conjugates.
power_p = primitive("power", _power_kernel)
defeffect(power_p, "fresh", elementwise="power")
takes_complex(power_p)
def power(x, y): return innermost.process(power_p, x, y)
defvjp(power_p,
       _power_dx,
       _power_dy)

# max(x, y) elementwise: the gradient goes to x where x >= y, else to y.
maximum_p = primitive("maximum", lambda x, y: backend.xp.maximum(x, y))
defeffect(maximum_p, "fresh", elementwise="maximum")
refuses_complex(maximum_p, NO_ORDER)
def maximum(x, y): return innermost.process(maximum_p, x, y)
defvjp(maximum_p,
       lambda ct, ans, x, y: unbroadcast(where(x >= y, ct, 0), x),
       lambda ct, ans, x, y: unbroadcast(where(x >= y, 0, ct), y))

# min(x, y) elementwise: the gradient goes to x where x <= y, else to y.
minimum_p = primitive("minimum", lambda x, y: backend.xp.minimum(x, y))
defeffect(minimum_p, "fresh", elementwise="minimum")
refuses_complex(minimum_p, NO_ORDER)
def minimum(x, y): return innermost.process(minimum_p, x, y)
defvjp(minimum_p,
       lambda ct, ans, x, y: unbroadcast(where(x <= y, ct, 0), x),
       lambda ct, ans, x, y: unbroadcast(where(x <= y, 0, ct), y))


# where(c, x, y): x where c is true, else y. The condition gets no gradient.
where_p = primitive("where", lambda c, x, y: backend.xp.where(c, x, y))
defeffect(where_p, "fresh", elementwise="where")
takes_complex(where_p)
def where(condition, x, y):
    if not per_thread.state.arrays:   # (on arrays, bind converts a number next to the float branch)
        x, y = _binary(x, y)
    return innermost.process(where_p, condition, x, y)
defvjp(where_p,
       None,
       lambda ct, ans, c, x, y: unbroadcast(where(c, ct, 0), x),
       lambda ct, ans, c, x, y: unbroadcast(where(c, 0, ct), y))


def _add_n_kernel(*xs):
    total = backend.xp.add(xs[0], xs[1]) if len(xs) > 1 else backend.xp.array(xs[0], copy=True)
    for x in xs[2:]:
        total += x  # `total` is a fresh array, so adding in place is safe
    return total


def _add_n_steps(emit, *xs):   # fused in graphs as a chain of adds
    total = emit("add", xs[0], xs[1])
    for x in xs[2:]:
        total = emit("add", total, x)
    return total

# x_1 + x_2 + ... + x_n in one op (TensorFlow's AddN): each input gets g.
add_n_p = primitive("add_n", _add_n_kernel)
defeffect(add_n_p, "fresh", elementwise=_add_n_steps)
takes_complex(add_n_p)
def add_n(inputs):
    """Sum a list of tensors of the same shape and dtype in one op.

    Like TensorFlow's, it does not convert between dtypes: a float32 and a
    float64 tensor are an error, not a float64 sum. Cast first (``tg.cast``).
    """
    inputs = validate.sequence(inputs, "inputs", "tg.add_n")
    if not inputs:
        validate.fail(ValueError, "tg.add_n", "inputs", "a non-empty list of tensors", inputs)
    shapes = {tuple(t.shape) for t in inputs if isinstance(t, Tensor) and known(t.shape)}
    if len(shapes) > 1:
        raise ValueError(f"add_n: all inputs must have the same shape, got {sorted(shapes)}.")
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    try:   # a Python number takes like's dtype
        inputs = [convert_to_tensor(t, like) for t in inputs]
    except (TypeError, ValueError) as error:
        raise input_error("tg.add_n", inputs, error, sys._getframe()) from None
    found = list(dict.fromkeys(str(t.dtype) for t in inputs))
    if len(found) > 1:
        raise TypeError(
            f"add_n: all inputs must have the same dtype, got {' and '.join(found)} "
            f"(input dtypes: {', '.join(str(t.dtype) for t in inputs)}). add_n does not "
            f"convert them: cast them to one dtype first, e.g. tg.cast(x, tg.{found[0]}).")
    return innermost.process(add_n_p, *inputs)
defvjp_all(add_n_p, lambda ct, ans, *xs: [ct] * len(xs))
# Its inputs have one shape, so shared ones are repeated for every example first.
defbatch(add_n_p, lambda values, batched: (innermost.process(add_n_p, *repeat_unbatched(values, batched)),
                                           True))


def _comparison(name, kernel, ordering=True):
    op = not_differentiable(primitive(name, kernel))
    defeffect(op, "fresh", elementwise=name)   # numpy's ufunc of the same name
    if ordering:
        refuses_complex(op, NO_ORDER)
    else:   # == and != hold for complex numbers
        takes_complex(op)
    def compare(x, y):
        return innermost.process(op, x, y)
    compare.__name__ = name
    compare.__doc__ = f"Elementwise ``{name}``: a bool tensor, never differentiated."
    return compare

less = _comparison("less", lambda x, y: x < y)
less_equal = _comparison("less_equal", lambda x, y: x <= y)
greater = _comparison("greater", lambda x, y: x > y)
greater_equal = _comparison("greater_equal", lambda x, y: x >= y)
equal = _comparison("equal", lambda x, y: x == y, ordering=False)
not_equal = _comparison("not_equal", lambda x, y: x != y, ordering=False)
