"""Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

Each operand's axes are labelled with letters; letters shared between operands are
multiplied together, and letters missing from the output are summed over:

    out[output letters] = sum over the other letters of  prod_k  x_k[x_k's letters]

numpy's spelling is read once, in ``einsum``, into an explicit one (every ``...``
replaced by letters, the output always written), which is what the primitive keeps.
The forward pass is one call of the backend's ``einsum``.

The VJP is an einsum too. ``out`` is linear in each operand, so the cotangent of
``x_k`` is ``ct`` contracted with every *other* operand, labelled to give ``x_k``'s
letters:  ``"ij,jk->ik"`` pulls ``ct`` back to ``a`` as ``"ik,jk->ij"`` (ct b^T) and
to ``b`` as ``"ik,ij->jk"`` (a^T ct). Two cases need more than relabelling:

* a letter repeated in ``x_k`` (a diagonal: ``"ii->"`` is the trace) cannot be
  repeated in an output, so the second occurrence gets a fresh letter ``I`` and an
  identity matrix ``eye[i, I]`` joins the contraction: the cotangent lands on the
  diagonal only;
* a letter only ``x_k`` has (summed out by ``"ij->i"``) appears in no other
  term: ``ct`` does not depend on it, so it is broadcast along that axis.
"""
import string

import numpy as np

from ... import backend, validate
from ..core.apply import innermost
from ..core.declare import (
    defbatch,
    defeffect,
    defjvp_all,
    defshape,
    defvjp_all,
    primitive,
    takes_complex,
)
from ..core.grad_util import as_tensor, known
from ..elementwise.conjugate import conj_of
from ..shape.reshape import broadcast_as, broadcast_to, expand_dims, unbroadcast

_LETTERS = string.ascii_uppercase + string.ascii_lowercase   # numpy's order


def _split(subscripts):
    """``"ij,jk->ik"`` as ``(["ij", "jk"], "ik")``."""
    inputs, output = subscripts.split("->")
    return inputs.split(","), output


def _kernel(*operands, subscripts):
    # optimize=True: numpy picks the contraction order and hands pairs to BLAS.
    return backend.xp.einsum(subscripts, *operands, optimize=len(operands) > 1)


einsum_p = primitive("einsum", _kernel)
defeffect(einsum_p, "fresh")
takes_complex(einsum_p)


def _vjp(ct, ans, *operands, subscripts):
    """Every operand's cotangent, each one einsum of ``ct`` with the other operands."""
    inputs, output = _split(subscripts)
    operands = [conj_of(o) for o in operands]   # complex: the conjugates (nothing when real)
    return [_vjp_one(ct, operands, inputs, output, k) for k in range(len(operands))]


def _vjp_one(ct, operands, inputs, output, k):
    x, target = operands[k], inputs[k]
    terms = [output] + [s for i, s in enumerate(inputs) if i != k]
    args = [ct] + [o for i, o in enumerate(operands) if i != k]
    fresh = iter(c for c in _LETTERS if c not in "".join(inputs))
    labels = []
    for position, c in enumerate(target):
        if c not in labels:
            labels.append(c)
            continue
        # a repeated letter: the cotangent sits on the diagonal eye[c, fresh letter]
        size = x.shape[position]
        if size is None:
            raise ValueError(f"einsum: the gradient of {target!r} (a repeated index) needs "
                             f"the size of its axis {position}, which is not known yet.")
        new = next(fresh)
        labels.append(new)
        terms.append(c + new)
        args.append(backend.xp.eye(size, dtype=x.dtype))
    present = set("".join(terms))
    kept = "".join(c for c in labels if c in present)
    g = einsum_explicit(",".join(terms) + "->" + kept, *args)
    # letters only x_k has: ct is constant along them, so broadcast it there
    for position, c in enumerate(labels):
        if c not in present:
            g = expand_dims(g, position)
    return unbroadcast(_widened(g, x, len(kept) < len(labels)), x)   # size-1 axes of x
    # that were broadcast are summed back


def _widened(g, x, missing):
    """``g`` broadcast along the axes where it has size 1 and ``x`` more: a letter only
    ``x`` has (``missing``), or one the other operands have with size 1 (numpy broadcasts
    ``"ij,jk"`` with a ``j`` of size 1 in one of them)."""
    if known(g.shape) and known(x.shape):
        shape = tuple(n if m == 1 else m for m, n in zip(g.shape, x.shape))
        return g if shape == tuple(g.shape) else broadcast_to(g, shape)
    return broadcast_as(g, x) if missing else g


defvjp_all(einsum_p, _vjp)


def _batch(values, batched, subscripts):
    """A batch of einsums is one einsum: a new letter for the batch axis, in front of
    each batched operand's letters and of the output's (``"ij,jk->ik"`` with a batched
    ``a`` is ``"Aij,jk->Aik"``)."""
    inputs, output = _split(subscripts)
    b = next(c for c in _LETTERS if c not in subscripts)
    terms = [b + term if is_batched else term for term, is_batched in zip(inputs, batched)]
    return einsum_explicit(",".join(terms) + "->" + b + output, *values), True


defbatch(einsum_p, _batch)


def _jvp(node, tangents):
    """Linear in each operand: the tangent is the sum over operands of the einsum with
    that operand replaced by its tangent."""
    subscripts = node.params["subscripts"]
    total = None
    for k, x_dot in enumerate(tangents):
        if x_dot is None:
            continue
        args = list(node.inputs)
        args[k] = x_dot
        part = einsum_explicit(subscripts, *args)
        total = part if total is None else total + part
    return [total]


defjvp_all(einsum_p, _jvp)


def _shape(*operands, subscripts):
    """The output's shape from the letters' sizes (None: unknown; 1 broadcasts)."""
    inputs, output = _split(subscripts)
    dtype = np.result_type(*[o.dtype for o in operands])
    if any(o.shape is None for o in operands):
        return [(None if output else (), dtype)]
    sizes = {}
    for letters, o in zip(inputs, operands):
        for c, n in zip(letters, o.shape):
            if n is None:
                sizes.setdefault(c, None)
            elif n != 1 or c not in sizes:
                sizes[c] = n if sizes.get(c) in (None, 1) else sizes[c]
    return [(tuple(sizes[c] for c in output), dtype)]


defshape(einsum_p, _shape)


def einsum_explicit(subscripts, *operands):
    """The primitive, given explicit subscripts (no ``...``, the output written)."""
    return innermost.process(einsum_p, *operands, subscripts=subscripts)


# -- reading numpy's spelling ----------------------------------------------------------

def _parse(subscripts, ndims):
    """numpy's ``subscripts`` for operands of ranks ``ndims`` as explicit subscripts: each
    ``...`` becomes letters (right-aligned, as broadcasting aligns axes) and an implicit
    output is written out (the broadcast axes, then the letters used once, sorted)."""
    where = "tg.einsum"
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        validate.fail(ValueError, where, "subscripts", "at most one '->'", subscripts)
    left, arrow, right = spec.partition("->")
    terms = left.split(",")
    if len(terms) != len(ndims):
        validate.fail(ValueError, where, "subscripts", f"one comma-separated term for each of "
                      f"the {len(ndims)} operands", subscripts)
    for term in terms + ([right] if arrow else []):
        if term.count("...") > 1 or any(c not in _LETTERS for c in term.replace("...", "")):
            validate.fail(ValueError, where, "subscripts", "letters and at most one '...' "
                          "per term", subscripts)
    spare = [c for c in _LETTERS if c not in spec]
    explicit, broadcast = [], 0
    for term, ndim in zip(terms, ndims):
        named = len(term.replace("...", ""))
        extra = ndim - named
        if extra < 0 or (extra > 0 and "..." not in term):
            validate.fail(ValueError, where, "subscripts", f"a term for each operand's rank "
                          f"(the term {term!r} is for one of the operands, of rank {ndim})",
                          subscripts)
        broadcast = max(broadcast, extra)
        explicit.append(term.replace("...", "".join(spare[len(spare) - extra:]) if extra else ""))
    axes = "".join(spare[len(spare) - broadcast:]) if broadcast else ""
    if arrow:
        if len(set(right.replace("...", ""))) != len(right.replace("...", "")):
            validate.fail(ValueError, where, "subscripts", "an output naming each letter once",
                          subscripts)
        if broadcast and "..." not in right:
            validate.fail(ValueError, where, "subscripts", "'...' in the output, since "
                          "the operands have axes that '...' stands for", subscripts)
        output = right.replace("...", axes)
        missing = set(output) - set("".join(explicit))
        if missing:
            validate.fail(ValueError, where, "subscripts", "output letters that some operand "
                          f"has (not {''.join(sorted(missing))!r})", subscripts)
    else:
        used = "".join(t.replace("...", "") for t in terms)
        output = axes + "".join(sorted(c for c in set(used) if used.count(c) == 1))
    return ",".join(explicit) + "->" + output


def einsum(subscripts, *operands):
    r"""Einstein summation, numpy's ``einsum``: $\mathrm{out} = \sum \prod_k x_k$ over the
    letters missing from the output, e.g. ``"ij,jk->ik"`` (matmul), ``"ii->"`` (trace),
    ``"ii->i"`` (diagonal), ``"...ij,...jk"`` (batched), ``"i,j"`` (outer product).

    Without ``->`` the output is the letters used once, in alphabetical order (after the
    axes ``...`` stands for). Computed by one backend ``einsum`` call.

    VJP: for operand $x_k$, $\bar x_k$ = einsum of ``ct`` with the other operands,
    labelled with $x_k$'s letters (with an identity matrix for a repeated letter, and
    broadcast along a letter only $x_k$ has).
    """
    if not isinstance(subscripts, str):
        validate.fail(TypeError, "tg.einsum", "subscripts", "a string such as 'ij,jk->ik'",
                      subscripts)
    operands = [as_tensor(o, f"operands[{i}]", "tg.einsum") for i, o in enumerate(operands)]
    if not operands:
        raise ValueError("tg.einsum: `operands`: give at least one tensor after the subscripts.")
    if any(o.shape is None for o in operands):
        raise ValueError("tg.einsum: `operands` must have known ranks (a placeholder with "
                         "shape=None has none).")
    explicit = _parse(subscripts, [o.ndim for o in operands])
    _check_sizes(explicit, subscripts, operands)
    return einsum_explicit(explicit, *operands)


def _check_sizes(explicit, subscripts, operands):
    """Refuse operands whose axes of one letter have different sizes (1 broadcasts),
    naming the letter as the user wrote it: a letter ``...`` stands for is no letter of
    theirs."""
    sizes = {}   # letter -> (its size, the operand that first had it)
    for k, (letters, o) in enumerate(zip(_split(explicit)[0], operands)):
        for c, n in zip(letters, o.shape):
            if n is None or n == 1:
                continue
            size, first = sizes.setdefault(c, (n, k))
            if size != n:
                axes = (f"the letter {c!r}" if c in subscripts.replace("...", "") else
                        "the axes '...' stands for (they broadcast, right-aligned)")
                validate.fail(ValueError, "tg.einsum", f"operands[{k}]", f"a tensor whose "
                              f"size along {axes} is {size}, as in operands[{first}] (or 1)", o)
