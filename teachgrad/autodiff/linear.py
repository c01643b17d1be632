"""``tg.linearize`` and ``tg.linear_transpose``, JAX's two linear-map transformations.

Near a point ``x``, ``f`` is its linear map ``t -> J t`` (the JVP). Reverse mode gives
the *transpose* of that map, ``u -> J^T u`` (the VJP). The two are transposes of one
another, and that is the whole trick of lesson 5:

* ``tg.linear_transpose(f, *primals)`` takes a function ``f`` that is linear in its
  arguments and returns ``f_t``, its transpose: ``<f(x), u> = <x, f_t(u)>`` for every
  ``x`` and ``u``. It records ``f`` once on a tape; ``f_t(u)`` is a backward pass over
  that tape seeded with ``u``. Transposing a VJP function (linear in its cotangent)
  gives the JVP: ``tg.linear_transpose(vjp_fn, u)(x_dot) == (J x_dot,)``.
* ``tg.linearize(f, *primals)`` returns ``(f(*primals), f_jvp)``, where ``f_jvp(*t)``
  is ``J t``, evaluated at as many tangents as you like without running ``f`` again.
  It is built from the same two steps: the VJP ``g(u) = J^T u`` recorded once on a
  second tape, and ``f_jvp(t)`` the transpose of ``g`` applied to ``t``.
"""
from .. import nest, validate
from ..ops import ones_like
from .arguments import as_outputs, dense, like_tree, own_leaves, split_aux
from .tape import GradientTape


def _checked(f, primals, where):
    validate.callable_(f, "f", where)
    if not primals:
        validate.fail(ValueError, where, "primals", "at least one value (the point, or for "
                      "a linear f the shapes and dtypes of its arguments)", primals)
    validate.arity(f, len(primals), "primals", where)
    return own_leaves(list(primals), [f"primals[{i}]" for i in range(len(primals))], where)


def _leaves(primals):
    return [leaf for p in primals for leaf in nest.tree_leaves(p)]


def _record(f, primals, where, has_aux=False):
    """Run ``f(*primals)`` on a persistent tape watching every primal leaf;
    ``(tape, flat primal leaves, out, aux)``."""
    flat = _leaves(primals)
    with GradientTape(persistent=True) as tape:
        tape.watch(flat)
        out, aux = split_aux(f(*primals), has_aux, where)
        out = as_outputs(out, where)
    return tape, flat, out, aux


def linear_transpose(f, *primals):
    """The transpose of the linear function ``f``: ``f_t(cotangent)`` returns one
    cotangent per primal, each a pytree like its primal, with
    ``<f(x), cotangent> = <x, f_t(cotangent)>``.

    ``primals`` give the arguments' structure, shapes and dtypes (their values do not
    matter to a linear ``f``). ``f_t`` checks that its cotangent has the structure,
    shapes and dtypes of ``f``'s output. An ``f`` whose derivative depends on the point
    (``x * x``, ``tanh``) is not linear and is refused; a constant offset
    (``x + 1``) is ignored, as in JAX, and a piecewise linear ``f`` (``relu``) is
    transposed as the piece it is on at ``primals``.

    >>> f_t = tg.linear_transpose(lambda x: 3.0 * x, 1.0)
    >>> f_t(2.0)        # (6.,): the transpose of multiplying by 3 is multiplying by 3
    """
    where = "tg.linear_transpose"
    primals = _checked(f, primals, where)
    with GradientTape(persistent=True) as outer:   # sees f and its VJP, to check linearity
        outer.watch(_leaves(primals))
        tape, flat, out, _ = _record(f, primals, where)
        aids = [ones_like(y) for y in nest.tree_leaves(out)]
        backward = tape.gradient(nest.tree_leaves(out), flat, output_gradients=aids)
    _check_linear(outer, backward, flat, primals, where)

    def f_t(cotangent):
        cotangent = like_tree(cotangent, out, where, "the cotangent", "the output of f",
                              same_dtype=True)
        grads = iter(tape.gradient(nest.tree_leaves(out), flat,
                                   output_gradients=nest.tree_leaves(cotangent)))
        return tuple(nest.tree_map(lambda leaf: dense(next(grads), leaf), p) for p in primals)
    return f_t


def _check_linear(outer, backward, flat, primals, where):
    """Refuse ``f`` if its VJP ``backward`` (= J^T u) depends on the primals: then J does."""
    connected = [g for g in backward if g is not None]
    if not connected:
        return
    depends = outer.gradient(connected, flat)
    paths = [f"primals[{i}]{path}" for i, p in enumerate(primals)
             for path in nest.leaf_paths(p)]
    found = [path for path, d in zip(paths, depends) if d is not None]
    if found:
        raise TypeError(f"{where}: `f` is not linear: its derivative depends on the value of "
                        f"{', '.join(found)} (as that of x * x or tanh(x) does), so it has "
                        f"no transpose. Transpose a linear map, e.g. the VJP function that "
                        f"tg.vjp returns, or take tg.linearize(f, x) first.")


def linearize(f, *primals, has_aux=False):
    """``(f(*primals), f_jvp)``: ``f_jvp(*tangents)`` is the JVP ``J t`` at ``primals``
    (tangents nested as the primals, leaf by leaf of their shapes), in ``f``'s output
    structure; ``(out, f_jvp, aux)`` with ``has_aux=True``.

    ``f`` runs once. Its VJP ``g(u) = J^T u`` is recorded once, on a second tape, as a
    function of an aid vector ``u``; each call of ``f_jvp`` transposes that linear map,
    ``J t = d<g(u), t>/du``, a backward pass over the second tape.
    """
    where = "tg.linearize"
    validate.boolean(has_aux, "has_aux", where)
    primals = _checked(f, primals, where)
    tape, flat, out, aux = _record(f, primals, where, has_aux)
    outs = nest.tree_leaves(out)
    aids = [ones_like(y) for y in outs]
    with GradientTape(persistent=True) as transpose_tape:
        transpose_tape.watch(aids)
        backward = [None if g is None else dense(g, x)
                    for g, x in zip(tape.gradient(outs, flat, output_gradients=aids), flat)]
    pairs = [(g, k) for k, g in enumerate(backward) if g is not None]
    out_def = nest.tree_structure(out)

    def f_jvp(*tangents):
        tangents = like_tree(tangents, tuple(primals), where, "tangents", "primals")
        t = nest.tree_leaves(tangents)
        if not pairs:
            return nest.tree_unflatten(out_def, [dense(None, y) for y in outs])
        tangent_out = transpose_tape.gradient([g for g, _ in pairs], aids,
                                              output_gradients=[t[k] for _, k in pairs],
                                              unconnected_gradients="zero")
        return nest.tree_unflatten(out_def, tangent_out)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)
