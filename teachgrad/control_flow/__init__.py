"""Control flow with gradients: ``while_loop``, ``cond``, ``switch_case`` and ``case``,
eager and in graphs."""
from .cond import cond
from .switch_case import case, switch_case
from .while_loop import while_loop

__all__ = ["case", "cond", "switch_case", "while_loop"]
