"""Forward mode: Jacobian-vector products computed alongside the forward pass.

A ``ForwardAccumulator`` watches primals with tangents. Every op that reads a
tensor with a tangent gets an output tangent right away, computed one of two
ways:

* by the op's native JVP rule, when it declares one (``defjvp``);
* otherwise by **transposing its VJP rule** (TensorFlow's ``_jvp_helper``): the
  VJP rule applied to an aid vector ``u`` (ones shaped like the output) gives
  ``g(u) = J^T u``, which is linear in ``u``. Differentiating ``<g(u), t>``
  with respect to ``u`` on a second tape gives ``J t``: the output tangent.
  So every op with a VJP rule has forward mode for free.

An accumulator entered while a graph is built gives that graph's nodes
tangents, as graph nodes; one entered in eager code sees eager ops only (a call
of a ``tg.function`` is one op, whose JVP transposes the call's gradient).

One rule, two speeds, as in the backward pass: when nothing sees the tangent
computations (no tape or accumulator entered before this one, no graph, no
visualizer, no ``tg.vectorized_map``), the native rules run on raw arrays
(``jvp_on_arrays``). The tangents are then kept as arrays, and boxed as Tensors
only when they leave: ``acc.jvp(y)`` always returns Tensors.
"""
import warnings
import weakref

from .. import nest, validate
from ..ops import IndexedSlices, ones_like, zeros_like
from ..ops.core.apply import mode
from ..state import override, per_thread, state
from ..tensor import SymbolicTensor, Tensor
from . import events
from .aggregation import UnconnectedGradients, unconnected as unconnected_option
from .pending import trainable
from .rule_calls import boxed, call_vjp, unboxed


class ForwardAccumulator:
    """Computes JVPs of everything computed from ``primals`` while it is active.

    For example, the derivative of ``x ** 3`` at 2 in the direction 1::

        x = tg.constant(2.0)
        with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
            y = x ** 3
        acc.jvp(y)          # 3 x^2 = 12.0

    Args:
      primals: a tensor or Variable, or a nested structure of them, to watch.
      tangents: the "vector" of the Jacobian-vector product for each primal
        (same structure, same shapes).
    """

    differentiates = True   # a recorder that takes derivatives (see teachgrad.state)

    def __init__(self, primals, tangents):
        self._tangents = {}     # tensor id -> (tangent, weak reference to the tensor)
        self._grown = set()     # nodes given tangents that gained outputs since
        self._recording = False
        self.entry = -1         # its place on the recorder stack
        self.graph = state.graph   # the graph whose nodes it gives tangents (None: eager)
        self._observer = None
        seen = set()
        for primal in nest.flatten(primals):
            if id(primal) in seen:
                raise ValueError(f"Tensor {getattr(primal, 'name', None) or primal!r} was "
                                 "specified as a primal multiple times. If that was intended, "
                                 "sum the corresponding tangents instead.")
            seen.add(id(primal))
        self._watch(primals, tangents)

    def __enter__(self):
        if self._recording:
            raise ValueError("This ForwardAccumulator is already recording; it cannot be "
                             "entered twice.")
        self.entry = state.next_entry()
        self.graph = state.graph
        self._observer = events.current_observer()
        state.push(self)
        self._recording = True
        return self

    def __exit__(self, *exc):
        if self._recording:
            state.remove(self)
            self._recording = False

    def _watch(self, primals, tangents):
        """Start tracking ``primals``; watching a tensor again adds the tangents."""
        nest.assert_same_structure(primals, tangents, "primals and tangents")
        for primal, tangent in zip(nest.flatten(primals), nest.flatten(tangents)):
            if not isinstance(primal, Tensor):
                raise TypeError(f"Primals must be tensors or Variables, not "
                                f"{type(primal).__name__}.")
            if not trainable(primal):
                warnings.warn(f"The dtype of the watched primal must be floating (e.g. "
                              f"tg.float32), got {primal.dtype}.", stacklevel=3)
            if not isinstance(tangent, Tensor):
                tangent = Tensor(validate.tensor_like(tangent, "tangents",
                                                      "tg.ForwardAccumulator", primal.dtype))
            if tuple(tangent.shape) != tuple(primal.shape):
                raise ValueError(f"The tangent has shape {tuple(tangent.shape)} but its primal "
                                 f"has shape {tuple(primal.shape)}; they must match (each of "
                                 f"tangents has the shape of its entry in primals).")
            old = self._lookup(primal)
            self._store(primal, tangent if old is None else old + tangent)

    def _store(self, tensor, tangent):
        tangents = self._tangents
        key = tensor.id
        # Forget a tangent as soon as its tensor is gone (as TensorFlow does).
        tangents[key] = (tangent, weakref.ref(tensor, lambda _, k=key: tangents.pop(k, None)))

    def _lookup(self, tensor):
        """``tensor``'s tangent as kept: a Tensor, or an array (``jvp_on_arrays``)."""
        entry = self._tangents.get(tensor.id)
        return None if entry is None else entry[0]

    def output_added(self, node, tensor):
        """A While or If node gained an output (a value its gradient saves) while its
        gradient was built. If the node has inputs with tangents, the new output
        gets one too, when something reads it (``_tangent_of``): the node's gradient
        is being built right now, so it is not asked for another one in the middle."""
        if any(self._lookup(x) is not None for x in node.inputs):
            self._grown.add(node)

    def _tangent_of(self, tensor):
        """``tensor``'s tangent; a grown node's new outputs get theirs first."""
        if self._grown:
            node = getattr(tensor, "node", None)
            if node in self._grown and self._lookup(tensor) is None:
                self._grown.discard(node)
                self._give_tangents(node, [self._lookup(x) for x in node.inputs])
        return self._lookup(tensor)

    def capture(self, outer, inner):
        """A loop body or branch captured ``outer`` as ``inner``: same tangent."""
        tangent = self._lookup(outer)
        if tangent is not None and inner.id not in self._tangents:
            self._store(inner, tangent)

    def read_variable(self, variable, snapshot):
        """An op read a Variable: its snapshot carries the Variable's tangent."""
        tangent = self._lookup(variable)
        if tangent is not None and snapshot.id not in self._tangents:
            self._store(snapshot, tangent)

    def record(self, node):
        """An op ran: give its outputs tangents, if any input has one."""
        tangents = [self._tangent_of(x) for x in node.inputs]
        for t in tangents:   # a loop, not any(): this runs for every op
            if t is not None:
                self._give_tangents(node, tangents)
                return

    def _give_tangents(self, node, tangents):
        """Compute ``node``'s output tangents from its input ``tangents`` (only the
        recorders entered before this one see that computation), and keep those of
        outputs that have none yet. Seen by no one, it runs on raw arrays."""
        outputs = node.outputs
        if self._unseen():
            out_tangents = jvp_on_arrays(node, tangents)
        else:   # a recorder may differentiate these tangents: Tensors
            with override(recorders=state.recorders_below(self)):
                out_tangents = jvp_of(node, [boxed(t) for t in tangents], self._observer)
        for out, t in zip(outputs, out_tangents):
            if t is not None and out.id not in self._tangents and trainable(out):
                self._store(out, t.to_dense() if isinstance(t, IndexedSlices) else t)
        if len(node.outputs) > len(outputs):   # transposing a While's VJP saved values
            self._grown.add(node)

    def _unseen(self):
        """Would no one see this accumulator's tangent computations? Not a tape or an
        accumulator entered before it (they differentiate them), a graph, a tg.debug
        check, a visualizer, a ``tg.vectorized_map`` (``state.unseen``)."""
        now = per_thread.state
        recorders = now.recorders   # ordered by entry: first on it, none before it
        return (self._observer is None and now.graph is None and not now.batching
                and bool(recorders) and recorders[0] is self
                and (len(recorders) == 1 or events.listener(recorders) is None))

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The JVPs computed for ``primals`` (a tensor or a structure of them).

        Only looks them up: a JVP exists for a tensor computed from the watched
        primals while this accumulator was active. Otherwise None, or zeros
        with ``unconnected_gradients="zero"``.
        """
        unconnected = unconnected_option(unconnected_gradients, "ForwardAccumulator.jvp")

        def fetch(tensor):
            if not isinstance(tensor, Tensor):
                validate.fail(TypeError, "ForwardAccumulator.jvp", "primals", "a tensor (or "
                              "a structure of tensors) computed while the accumulator was "
                              "active", tensor)
            tangent = self._tangent_of(tensor)
            if tangent is None and unconnected is UnconnectedGradients.ZERO:
                return zeros_like(tensor)
            if tangent is not None and not isinstance(tangent, Tensor):
                tangent = Tensor(tangent)         # kept as an array: boxed once, and
                self._store(tensor, tangent)      # the same Tensor ever after
            return tangent
        return nest.pack_sequence_as(primals, [fetch(t) for t in nest.flatten(primals)])


def transposition_only():
    """Compute every JVP in the block by transposing VJP rules, even where an op
    has a native JVP rule (for comparing the two, in tests and lessons)."""
    return override(native_jvp=False)


def jvp_of(node, tangents, observer=None):
    """Output tangents of ``node`` given its input tangents (None = zero)."""
    op = node.op
    if not op.differentiable:
        return [None] * len(node.outputs)
    if op.jvp is not None and per_thread.state.native_jvp:
        out = op.jvp(node, tangents)
        if observer is not None:
            observer(events.JVP(node, "native", tuple(tangents), tuple(out), None, None))
        return out
    return transposed_jvp(node, tangents, observer)


def jvp_on_arrays(node, tangents):
    """``jvp_of`` when nothing sees the tangents computed: on raw arrays.

    A native rule of teachgrad's runs as a VJP rule does in a backward pass nothing
    records (``state.arrays``): it is handed the node's arrays and the tangents as
    arrays, and its ops return arrays, making no Tensor or Node. A rule that needs
    Tensors (a user's rule, a custom gradient's, control flow, a traced call), and
    every JVP by transposition, is handed boxed tangents and its results unboxed; a
    transposition's second half, the transpose tape's backward pass, then runs on
    arrays by itself (nothing records it).
    """
    op = node.op
    if op.array_jvp and per_thread.state.native_jvp:
        # Ops on arrays reach no recorder. Tangents are kept dense: a Tensor's array.
        with mode(arrays=True):
            return op.jvp(node, [t.value if isinstance(t, Tensor) else t
                                 for t in tangents], True)
    with override(recorders=()):
        out = jvp_of(node, [boxed(t) for t in tangents])
    return [None if t is None else unboxed(t) for t in _dense_all(out)]


def _dense_all(grads):
    return [g.to_dense() if isinstance(g, IndexedSlices) else g for g in grads]


def transposed_jvp(node, tangents, observer):
    """J t, from the VJP rule: differentiate <g(u), t> with respect to the aid u."""
    from .gradients import gradients
    from .tape import GradientTape
    needed = [t is not None and trainable(x) for x, t in zip(node.inputs, tangents)]
    # Taken once: a control-flow node gains outputs while its VJP rule runs.
    node_outputs = node.outputs
    outputs = [y for y in node_outputs if trainable(y)]
    if not outputs or not any(needed):
        return [None] * len(node.outputs)
    symbolic = isinstance(node.outputs[0], SymbolicTensor)
    aids = [ones_like(y) for y in outputs]
    if not symbolic:   # named, so a drawing of the transpose tape shows them as u
        for k, u in enumerate(aids):
            u.name = "u" if len(aids) == 1 else f"u{k}"
    aid_iter = iter(aids)
    out_grads = [next(aid_iter) if trainable(y) else None for y in node_outputs]
    if symbolic:
        backward = _dense_all(call_vjp(node, out_grads, needed))
    else:
        with GradientTape() as transpose_tape:
            transpose_tape.watch(aids)
            # Densified while recording, so that g(u) stays connected to the aids.
            backward = _dense_all(call_vjp(node, out_grads, needed))
    pairs = [(g, t) for g, t, need in zip(backward, tangents, needed)
             if need and g is not None]
    if not pairs:
        result = [None] * len(outputs)
    elif symbolic:
        result = gradients([g for g, _ in pairs], aids, grad_ys=[t for _, t in pairs],
                           unconnected_gradients="zero")
    else:
        result = transpose_tape.gradient([g for g, _ in pairs], aids,
                                         output_gradients=[t for _, t in pairs],
                                         unconnected_gradients="zero")
    result_iter = iter(result)
    out = [next(result_iter) if trainable(y) else None for y in node_outputs]
    if observer is not None:
        observer(events.JVP(node, "transpose", tuple(tangents), tuple(out), tuple(aids),
                            tuple(backward)))
    return out
