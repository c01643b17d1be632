"""Replaying a student's backward pass for a BackpropStepper, beside teachgrad's.

``replay(backward, run)`` runs the student's engine on ``run`` (from ``record``) and
returns what it reported as a ``Trace``: the queue's pops and appends (``Queue``),
the pending counts' changes (``Pending``) and the rule calls (``call_rule``).
``Beside`` shows it next to teachgrad's own run of the same graph, and names the
first step where they part (``first_difference``).
"""
import collections

import numpy as np

from ..viz.html_view import WAIT
from ..viz.widget import display_with_view
from .guard import student_code
from .protocol import steps, watch, watching


def _events():
    from ..autodiff import events
    return events


class _Reporter:
    """Where a replay's events go (the ``reporter`` of the ``Watch``)."""

    def __init__(self, run):
        # Inside `with tg.viz.record() as rec:` the events go to rec, like the engine's.
        self.run = run
        self.trace = _events().current_observer() or _events().Trace()
        self.pending, self.started = {}, False

    def start(self, queue):
        """Report the Start: every node of the run (so that the stepper draws and names
        them all, whatever the engine counted), with the counts of the engine's
        ``Pending``; a node it did not count has None (shown as "not counted")."""
        self.started = True
        counts = {node: self.pending.get(node) for node in self.run.nodes()}
        counts.update(self.pending)
        self.emit(_events().Start((self.run.target,), tuple(self.run.sources), counts,
                                  queue))

    def called(self, node, out_grads, in_grads):
        if not self.started:
            self.start((node,))
        self.emit(_events().CallVJP(node, f"{node.op.name} VJP", tuple(out_grads),
                                    tuple(in_grads)))

    def emit(self, event):
        self.trace.events.append(event)


def _reporter():
    return watch().reporter


class Pending(dict):
    """Pending counts (node -> count) that report each change to the run being replayed.

    Use it like a dict: ``pending = tg.exercises.Pending(count_pending(target, producer))``;
    ``pending[node] -= 1`` reports a Release. Outside ``replay`` it is a plain dict."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if _reporter() is not None:
            _reporter().pending = self
        if watch().counts is not None:      # a check keeps the counts it started from
            watch().counts.append(dict(self))

    def __setitem__(self, node, count):
        super().__setitem__(node, count)
        reporter = _reporter()
        if reporter is not None and reporter.started:
            reporter.emit(_events().Release(node, count))


class Queue(collections.deque):
    """A queue of nodes that reports to the run being replayed: the first ``popleft`` (or
    ``pop``) starts the pass (Start, with the pending counts and the queue), each one is
    a Pop, each later ``append`` an Enqueue. Outside ``replay`` it is a plain deque."""

    def popleft(self):
        return self._report_pop(super().popleft)

    def pop(self):
        """The last node in (a stack: last in, first out); reported as a Pop too."""
        return self._report_pop(super().pop)

    def _report_pop(self, take):
        reporter = _reporter()
        if reporter is not None and not reporter.started:
            reporter.start(tuple(self))
        node = take()
        if reporter is not None:
            reporter.emit(_events().Pop(node, tuple(self)))
        return node

    def append(self, node):
        super().append(node)
        reporter = _reporter()
        if reporter is not None and reporter.started:
            reporter.emit(_events().Enqueue(node))


def replay(student_backward, run):
    """Run ``student_backward`` on ``run`` (from ``record``) and return its events as a
    ``Trace`` for ``tg.viz.BackpropStepper``: what the engine reported through
    ``Queue``, ``Pending`` and ``call_rule``, then its result. Inside
    ``with tg.viz.record() as rec:`` the trace is also one of ``rec.traces``, as a run
    of teachgrad's engine would be. Nothing is simulated: an engine that uses a plain
    deque and dict reports its rule calls only. It runs under the checks' limits (a
    step budget of rule calls, and a time limit)."""
    reporter = _Reporter(run)
    with watching(reporter=reporter, calls=[], budget=steps(run)), \
            student_code("your backward pass", "engine"):
        grads = student_backward(run.target, list(run.sources), run.producer)
    if not reporter.started:
        reporter.start(())
    grads = tuple(grads) if isinstance(grads, (list, tuple)) else (grads,)
    reporter.emit(_events().Finish(grads))
    return reporter.trace


def first_difference(reference, yours, run):
    """Where two traces of ``run`` first differ (the kind of event, or its node):
    ``(step in reference, step in yours)``, or None when they agree throughout.
    Aggregate events are passed over (a student's engine sums without reporting)."""
    def steps(trace):
        return [(k, type(e).__name__, run.label(e.node) if getattr(e, "node", None) is not None
                 else None) for k, e in enumerate(trace.events)
                if type(e).__name__ != "Aggregate"]
    ref, mine = steps(reference), steps(yours)
    for a, b in zip(ref, mine):
        if a[1:] != b[1:]:
            return a[0], b[0]
    if len(ref) == len(mine):
        return None
    k = min(len(ref), len(mine))
    return (ref[k][0] if k < len(ref) else len(reference.events) - 1,
            mine[k][0] if k < len(mine) else len(yours.events) - 1)


def first_value_difference(reference, yours):
    """Where two traces that take the same steps first hand on different values: the
    first rule call whose cotangents in or out differ (where both runs computed them),
    or the end if only the final gradients do, as ``(step in reference, step in
    yours)``; None when all agree."""
    def compared(trace):
        return [(k, e) for k, e in enumerate(trace.events)
                if type(e).__name__ in ("CallVJP", "Finish")]
    for (k, a), (j, b) in zip(compared(reference), compared(yours)):
        ours, theirs = _values(a), _values(b)
        if len(ours) != len(theirs) or not all(map(_same_value, ours, theirs)):
            return k, j
    return None


def _values(event):
    if type(event).__name__ == "Finish":
        return tuple(event.gradients)
    return tuple(event.output_grads) + tuple(event.input_grads)


def _same_value(a, b):
    if a is None or b is None:   # not computed by one run (the engine skips what no one
        return True              # needs, a student's call_rule does not): nothing to compare
    a, b = _host(a), _host(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


def _host(value):
    if hasattr(value, "to_dense"):          # an IndexedSlices
        value = value.to_dense()
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=float)


#: The narrowest a stepper of ``Beside`` gets: two side by side from twice this.
PANEL_MIN = "540px"
_REFERENCE = "teachgrad's run (the reference)"
_YOURS = "Your run (your engine, replayed)"


class Beside:
    """teachgrad's run and a student's (``replay``), in two BackpropSteppers side by side,
    with the first step where they differ named above them."""

    def __init__(self, reference, yours, run):
        from .. import viz
        self.first = first_difference(reference, yours, run)
        names = run.names()    # x0, n0, n1, ...: the names the check's messages use
        self.reference = viz.BackpropStepper(reference, labels=names)
        self.yours = viz.BackpropStepper(yours, labels=names)
        self.values_part = None if self.first else first_value_difference(reference, yours)
        if self.first is None and self.values_part is None:
            self.note = ("Your run and teachgrad's take the same steps (teachgrad's also "
                         "reports each sum of several contributions).")
        elif self.first is None:
            k, j = self.values_part
            self.note = (f"Your run and teachgrad's take the same steps, but the values part "
                         f"at teachgrad's step {k} and your step {j}: step both steppers "
                         f"there and compare the gradients each hands on.")
        else:
            self.note = (f"The runs part at teachgrad's step {self.first[0]} and your step "
                         f"{self.first[1]} (teachgrad's run comes first, yours second; each "
                         f"has its title): step both steppers there.")

    @property
    def widget(self):
        """The two steppers, each under a title that says whose run it is, in two equal
        columns (``PANEL_MIN`` wide at least: in a narrower notebook one goes under the
        other). Their widths are set, not taken from what a frame holds, so that
        stepping never reflows them."""
        import ipywidgets as widgets
        panels = []
        for title, stepper, css in ((_REFERENCE, self.reference, "tg-beside-reference"),
                                    (_YOURS, self.yours, "tg-beside-yours")):
            panel = widgets.VBox([widgets.HTML(f'<h4 class="tg-beside-title">{title}</h4>'),
                                  stepper.widget],
                                 layout=widgets.Layout(flex="1 1 0px", min_width=PANEL_MIN,
                                                       max_width="100%", margin="0 6px 8px 0"))
            panel.add_class(css)
            panels.append(panel)
        row = widgets.HBox(panels, layout=widgets.Layout(flex_flow="row wrap", width="100%"))
        box = widgets.VBox([widgets.HTML(f"<b>{self.note}</b>"), row])
        box.add_class("tg-beside")
        return box

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_()
        bundle["text/plain"] = "\n\n".join([self.note, "teachgrad's run:",
                                             self.reference.text(), "your run:",
                                             self.yours.text()])
        bundle["text/html"] = (f"<p><b>{self.note}</b></p><h4>{_REFERENCE}</h4>"
                               + self.reference.static_html() + f"<h4>{_YOURS}</h4>"
                               + self.yours.static_html())
        return bundle

    def _ipython_display_(self):
        # where the widget cannot render, both steppers step in the page (html_view.py)
        display_with_view(self._repr_mimebundle_, lambda wait=WAIT: (
            self.reference.html_view(f"<h4>{_REFERENCE}</h4>", wait)
            + self.yours.html_view(f"<h4>{_YOURS}</h4>", wait)))
