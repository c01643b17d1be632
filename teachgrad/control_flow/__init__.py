"""Control flow with gradients: ``while_loop`` and ``cond``, eager and in graphs."""
from .cond import cond
from .while_loop import while_loop

__all__ = ["cond", "while_loop"]
