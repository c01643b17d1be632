"""An optimizer's hyperparameters (learning rate, momentum, the betas...), checked where
they enter, with the same messages as every other check (``teachgrad.validate``)."""
from .validate import fail, number


def hyperparameter(value, name, where, upper=None, open_upper=False):
    """An optimizer's hyperparameter (``where``: ``"Adam"``...): a finite number >= 0
    (and <= ``upper``, or < when ``open_upper``)."""
    checked = number(value, name, f"tg.optimizers.{where}", minimum=0.0)
    if upper is not None and (checked > upper or (open_upper and checked == upper)):
        bound = f"< {upper}" if open_upper else f"<= {upper}"
        fail(ValueError, f"tg.optimizers.{where}", name, f"a number >= 0 and {bound}", value)
    return checked


def optional_hyperparameter(value, name, where):
    """None (not used), or a hyperparameter >= 0."""
    return None if value is None else hyperparameter(value, name, where)
