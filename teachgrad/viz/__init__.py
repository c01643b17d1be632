"""Visualizers: what the autodiff engine did, recorded as events.

``record()`` captures the events of every backward pass run inside it; the
drawing functions and widget steppers replay those events.
"""
from ..autodiff.events import record

__all__ = ["record"]
