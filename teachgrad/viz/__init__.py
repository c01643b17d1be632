"""Visualizers: what the autodiff engine did, recorded as events.

``record()`` captures the events of every backward pass run inside it; the
drawing functions and widget steppers replay those events.
"""
from ..autodiff.events import record
from .draw import Drawing, draw
from .backprop_stepper import BackpropStepper
from .jvp_stepper import JVPStepper
from .local_jacobian import LocalJacobian, local_jacobian
from .pass_stepper import PassStepper

__all__ = ["record", "BackpropStepper", "JVPStepper", "LocalJacobian", "PassStepper", "local_jacobian"]
