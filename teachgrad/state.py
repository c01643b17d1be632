"""What is recording now: the one piece of mutable state behind every op.

Every op is handed to the thread's innermost **interpreter**
(``teachgrad.ops.core.apply``: eager computation, a graph being built, a running
``tg.vectorized_map``, a backward pass on raw arrays), which follows from this state's
``graph``, ``batching`` and ``arrays``; the interpreter hands each recorder the op's
``Node``. Everything that watches ops is a **recorder** on one stack:

* a ``GradientTape`` (reverse mode),
* a ``ForwardAccumulator`` (forward mode),
* a variable watcher (``custom_gradient`` collects the Variables its function reads),
* a ``tg.debug`` check (``check_numerics``, ``verify_gradients``, ``record_sources``),
  which also sees each node a ``Session`` runs (``checks()``).
* a ``tg.viz.record()`` block (``teachgrad.autodiff.events.Recorder``), which keeps no
  node but hears every backward pass: the engine reports to the innermost one.

A recorder has one written interface, ``teachgrad.ops.core.recorder.Recorder``::

    recorder.graph                       # the graph it was entered in (None: eager)
    recorder.differentiates              # does it take derivatives (tape, accumulator)?
    recorder.entry                       # its place in the stack's order
    recorder.record(node)                # an op ran (eager) or was added to a graph
    recorder.read_variable(var, tensor)  # an op read Variable ``var`` through ``tensor``
    recorder.capture(outer, inner)       # a loop body or branch captured ``outer`` as ``inner``
    recorder.output_added(node, tensor)  # a While or If node gained an output

A tape or accumulator sees the ops of the context it was entered in: one
entered in eager code sees eager ops (and a call of a ``tg.function`` as one
op); one entered while a graph is built (inside ``tg.function``, or ``with
graph.as_default():``) sees that graph's nodes. The stack is ordered by entry,
and a forward-mode accumulator computes its tangents with only the recorders
below it active: so a recorder sees the derivative computations of those
entered after it, which is how nested derivatives work (TensorFlow's order).

``override(field=value, ...)`` changes fields for a block and restores them
after, whatever happens: the one way code here changes the state (``mode``, its
subclass in ``teachgrad.ops.core.apply``, for the fields that choose the interpreter).

The state belongs to a thread, as TensorFlow's context does: each thread has its
own ``RecordingState``, so a tape, a graph made the default, a vectorized map or a
check entered in one thread neither sees nor changes the ops of another.
``current()`` is the calling thread's state (the hot paths read it once);
``state`` is a view that reads and writes whichever thread uses it.
"""
import itertools
import threading


class RecordingState:
    """The fields every op consults. Each thread has one (``current()``)."""

    __slots__ = ("graph", "recorders", "gradient_of", "control_context",
                 "native_jvp", "arrays", "batching", "_entries")

    def __init__(self):
        #: The graph ops add nodes to now, or None when they compute eagerly.
        self.graph = None
        #: Recorders, in the order they were entered (innermost last).
        self.recorders = ()
        #: The forward node whose VJP rule is running, if any: graphs group the
        #: gradient nodes it makes under it, and debug checks note it.
        self.gradient_of = None
        #: The eager loop iteration or cond branch running now, if any: nodes
        #: recorded meanwhile carry it, so the visualizers can show it.
        self.control_context = None
        #: False inside ``transposition_only()``: forward mode ignores native JVP rules.
        self.native_jvp = True
        #: True while a backward pass that nothing records runs its VJP rules on raw
        #: backend arrays (see ``teachgrad.autodiff.engine``): ops then compute and
        #: return arrays, and make no Tensor or Node.
        self.arrays = False
        #: The ``tg.vectorized_map`` calls running now (their frames, see
        #: ``teachgrad.autodiff.batch_fallback``), innermost last: ops given their
        #: BatchedTensors run batching rules.
        self.batching = ()
        self._entries = itertools.count()

    def unseen(self):
        """Would no one see the ops run now? True when no graph is being built, no
        recorder is on (a tape, an accumulator, a tg.debug check, a watcher, a
        ``tg.viz.record()`` block listening for backward passes) and no
        ``tg.vectorized_map`` runs: ops may then run on raw arrays (``arrays``), since
        nothing needs their Tensors or Nodes."""
        return self.graph is None and not self.recorders and not self.batching

    def next_entry(self):
        """An entry number later than every recorder's so far (the stack's order)."""
        return next(self._entries)

    def push(self, recorder):
        """Put ``recorder`` on the stack, at the place its ``entry`` number gives it."""
        below = tuple(r for r in self.recorders if r.entry < recorder.entry)
        above = tuple(r for r in self.recorders if r.entry > recorder.entry)
        self.recorders = below + (recorder,) + above

    def remove(self, recorder):
        """Take ``recorder`` off the stack (if it is on it)."""
        self.recorders = tuple(r for r in self.recorders if r is not recorder)

    def recorders_below(self, recorder):
        """The recorders entered before ``recorder``: those that see what it computes
        (and every ``tg.viz.record()`` block, which hears backward passes wherever
        they run)."""
        return self.recorders_before(recorder.entry)

    def recorders_before(self, entry):
        """The recorders entered before entry number ``entry`` (a recorder's, or a
        ``vectorized_map``'s), and those that hear every backward pass (``hears_backward``:
        a ``tg.viz.record()`` block, entered before or after)."""
        return tuple(r for r in self.recorders
                     if r.entry < entry or getattr(r, "hears_backward", False))

    def without_derivatives(self):
        """The recorders other than tapes and accumulators (watchers, checks)."""
        return tuple(r for r in self.recorders if not r.differentiates)

    def checks(self):
        """The tg.debug checks on now (recorders that see every op, and graph runs)."""
        return tuple(r for r in self.recorders if getattr(r, "checks_ops", False))

    def tapes(self):
        """The tapes recording now, innermost last (for the diagnostics)."""
        return tuple(r for r in self.recorders if r.differentiates and hasattr(r, "gradient"))


class _PerThread(threading.local):
    """Holds each thread's ``RecordingState``, made on the thread's first op."""

    def __init__(self):
        self.state = RecordingState()


#: ``per_thread.state`` is the calling thread's ``RecordingState`` (what ``current()``
#: returns, without the call: an op's path reads it so).
per_thread = _PerThread()


def current():
    """The calling thread's ``RecordingState``."""
    return per_thread.state


class ThisThread:
    """``state``: reads and writes the fields of the calling thread's ``RecordingState``
    (``state.graph`` is ``current().graph``), for code that reads a field or two. An op's
    path reads ``current()`` once instead: each read through here finds the thread's
    state again."""

    __slots__ = ()

    def __getattr__(self, name):
        return getattr(per_thread.state, name)

    def __setattr__(self, name, value):
        setattr(per_thread.state, name, value)


state = ThisThread()


class override:
    """Set fields of ``state`` for the duration of the block, then restore them.

    >>> with override(recorders=(), gradient_of=None):
    ...     ...   # seen by no recorder

    (A class rather than a generator: it runs for every node of a forward-mode pass and
    every op inside tg.vectorized_map, where a generator's setup cost a microsecond.)
    """

    __slots__ = ("fields", "saved", "owner")

    #: The fields that choose which interpreter runs ops: only ``mode`` (in
    #: ``teachgrad.ops.core.apply``), which also switches the interpreter, sets them.
    MODE_FIELDS = frozenset({"graph", "batching", "arrays"})
    switches_mode = False

    def __init__(self, **fields):
        if not self.switches_mode and not self.MODE_FIELDS.isdisjoint(fields):
            raise TypeError(f"override() cannot set {sorted(self.MODE_FIELDS & set(fields))}: "
                            "they choose the interpreter; use teachgrad.ops.core.apply.mode")
        self.fields = fields

    def __enter__(self):
        owner = self.owner = per_thread.state
        saved = self.saved = []   # (plain loops: no comprehension to set up per block)
        for name, value in self.fields.items():
            saved.append(getattr(owner, name))
            setattr(owner, name, value)
        return owner

    def __exit__(self, *exc_info):
        owner = self.owner
        for name, value in zip(self.fields, self.saved):
            setattr(owner, name, value)
        return False

