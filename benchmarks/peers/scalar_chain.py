"""Per-op overhead: a chain of 2,000 scalar ops, forward and backward, in µs per op.

    .bench-venv/bin/python benchmarks/peers/scalar_chain.py [--quick] [--json PATH]
    .bench-venv/bin/python benchmarks/peers/scalar_chain.py --library torch

Without ``--library``, each library runs in its own process (a fresh interpreter,
the garbage collector on), one after the other. The chain is 500 repeats of

    x = x * 1.0001;  x = x + 0.0001;  x = x ** 1.0001;  x = relu(x)

on a float64 scalar starting at 0.5: only ops that micrograd has, so every
library runs the same workload. One timed call is the forward pass, recorded,
plus the backward pass to the starting scalar; the time is divided by 2,000.
Each library's value and derivative are checked against the chain rule worked
out in plain Python floats before timing.

It also counts reference cycles: with the collector paused, one forward and
backward pass is run and its results dropped; ``gc.collect()`` then reports how
many objects only a cycle kept alive (0 when graph nodes are free of cycles, so
plain reference counting frees them as soon as they are dropped).
"""
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import common

N_OPS = 2000
LIBRARIES = ("numpy", "teachgrad", "micrograd", "torch", "autograd", "jax")
X0 = 0.5


def chain(x, relu):
    for _ in range(N_OPS // 4):
        x = x * 1.0001
        x = x + 0.0001
        x = x ** 1.0001
        x = relu(x)
    return x


def chain_rule():
    """The chain's value and derivative at X0, in plain Python floats."""
    x, d = X0, 1.0
    for _ in range(N_OPS // 4):
        x, d = x * 1.0001, d * 1.0001
        x = x + 0.0001
        x, d = x ** 1.0001, d * 1.0001 * x ** 0.0001
        x, d = (x, d) if x > 0 else (0.0, 0.0)
    return x, d


def runner(name):
    """A function running one forward + backward; it returns (value, derivative) as floats."""
    if name == "numpy":                       # the floor: forward only, no derivative
        import numpy as np
        x0 = np.asarray(X0)
        relu = lambda x: np.maximum(x, 0.0)   # noqa: E731
        return lambda: (float(chain(x0, relu)), None)
    if name == "teachgrad":
        import teachgrad as tg

        def run():
            x = tg.constant(X0)
            with tg.GradientTape() as tape:
                tape.watch(x)
                y = chain(x, tg.relu)
            return float(y), float(tape.gradient(y, x))
        return run
    module = common.load(name)
    if module is None:
        return None
    if name == "micrograd":
        from micrograd.engine import Value
        # micrograd sorts its graph recursively: 2,000 ops need a deeper stack.
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * N_OPS + 1000))

        def run():
            x = Value(X0)
            y = chain(x, Value.relu)
            y.backward()
            return y.data, x.grad
        return run
    if name == "torch":
        torch = module

        def run():
            x = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
            y = chain(x, torch.relu)
            (g,) = torch.autograd.grad(y, x)
            return float(y), float(g)
        return run
    if name == "autograd":
        import autograd.numpy as anp
        value_and_grad = module.value_and_grad(lambda x: chain(x, lambda t: anp.maximum(t, 0.0)))

        def run():
            y, g = value_and_grad(X0)
            return float(y), float(g)
        return run
    if name == "jax":                         # without jit: every op dispatched eagerly
        jax = module
        value_and_grad = jax.value_and_grad(lambda x: chain(x, jax.nn.relu))
        x0 = jax.numpy.asarray(X0, dtype=jax.numpy.float64)

        def run():
            y, g = jax.block_until_ready(value_and_grad(x0))
            return float(y), float(g)
        return run
    raise ValueError(f"unknown library {name!r}: choose from {', '.join(LIBRARIES)}")


def count_cycles(run):
    """Objects that only reference cycles kept alive after one forward + backward."""
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


def measure(name, quick):
    run = runner(name)
    if run is None:
        return None
    want_y, want_d = chain_rule()
    y, d = run()
    if not math.isclose(y, want_y, rel_tol=1e-12):
        raise AssertionError(f"{name}: chain value {y!r}, the chain rule gives {want_y!r}")
    if d is not None and not math.isclose(d, want_d, rel_tol=1e-10):
        raise AssertionError(f"{name}: derivative {d!r}, the chain rule gives {want_d!r}")
    cycles = count_cycles(run)
    budget = 1.0 if quick else 6.0
    times = []
    t0 = time.perf_counter()
    run()                                     # warm-up
    if time.perf_counter() - t0 > budget / 3:  # slow (JAX without jit): count this one
        times.append(time.perf_counter() - t0)
    start = time.perf_counter()
    while len(times) < (3 if quick else 200):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
        if len(times) >= 3 and time.perf_counter() - start > budget:
            break
    times.sort()
    us = [t * 1e6 / N_OPS for t in times]
    return {"us_per_op": us[len(us) // 2], "min_us_per_op": us[0], "repeats": len(us),
            "cycle_objects": cycles}


def main(argv=None):
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--library", choices=LIBRARIES,
                   help="measure this library only, in this process")
    args = p.parse_args(argv)
    if args.library:
        result = measure(args.library, args.quick)
        return common.write(args, {"workload": "scalar_chain", "library": args.library,
                                   "result": result})

    rows, skipped = {}, []
    for name in LIBRARIES:                    # each in a fresh interpreter
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--library", name, "--json", out]
            if args.quick:
                cmd.append("--quick")
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"scalar chain, {name}: failed\n{proc.stdout}{proc.stderr}")
            with open(out) as f:
                done = json.load(f)
        if done["result"] is None:
            skipped.extend(done["notes"])
            continue
        rows[name] = done["result"]
    label = f"scalar chain, {N_OPS} ops (mul, add, pow, relu), forward + backward"
    print(label + ", µs per op (median; min), objects freed only by the cycle collector:")
    for name, r in rows.items():
        kind = "forward only, the floor" if name == "numpy" else "forward + backward"
        print(f"  {name:10s} {r['us_per_op']:9.2f}  ({r['min_us_per_op']:.2f})  "
              f"cycles: {r['cycle_objects']:6d}   {kind}, {r['repeats']} repeats")
    for note in skipped:
        print("note: " + note)
    common._notes.extend(skipped)
    return common.write(args, {"workload": "scalar_chain", "label": label, "rows": rows})


if __name__ == "__main__":
    main()
