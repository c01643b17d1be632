"""Debugging autodiff: where a NaN came from, whether a rule is right, why a gradient is None.

* ``check_numerics()``: raise at the first op (forward or backward) that makes a NaN or inf.
* ``verify_gradients()``: check every op's VJP/JVP rule against finite differences as it runs.
* ``explain_gradient(target, source, tape_or_graph)``: why a gradient is what it is.
* ``record_sources()``: note the line of user code that made each op.

Each is a ``with`` block; when none is active they cost nothing but one list test per op.
"""
from .explain import explain_gradient
from .explanation import KINDS, Cause, GradientExplanation, Path
from .hooks import SourceLine, record_sources, source_of
from .numerics import NumericsError, check_numerics
from .verify import GradientRuleError, VerificationReport, verify_gradients

__all__ = ["KINDS", "Cause", "GradientExplanation", "GradientRuleError", "NumericsError", "Path",
           "SourceLine", "VerificationReport", "check_numerics", "explain_gradient",
           "record_sources", "source_of", "verify_gradients"]
