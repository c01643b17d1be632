"""Where the scalar chain's time goes, per op: running, recording, the backward pass.

    .venv/bin/python benchmarks/chain_split.py [--quick] [--rules tensors]

The chain is the one of ``benchmarks/peers/scalar_chain.py`` (500 repeats of
``x * 1.0001``, ``x + 0.0001``, ``x ** 1.0001``, ``relu(x)`` on a float64 scalar). It
times, in µs per op (median of many runs, interleaved so that noise hits all alike):

* ``run``: the forward pass with no tape (``bind`` and the kernel);
* ``run + record``: the forward pass on a tape (each op also makes a ``Node``);
* ``backward``: ``tape.gradient`` alone, on a persistent tape recorded once per
  repeat (the pending counts, the engine's loop, the VJP rules);
* ``backward, rules on Tensors``: the same with the rules handed Tensors, as when
  something records the backward pass (issue 21's boxed path, forced here).

The process is pinned to one core when the platform allows it (``os.sched_setaffinity``).
"""
import argparse
import os
import statistics
import time

import teachgrad as tg
from teachgrad.autodiff import engine

N_OPS = 2000


def chain(x):
    for _ in range(N_OPS // 4):
        x = x * 1.0001
        x = x + 0.0001
        x = x ** 1.0001
        x = tg.relu(x)
    return x


def forward_only():
    chain(tg.constant(0.5))


def recorded():
    x = tg.constant(0.5)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = chain(x)
    return tape, x, y


def backward_timer(tensors):
    """A function timing one backward pass (the recording is made outside the clock)."""
    def timed():
        x = tg.constant(0.5)
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = chain(x)
        if tensors:
            saved = engine._rules_take_arrays
            engine._rules_take_arrays = lambda observer: False
        try:
            t0 = time.perf_counter()
            tape.gradient(y, x)
            return time.perf_counter() - t0
        finally:
            if tensors:
                engine._rules_take_arrays = saved
    return timed


def clocked(f):
    def timed():
        t0 = time.perf_counter()
        f()
        return time.perf_counter() - t0
    return timed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a few repeats (a smoke test)")
    p.add_argument("--repeats", type=int, default=60)
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    tasks = {"run": clocked(forward_only), "run + record": clocked(recorded),
             "backward": backward_timer(False),
             "backward, rules on Tensors": backward_timer(True)}
    if not hasattr(engine, "_rules_take_arrays"):   # before issue 21: always on Tensors
        del tasks["backward, rules on Tensors"]
    times = {name: [] for name in tasks}
    for task in tasks.values():   # warm-up
        task()
    for _ in range(3 if args.quick else args.repeats):
        for name, task in tasks.items():
            times[name].append(task() * 1e6 / N_OPS)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"scalar chain, {N_OPS} ops, µs per op (median; min), load average {load:.2f}:")
    for name, ts in times.items():
        print(f"  {name:28s} {statistics.median(ts):6.2f}  ({min(ts):.2f})")


if __name__ == "__main__":
    main()
