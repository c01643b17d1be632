"""numpy's take and select, made of gather and where."""
from ... import validate
from ..core.grad_util import as_tensor
from ..elementwise.arithmetic import where
from .indexing import gather
from .reshape import reshape


def take(a, indices, axis=None):
    """The entries of ``a`` at ``indices`` along ``axis`` (None: of the flattened ``a``),
    numpy's ``take``: ``gather``, whose gradient along axis 0 is sparse."""
    x = as_tensor(a, "a", "tg.take")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return gather(x, indices, axis=axis)


def select(condlist, choicelist, default=0):
    """Entry by entry, the choice whose condition is the first true one, else ``default``
    (numpy's ``select``): nested ``where`` ops, so each choice gets the cotangent where it
    was chosen."""
    site = "tg.select"
    condlist = validate.sequence(condlist, "condlist", site)
    choicelist = validate.sequence(choicelist, "choicelist", site)
    if len(condlist) != len(choicelist):
        validate.fail(ValueError, site, "choicelist", f"one choice per condition "
                      f"({len(condlist)})", choicelist)
    if not choicelist:
        validate.fail(ValueError, site, "choicelist", "at least one choice", choicelist)
    conditions = [as_tensor(c, "condlist", site) for c in condlist]
    if any(c.dtype.kind != "b" for c in conditions):
        validate.fail(TypeError, site, "condlist", "bool tensors", condlist)
    choices = [as_tensor(c, "choicelist", site) for c in choicelist]
    default = as_tensor(default, "default", site) if not isinstance(default, (int, float)) \
        or isinstance(default, bool) else default
    result = default
    for condition, choice in reversed(list(zip(conditions, choices))):
        result = where(condition, choice, result)
    return result
