"""Matrix multiplication, with numpy's rules for 1-D and batched operands."""
from .. import backend
from .core import bind, defvjp, primitive
from .grad_util import unbroadcast
from .shape import expand_dims, squeeze, swap_last_two


def _matmul_kernel(x, y):
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("scalars cannot be matrix-multiplied; use tg.multiply (or *) instead")
    inner_x = x.shape[-1]
    inner_y = y.shape[-2] if y.ndim > 1 else y.shape[0]
    if inner_x != inner_y:
        raise ValueError(
            f"shapes {x.shape} and {y.shape} are incompatible: the last axis of the first "
            f"({inner_x}) must equal the {'second-to-last' if y.ndim > 1 else 'only'} axis "
            f"of the second ({inner_y})")
    return backend.xp.matmul(x, y)


def _matmul_vjp_x(g, ans, x, y):
    # Z = X Y  =>  dX = dZ Y^T  (1-D operands are treated as a row or a column)
    if y.ndim == 1:
        gx = expand_dims(g, -1) * y
    elif x.ndim == 1:
        gx = squeeze(matmul(y, expand_dims(g, -1)), -1)
    else:
        gx = matmul(g, swap_last_two(y))
    return unbroadcast(gx, x)


def _matmul_vjp_y(g, ans, x, y):
    # Z = X Y  =>  dY = X^T dZ
    if x.ndim == 1 and y.ndim == 1:
        gy = g * x
    elif x.ndim == 1:
        gy = expand_dims(x, -1) * expand_dims(g, -2)
    elif y.ndim == 1:
        gy = squeeze(matmul(swap_last_two(x), expand_dims(g, -1)), -1)
    else:
        gy = matmul(swap_last_two(x), g)
    return unbroadcast(gy, y)

matmul_p = primitive("matmul", _matmul_kernel)
def matmul(x, y):
    """Matrix product ``x @ y`` (batched over leading axes, as numpy does)."""
    return bind(matmul_p, x, y)
defvjp(matmul_p, _matmul_vjp_x, _matmul_vjp_y)
