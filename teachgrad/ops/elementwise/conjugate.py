r"""The complex conjugate and the real part: the two ops every complex rule is made of.

TensorFlow's convention (``teachgrad.dtypes``) makes the cotangent of a complex tensor
$\partial L/\partial x + i\,\partial L/\partial y$. Multiplying by a complex number $c$
is then transposed by multiplying by $\bar c$, so the VJP rule of a holomorphic op is
$\mathrm{ct} \cdot \overline{f'(z)}$: ``conj_of`` writes that conjugate, and is nothing
at all on real tensors (their rules, and their drawings, are unchanged). ``real_part``
is how a complex cotangent reaches a real input.
"""
from ... import backend
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defjvp, defvjp, primitive, takes_complex
from .casts import cast

# conj(z) = x - iy.  A real-linear map that is its own transpose: ct -> conj(ct).
conj_p = primitive("conj", lambda x: backend.xp.conj(x))
defeffect(conj_p, "fresh", elementwise="conjugate")
takes_complex(conj_p)
def conj_op(x): return innermost.process(conj_p, x)
defvjp(conj_p, lambda ct, ans, x: conj_op(ct))
defjvp(conj_p, lambda x_dot, ans, x: conj_op(x_dot))
defbatch(conj_p, leading_axes_rule(conj_p))


# real(z) = x.  Its cotangent ct is real; back in the plane it is ct + 0i.
real_p = primitive("real", lambda x: backend.xp.real(x).copy())
defeffect(real_p, "fresh")
takes_complex(real_p)
def real_part(x): return innermost.process(real_p, x)
defvjp(real_p, lambda ct, ans, x: cast(ct, x.dtype))
defjvp(real_p, lambda x_dot, ans, x: real_part(x_dot))
defbatch(real_p, leading_axes_rule(real_p))


def conj_of(t):
    """``t``'s conjugate where it is complex; ``t`` itself (no op) where it is real (a
    Python float included)."""
    dtype = getattr(t, "dtype", None)
    return conj_op(t) if dtype is not None and dtype.kind == "c" else t


def real_of(t, like):
    """The cotangent ``t`` for an input like ``like``: its real part when ``like`` is real
    and ``t`` complex (the imaginary part does not reach a real number), else ``t``."""
    if t.dtype.kind == "c" and like.dtype.kind != "c":
        return real_part(t)
    return t
