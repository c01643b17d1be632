"""A stepper's close() frees what its widget made (issue 41, item 11).

ipywidgets keeps every widget it makes in a registry until the widget is closed, and
a stepper's widget is about 90 of them: the controls, one HTML page per frame, their
Layouts and Styles, and the jslink Links joining play, slider, box and frames. Closing
only the root left all the rest registered (889 KiB a stepper). Here 200 steppers of
each kind are built and closed: the number of live widgets must not grow at all, and
the memory only by what caches fill once (a generous bound, far below a stepper's).
"""
import gc
import tracemalloc

import pytest

import teachgrad as tg

widgets = pytest.importorskip("ipywidgets")
widget_module = pytest.importorskip("ipywidgets.widgets.widget")

STEPPERS = 200
# Bytes the memory may grow by per stepper built and closed: caches of names and trait
# metadata fill on the first few; a stepper that leaked its widgets kept over 250 KiB.
ALLOWED_PER_STEPPER = 16 * 1024


def _backprop_stepper():
    x = tg.constant(0.5)
    with tg.GradientTape() as tape:
        tape.watch(x)
        a = x * x
        y = a + tg.sin(a)
    with tg.viz.record() as rec:
        tape.gradient(y, x)
    return tg.viz.BackpropStepper(rec.traces[0])


def _jvp_stepper():
    x, x_dot = tg.constant([1.0, 2.0]), tg.constant([1.0, 0.5])
    with tg.viz.record() as rec:
        with tg.transposition_only(), tg.ForwardAccumulator(x, x_dot):
            tg.sum(tg.tanh(x) * x)
    return tg.viz.JVPStepper(rec)


def _live_widgets():
    """The widgets ipywidgets holds: its module registry from 8.1, ``Widget._active_widgets``
    in 8.0 (the declared floor)."""
    registry = getattr(widget_module, "_instances", None)
    return len(registry if registry is not None else widgets.Widget._active_widgets)


def _build_and_close(make, count):
    for _ in range(count):
        stepper = make()
        assert stepper.widget is not None
        stepper.close()


@pytest.mark.parametrize("make", [_backprop_stepper, _jvp_stepper],
                         ids=["BackpropStepper", "JVPStepper"])
def test_closing_steppers_keeps_widgets_and_memory_flat(make):
    _build_and_close(make, 10)   # warm the caches
    gc.collect()
    live = _live_widgets()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        _build_and_close(make, STEPPERS)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert _live_widgets() == live, "closed steppers left widgets registered"
    if getattr(widget_module, "_instances", None) is None:
        # ipywidgets 8.0 (the floor) keeps about 37 KiB per closed stepper itself, with no
        # widget of ours registered (checked above); from 8.1 a closed widget is freed.
        return
    assert grown < STEPPERS * ALLOWED_PER_STEPPER, f"memory grew {grown / 1024:.0f} KiB"


def test_close_closes_every_part_and_the_stepper_can_show_again():
    stepper = _backprop_stepper()
    root = stepper.widget
    parts = root.tg_parts
    made = [root, *parts["links"], parts["slider"].layout, parts["slider"].style,
            *parts["frames"].children]
    stepper.close()
    assert all(w.comm is None for w in made)
    assert stepper.widget is not root and stepper.widget.comm is not None   # a fresh one
    stepper.close()
    stepper.close()   # closing twice is harmless
