"""Buffer reuse: an elementwise node writes its result over an input nobody needs.

When a node is the last reader of one of its inputs, that input's array is
garbage the moment the node has run; an elementwise node can write its result
into it instead of asking for new memory (numpy's ``out=``). In the MLP,
``tanh(x @ W + b)`` can run entirely inside the array ``x @ W`` returned:
``fused: x0 := tanh(x0 + x1)``.

Overwriting is only safe for an array that nothing else will ever look at,
so the pass is conservative. An input ``x`` of an elementwise node is
*donated* to it only if

* the node is the last reader of ``x`` (nodes run in creation order), and
  ``x`` is not one of the function's outputs;
* ``x`` was made by a *fresh* op (its own new array: never a fed value, a
  Variable's value, a constant, or a view such as a reshape's output), and
  every reader of ``x`` *keeps no alias* of it (no reshape, transpose or
  identity of ``x`` can be alive and see it change); see ``effects.py``;
* ``x`` has the node's output shape (fully known) and dtype.

When the program runs it checks again that the array it was given is a
writable array of that shape and dtype, and allocates if not. The optimised
graph is meant to be run by its function: feeding one of its intermediate
tensors in a Session could let a program write over the fed array.
"""
from . import effects
from .elementwise import build_program, is_elementwise
from .program import program_op, run_program
from .rewrite import Rewriter


def donatable_input(node, readers, returned):
    """The index of an input ``node`` may write over, or None."""
    out = node.outputs[0]
    if out.shape is None or not out.shape or None in out.shape:
        return None
    for k, x in enumerate(node.inputs):
        if (x.id not in returned and x.shape == out.shape and x.dtype == out.dtype
                and effects.is_fresh(x.node.op)
                and readers[x.id][-1] is node
                and all(effects.keeps_no_alias(r.op) for r in readers[x.id])):
            return k
    return None


def reuse_buffers(fn):
    """``fn`` with each elementwise node that can write over an input made to do so."""
    readers = fn.consumers()
    returned = {t.id for t in fn.outputs}
    rw = Rewriter(fn)
    for node in fn.nodes:
        k = donatable_input(node, readers, returned) if is_elementwise(node) else None
        if k is None:
            rw.copy(node)
            continue
        fused = node.op.forward is run_program
        program, inputs = (node.params["program"], list(node.inputs)) if fused \
            else build_program([node])
        donor = node.inputs[k]
        program = program.with_donation(next(i for i, x in enumerate(inputs) if x is donor))
        out = node.outputs[0]
        new = rw.emit(program_op(program, fused=fused), [rw[x] for x in inputs],
                      {"program": program}, [(out.shape, out.dtype)], like=node)
        rw.alias_outputs(node, new)
        rw.note("reused", node, new, f"writes over {donor.node.label}'s buffer")
    return rw.finish()
