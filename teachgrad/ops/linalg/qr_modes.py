"""``tg.linalg.qr``'s modes beyond the reduced QR (``factorizations.py``), as ops whose
gradient is not defined, and which say so when differentiated:

* ``"complete"`` for a matrix with more rows than columns: the last $m - k$ columns of
  the square $Q$ are any orthonormal basis of what $A$'s columns leave out, so they do
  not depend on $A$ smoothly (where there are no more rows than columns, ``qr`` gives
  the reduced QR, which is the same, and differentiable);
* ``"raw"``: LAPACK's Householder reflectors ``(h, tau)``, an encoding of $Q$.
"""
from ... import backend
from ..core.declare import defeffect, defvjp_all, primitive


def _undefined(mode, why):
    def rule(ct, ans, a):
        raise ValueError(f"tg.linalg.qr: mode={mode!r} has no gradient here: {why}. "
                         f"Differentiate mode='reduced' (or 'r') instead.")
    return rule


qr_complete_p = primitive("qr_complete", lambda a: tuple(backend.xp.linalg.qr(a, "complete")),
                          multiple_results=True)
defeffect(qr_complete_p, "fresh")
defvjp_all(qr_complete_p, _undefined("complete", "with more rows than columns, the extra "
                                     "columns of Q are not determined by A"))

qr_raw_p = primitive("qr_raw", lambda a: tuple(backend.xp.linalg.qr(a, "raw")),
                     multiple_results=True)
defeffect(qr_raw_p, "fresh")
defvjp_all(qr_raw_p, _undefined("raw", "the Householder reflectors are LAPACK's "
                                "encoding of Q"))
