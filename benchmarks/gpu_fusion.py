"""The graph optimiser's fused elementwise programs on a GPU: ``cupy.fuse`` against
one CuPy kernel per op.

    python benchmarks/gpu_fusion.py [--quick]

Needs CuPy and an NVIDIA GPU; without them it says so and exits 0.

On the CuPy backend every fused program of ``teachgrad.graph.optimize`` runs as one
CUDA kernel made by ``cupy.fuse`` (``program.py``'s ``_gpu_code``), so the
intermediates of an elementwise chain stay in registers instead of making a round
trip through GPU memory per op. Two workloads, each timed as a ``tg.function``
traced as written (``optimize=False``: one kernel per op) and optimised (the
passes, fusion included), interleaved, with a device synchronize after each call:

* a long elementwise chain, ``tanh(h * 1.1 + 0.1)`` 30 times, and its gradient,
  on a 4096 x 4096 float32 array (memory-bound: fusion's best case);
* the large MLP gradient of ``mlp_gradient.py`` (784-2048-2048-10, batch 1024,
  float32), dominated by matrix products, where fusion only trims the tails.

The optimised results are checked against the unfused ones first.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_gradient as mlp  # noqa: E402
import teachgrad as tg  # noqa: E402

DEPTH, SHAPE = 30, (4096, 4096)


def chain_and_gradient(x):
    h = x
    for _ in range(DEPTH):
        h = tg.tanh(h * 1.1 + 0.1)
    (g,) = tg.gradients(tg.sum(h), [x])
    return h, g


def timed(fns, repeats, sync):
    """Median ms of each of ``fns`` ({name: callable}), called in turns."""
    for fn in fns.values():
        fn()
        sync()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def compare(label, fn, args, repeats, sync):
    traced, optimised = tg.function(fn, optimize=False), tg.function(fn)
    want, got = traced(*args), optimised(*args)
    for w, g in zip(tg.nest.flatten(want), tg.nest.flatten(got)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)
    report = optimised.get_concrete_function(*args).optimized.report
    fused = sum(1 for n in optimised.get_concrete_function(*args).optimized.graph
                .get_operations() if n.op.name.startswith("fused"))
    ms = timed({"one kernel per op": lambda: traced(*args),
                "fused (cupy.fuse)": lambda: optimised(*args)}, repeats, sync)
    print(f"\n{label}: {report.traced} traced nodes, {fused} fused programs after the passes")
    for name, t in ms.items():
        print(f"  {name:20s} {t:9.3f} ms")
    print(f"  fused / unfused: {ms['fused (cupy.fuse)'] / ms['one kernel per op']:.2f}")
    return ms


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args(argv).quick
    try:
        tg.set_backend("cupy")
    except RuntimeError as error:
        print(f"skipped: {error}")
        return
    import cupy
    sync = cupy.cuda.Device().synchronize
    print("GPU:", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    x = tg.constant(np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32) * 0.1)
    compare(f"{DEPTH}-layer tanh chain and its gradient, {SHAPE} float32",
            chain_and_gradient, (x,), 5 if quick else 30, sync)
    p = mlp.make_problem(mlp.CONFIGS[1])        # its Variables are made on the GPU
    step = mlp.make_graph_step(p).python_function
    compare("large MLP gradient (784-2048-2048-10, batch 1024, float32)",
            step, (tg.constant(p.x),), 5 if quick else 30, sync)


if __name__ == "__main__":
    main()
