"""Automatic differentiation: the backward engine and what is built on it."""
from .aggregation import AggregationMethod, UnconnectedGradients
from .engine import backward
from .functional import grad, hessian, jacrev, value_and_grad, vjp
from .gradcheck import GradcheckError, gradcheck
from .gradients import gradients
from .tape import GradientTape
