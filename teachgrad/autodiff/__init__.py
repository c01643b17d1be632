"""Automatic differentiation: the backward engine and what is built on it."""
from .aggregation import AggregationMethod, UnconnectedGradients
from .engine import backward
from .forward import ForwardAccumulator, transposition_only
from .functional import grad, hessian, hvp, jacfwd, jacrev, jvp, value_and_grad, vjp
from .gradcheck import GradcheckError, gradcheck
from .gradients import gradients
from .linear import linear_transpose, linearize
from .tape import GradientTape
from .vectorize import vectorized_map, vmap
from .custom import custom_gradient, grad_pass_through, recompute_grad
