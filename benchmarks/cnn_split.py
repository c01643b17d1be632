"""Where lesson 11's CNN step and one conv2d spend their time: per phase, kernels against
Python.

    .venv/bin/python benchmarks/cnn_split.py [--quick] [--repeats N]

The workloads are those of ``benchmarks/peers/cnn.py`` (teachgrad alone, one thread, pinned
to one core as there):

* ``step``: one eager training step of the lesson's network (batch 32, float64), split
  into its phases, each on its own clock: the recorded forward pass up to the logits, the
  loss head (the fused sparse cross-entropy and the mean), ``tape.gradient``, and Adam's
  ``apply_gradients``;
* ``conv2d``: one 3x3 SAME convolution of a (32, 32, 32, 16) float32 batch to 32 channels,
  recorded, and ``tape.gradient`` with a given output cotangent (both cotangents).

For each phase it prints the median time per call, and how much of it the ops' kernels
took (numpy's work: each op's ``forward`` timed, in separate repeats, since the clocks
cost a little); the rest is Python: ``bind``, recording, the engine, the rules, the
optimizer's loop. Then the kernels that took most, by op.
"""
import collections
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import common  # noqa: E402  (limits the threads before numpy loads)
import cnn  # noqa: E402
import numpy as np  # noqa: E402

import teachgrad as tg  # noqa: E402
from teachgrad.ops.core.op import Op  # noqa: E402

KERNEL_TIME = collections.Counter()


def _timed(op, kernel):
    def forward(*args, **params):
        t0 = time.perf_counter()
        try:
            return kernel(*args, **params)
        finally:
            KERNEL_TIME[op.name] += time.perf_counter() - t0
    return forward


def clock_kernels():
    """Every op's kernel wrapped in a clock; returns a function that unwraps them."""
    ops = {id(v): v for m in list(sys.modules.values())
           if getattr(m, "__name__", "").startswith("teachgrad")
           for v in list(vars(m).values()) if isinstance(v, Op)}
    kept = {key: op.forward for key, op in ops.items()}
    for op in ops.values():
        op.forward = _timed(op, op.forward)

    def unclock():
        for key, op in ops.items():
            op.forward = kept[key]
    return unclock


class Clock:
    """Phase boundaries: each lap's wall time, and the kernels' time within it."""

    def __init__(self):
        self.laps, self.t, self.k = {}, time.perf_counter(), sum(KERNEL_TIME.values())

    def lap(self, phase):
        t, k = time.perf_counter(), sum(KERNEL_TIME.values())
        self.laps[phase] = (t - self.t, k - self.k)
        self.t, self.k = time.perf_counter(), sum(KERNEL_TIME.values())


def step_phases(step):
    """One eager step of the lesson, phase by phase: {phase: (seconds, kernel seconds)}."""
    clock = Clock()
    with tg.GradientTape() as tape:
        logits = cnn._predict(step.params, step.x)
        clock.lap("forward (recorded)")
        loss = tg.mean(tg.nn.sparse_softmax_cross_entropy_with_logits(step.y, logits))
    clock.lap("loss head")
    grads = tape.gradient(loss, step.params)
    clock.lap("tape.gradient")
    step.optimizer.apply_gradients(zip(grads, step.params))
    clock.lap("Adam update")
    return clock.laps


def conv_phases(x, w, ct):
    """One conv2d forward (recorded) and both cotangents, phase by phase."""
    clock = Clock()
    with tg.GradientTape() as tape:
        tape.watch([x, w])
        y = tg.nn.conv2d(x, w, strides=1, padding="SAME")
    clock.lap("forward (recorded)")
    tape.gradient(y, [x, w], output_gradients=ct)
    clock.lap("tape.gradient")
    return clock.laps


def measure(run, repeats):
    """{phase: (median ms, median kernel ms)}, and the kernels' ms per call by op: plain
    runs for the times, runs with the kernels clocked (alternating) for the kernels'."""
    totals, kernels = collections.defaultdict(list), collections.defaultdict(list)
    by_op = collections.Counter()
    for _ in range(3):
        run()
    for _ in range(repeats):
        for phase, (seconds, _) in run().items():
            totals[phase].append(seconds)
        unclock = clock_kernels()
        try:
            KERNEL_TIME.clear()
            for phase, (_, seconds) in run().items():
                kernels[phase].append(seconds)
            by_op.update({op: t / repeats for op, t in KERNEL_TIME.items()})
        finally:
            unclock()
    return ({p: (statistics.median(totals[p]) * 1e3, statistics.median(kernels[p]) * 1e3)
             for p in totals}, by_op)


def main(argv=None):
    parser = common.parser(__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    rng = np.random.default_rng(0)
    x, y = rng.random((cnn.BATCH, 8, 8, 1)), rng.integers(0, 10, cnn.BATCH)
    step = cnn.TeachgradStep(cnn._weights(rng), x, y)
    conv_args = [tg.constant(a) for a in (
        rng.standard_normal((32, 32, 32, 16)).astype(np.float32),
        (rng.standard_normal((3, 3, 16, 32)) * 0.1).astype(np.float32),
        rng.standard_normal((32, 32, 32, 32)).astype(np.float32))]
    for name, workload in (("step", lambda: step_phases(step)),
                           ("conv2d", lambda: conv_phases(*conv_args))):
        phases, by_op = measure(workload, repeats)
        print(f"{name}: ms per call (median of {repeats}): total, kernels, Python")
        for phase, (total, kernel) in phases.items():
            print(f"  {phase:20s} {total:8.3f} {kernel:8.3f} {total - kernel:8.3f}")
        whole = sum(t for t, _ in phases.values())
        kernel = sum(k for _, k in phases.values())
        print(f"  {'all':20s} {whole:8.3f} {kernel:8.3f} {whole - kernel:8.3f}")
        top = ", ".join(f"{op} {ms * 1e3:.3f}" for op, ms in by_op.most_common(8))
        print(f"  kernels by op (ms per call): {top}")


if __name__ == "__main__":
    main()
