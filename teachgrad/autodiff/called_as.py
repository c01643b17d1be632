"""Errors named for the function the student called.

``tg.hessian(f)`` is ``tg.jacfwd(tg.grad(f))``, and ``tg.value_and_grad`` shares its
checks with ``tg.grad``: a wrong argument is caught by the inner transformation, whose
message starts with ITS name. A student who called ``tg.hessian`` and reads
"tg.jacfwd: `argnums` must be an integer" has to know how hessian is built to
understand it. ``called_as`` renames such a message for the function called::

    tg.hessian(f, argnums="a")(x)
    TypeError: tg.hessian: `argnums` must be an integer, but got the str 'a'.

Only the transformation's own checks are renamed: an error raised inside ``f`` (the
student's code, which may call tg.grad itself) is left as it was, and so is every
error that is not a TypeError or ValueError.
"""
import functools
import re

# The start of a message of an inner transformation: its name, then ": " or " ".
_INNER = re.compile(r"(tg\.)?(value_and_grad|jacfwd|jacrev|grad)(: | )")


def called_as(where, transformed, f):
    """``transformed`` (what a transformation of ``f`` returned), whose boundary errors
    name ``where`` (``"tg.hessian"``) instead of the inner transformation's name."""
    @functools.wraps(transformed)
    def wrapped(*args, **kwargs):
        try:
            return transformed(*args, **kwargs)
        except (TypeError, ValueError) as error:
            if error.args and isinstance(error.args[0], str) and not _raised_in(error, f):
                error.args = (renamed(error.args[0], where),) + error.args[1:]
            raise
    return wrapped


def renamed(text, where):
    """``text`` with the inner transformation's name at its start replaced by ``where``
    (a message with no name gets ``where`` in front)."""
    match = _INNER.match(text)
    if match:
        return where + match.group(3) + text[match.end():]
    return text if text.startswith(where) else f"{where}: {text}"


def _raised_in(error, f):
    """Did ``error`` come from inside ``f`` (a frame of its code on the way)?"""
    code = getattr(f, "__code__", None)
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            return True
        tb = tb.tb_next
    return False
