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
  something records the backward pass (issue 21's boxed path, forced here);
* ``bare loop, same rules``: the floor under ``backward``: the same recording walked by
  ``bare_backward``, a loop with nothing but the pending counts, a queue and a dict
  of cotangents, calling the same VJP rules on the same arrays. What ``backward``
  costs over it is the engine's machinery (the events' hooks, summing and keeping
  contributions, which inputs need one, the rule call's checks, letting go of nodes);
* ``pending counts``: the walk back that both start with (``pending_counts``).

The process is pinned to one core when the platform allows it (``os.sched_setaffinity``).
"""
import argparse
import collections
import os
import statistics
import time

import numpy as np

import teachgrad as tg
from teachgrad.autodiff import engine
from teachgrad.autodiff.pending import pending_counts
from teachgrad.ops.core.apply import mode

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


def bare_backward(tape, x, y):
    """d y / d x for the chain on ``tape``, by the least loop that can compute it: the
    engine's pending counts (the same walk) and queue, one cotangent per tensor (a chain
    sums nothing), the same VJP rules on the nodes' arrays. It leaves out all the engine
    does for other graphs and for the people watching (events, several contributions,
    stop nodes, shape checks, IndexedSlices, letting go of nodes): a floor, not an engine."""
    producers = tape.recorded.producers
    parents, pending = pending_counts([y], [x], producers.get, all_reached=True)
    cotangents = {y.id: np.float64(1.0)}
    queue = collections.deque([producers[y.id]])
    with mode(arrays=True):
        while queue:
            node = queue.popleft()
            node_parents = parents.pop(node)
            ct = cotangents.pop(node.outputs[0].id)
            inputs = node.inputs
            values = [t.value for t in inputs]
            ans = node.outputs[0].value
            for i, rule in enumerate(node.op.vjp_rules):
                if node_parents[i] is not None or inputs[i].id == x.id:
                    cotangents[inputs[i].id] = rule(ct, ans, *values, **node.params)
            for parent in node_parents:
                if parent is not None:
                    pending[parent] -= 1
                    if pending[parent] == 0:
                        queue.append(parent)
    return cotangents[x.id]


def bare_timer():
    """A function timing ``bare_backward`` (the recording made outside the clock); the
    first call checks it against ``tape.gradient``."""
    def timed():
        tape, x, y = recorded()
        t0 = time.perf_counter()
        bare_backward(tape, x, y)
        return time.perf_counter() - t0
    tape, x, y = recorded()
    got = float(bare_backward(tape, x, y))
    want = float(tape.gradient(y, x))
    if got != want:
        raise AssertionError(f"the bare loop gives {got!r}, tape.gradient {want!r}")
    return timed


def pending_timer():
    """A function timing the pending counts' walk alone, on a fresh recording."""
    def timed():
        tape, x, y = recorded()
        t0 = time.perf_counter()
        pending_counts([y], [x], tape.recorded.producers.get, all_reached=True)
        return time.perf_counter() - t0
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
             "backward, rules on Tensors": backward_timer(True),
             "bare loop, same rules": bare_timer(), "pending counts": pending_timer()}
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
