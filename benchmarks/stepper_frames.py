"""How long the BackpropStepper takes to build its frames, for a 500-node backward pass.

The pass: a chain of 250 blocks ``h = sin(h) * h`` on a vector of 2 (each
``h`` feeds two ops, so every block's gradient is an add_n), then ``sum``:
501 nodes, about 2,500 engine events, so about 2,500 frames. The issue's
target: building every frame takes at most 1 s.

Measured, each the median of several runs (``--quick``: fewer runs, a
smoke test whose numbers mean little):

* ``backprop_frames(trace)``: folding the events into frames (the target);
* the HTML of the frames the widget holds (``MAX_FRAMES`` of them);
* the drawing rendered once to SVG by ``dot`` (if installed);
* the whole widget, built from scratch;
* for comparison, the backward pass itself, with and without recording.

Before timing, it checks that there is one frame per event and that the last
frame's gradient is the one ``tape.gradient`` returned.

    python benchmarks/stepper_frames.py [--quick]
"""
import shutil
import statistics
import sys
import time

import numpy as np

import teachgrad as tg
from teachgrad.viz.backprop_stepper import BackpropStepper
from teachgrad.viz.frames import backprop_frames

BLOCKS = 250
TARGET_S = 1.0


def record_pass(blocks=BLOCKS):
    """A persistent tape holding the chain, and its target and source."""
    x = tg.constant([0.3, 0.7])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x
        for _ in range(blocks):
            h = tg.sin(h) * h
        y = tg.sum(h)
    return tape, x, y


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main(argv=None):
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    repeats = 2 if quick else 7
    tape, x, y = record_pass()
    with tg.viz.record() as rec:
        grad = tape.gradient(y, x)
    (trace,) = rec.traces
    nodes = len(trace.events[0].pending)

    frames = backprop_frames(trace)
    if len(frames) != len(trace.events):
        raise SystemExit(f"{len(frames)} frames for {len(trace.events)} events")
    last = frames[len(frames) - 1]
    if last.result[0] is not grad or not np.allclose(last.gradients[x.id].total, grad):
        raise SystemExit("the last frame's gradient is not the one gradient() returned")

    print(f"backward pass: {nodes} nodes, {len(trace.events)} events -> {len(frames)} frames")
    rows = []

    def plain():
        tape.gradient(y, x)

    def recording():
        with tg.viz.record():
            tape.gradient(y, x)

    rows.append(("backward pass, not recording", timed(plain, repeats)))
    rows.append(("backward pass, recording events", timed(recording, repeats)))
    build = timed(lambda: backprop_frames(trace), repeats)
    rows.append(("build every frame (backprop_frames)", build))
    stepper = BackpropStepper(trace)
    first, stop = stepper.window
    rows.append((f"HTML of the {stop - first} frames the widget holds",
                 timed(lambda: [stepper.frame_html(i, "s") for i in range(first, stop)],
                       repeats)))
    if shutil.which("dot"):
        rows.append(("drawing rendered once to SVG (dot)",
                     timed(lambda: BackpropStepper(trace).graph_html("s"), repeats)))
    rows.append(("whole widget from scratch", timed(lambda: BackpropStepper(trace).widget,
                                                    repeats)))
    width = max(len(name) for name, _ in rows)
    print(f"{'':<{width}}  {'median':>9}  {'min':>9}")
    for name, (median, best) in rows:
        print(f"{name:<{width}}  {median * 1e3:>7.1f} ms  {best * 1e3:>7.1f} ms")
    html = sum(len(stepper.frame_html(i, "s")) for i in range(first, stop))
    print(f"frame HTML kept in the notebook: {html / 1e6:.2f} MB "
          f"({html / (stop - first) / 1e3:.1f} kB a frame)")
    met = "met" if build[0] <= TARGET_S else "NOT met"
    print(f"target: all frames of a {nodes}-node pass in <= {TARGET_S:.0f} s: {met} "
          f"({build[0]:.3f} s)")


if __name__ == "__main__":
    main()
