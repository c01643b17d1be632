"""How much does teachgrad cost on top of numpy? One MLP gradient, timed.

Run from the repository root (``make bench`` does the same)::

    .venv/bin/python benchmarks/mlp_gradient.py            # about 1-2 minutes
    .venv/bin/python benchmarks/mlp_gradient.py --quick    # smoke test, seconds

What it measures, in one process and one run:

1. One gradient of a softmax cross-entropy MLP (tanh hidden layers) with
   respect to every weight and bias, for two configurations:

   * A: batch 64,   layers 784-256-256-10,   float64 (small: Python overhead shows);
   * B: batch 1024, layers 784-2048-2048-10, float32 (large: BLAS dominates).

   teachgrad computes it the way a user would: ``tg.Variable`` parameters,
   ``h = tg.tanh(x @ W1 + b1)``, ..., ``logits``, then
   ``loss = -mean(log_softmax(logits)[rows, labels])`` inside a
   ``tg.GradientTape`` and ``tape.gradient(loss, params)``.

   The label pick uses teachgrad's fancy indexing (``logp[rows, labels]``, a
   ``getitem`` op whose VJP scatters with ``index_add``). It was the cheapest of
   the three choices measured when this script was written (2-core AMD EPYC,
   numpy 2.4, whole forward+backward of the loss head alone, median):
   batch 64: getitem 159 us, one-hot multiply + sum 194 us, tg.gather on the
   flattened log-probabilities 198 us; batch 1024: 268 / 335 / 412 us. The
   script re-measures the three on config A's logits and prints them, so the
   choice can be checked on the machine at hand (``LOSS_HEADS`` below), next to
   the fused op ``tg.sparse_softmax_cross_entropy_with_logits`` (not used for the
   timings: the workload stays the loss as composed from its parts).

2. Graph mode: the same loss and gradients as one ``tg.function`` that calls
   ``tg.gradients`` inside (TensorFlow 1's ``tf.gradients`` in a
   ``tf.function``). The parameters are the same ``tg.Variable``s, read inside
   the function as a TF2 user writes a model (the function captures them; each
   call feeds their current values); the input batch ``x`` is the function's
   argument, and the labels are Python constants of the trace, as in the eager
   version. The function is traced once, before anything is timed (the time
   of that first call and the graph's node count are printed), and a step is
   one call: ``loss, grads = graph_step(x)``, which runs the traced graph's
   cached plan (a loop over kernels on plain arrays: no Tensors, no tape). The
   issue's target is graph/eager <= 1.0 on config A once traced.

3. The floor: a hand-written numpy forward and backward pass (stable
   log-softmax, ``dlogits = (softmax - onehot) / N``, ``dW = h.T @ d``,
   ``db = d.sum(0)``, ``tanh' = 1 - h**2``). Like teachgrad (which skips the
   VJP of an input that leads to no source), it never forms the gradient with
   respect to the input data ``x``. The two gradients must agree
   (``np.allclose`` with a tolerance for the dtype), and so must the graph
   mode's, or the script stops with an error before timing anything.

4. Timing: a few warm-up calls, then many repeats timed one call at a time
   with ``time.perf_counter``; eager teachgrad, graph-mode teachgrad and numpy
   calls are interleaved (the order runs through every permutation, one per
   repeat) so that machine noise hits all alike. It reports the median and the
   minimum in ms per gradient and the ratios eager / numpy, graph / eager and
   graph / numpy. The garbage collector stays on (``timeit`` would turn it
   off): the collections teachgrad's many small objects trigger are part of its
   cost.

5. Per-op overhead: a chain of 2,000 scalar ops on a 0-d float64 tensor
   (``x = x * 1.0001; x = tg.sin(x); x = x * 1.0001; x = tg.tanh(x)``, 500
   times), run forward on a tape (recording), then ``tape.gradient`` (backward),
   and forward with no tape at all (the bare per-op cost); each total is divided
   by 2,000. The same chain in numpy (a 0-d array that becomes a numpy float64
   scalar after the first op) is shown as a floor. The backward gradient is
   checked against the chain rule computed by hand.

Notes:

* ``OPENBLAS_CORETYPE`` may be set on these machines (it picks OpenBLAS's
  kernels). The script does not change it or any thread count; it only prints
  it, the BLAS numpy was built with, and, when the optional ``threadpoolctl``
  package is installed, its view of the BLAS thread pools.
* The machines are small and may be shared: the script prints the load
  average before and after. The minimum and the interleaved ratio are steadier
  than the medians when other work is running.
* Importing this module runs nothing (``main()`` is behind a ``__main__``
  guard), so its helpers can be reused, e.g. from a profiler session::

      import cProfile, benchmarks.mlp_gradient as b
      p = b.make_problem(b.CONFIGS[0])
      cProfile.run("for _ in range(200): b.teachgrad_gradient(p)", sort="tottime")
      b.graph_gradient(p)                                  # trace first
      cProfile.run("for _ in range(200): b.graph_gradient(p)", sort="tottime")
"""
import argparse
import gc
import itertools
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

try:
    import teachgrad as tg
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
    import teachgrad as tg


@dataclass(frozen=True)
class Config:
    name: str
    batch: int
    sizes: tuple      # layer widths, input first, classes last
    dtype: str
    warmup: int
    repeats: int
    quick_repeats: int
    rtol: float       # np.allclose tolerances for teachgrad vs numpy
    atol: float       # relative to the largest |entry| of each numpy gradient


CONFIGS = (
    Config("A", 64, (784, 256, 256, 10), "float64", warmup=20, repeats=1000, quick_repeats=20,
           rtol=1e-9, atol=1e-12),
    Config("B", 1024, (784, 2048, 2048, 10), "float32", warmup=2, repeats=60, quick_repeats=2,
           rtol=1e-4, atol=1e-5),
)

SCALAR_OPS = 2000
SCALAR_REPEATS, SCALAR_QUICK_REPEATS = 100, 3
LOSS_HEAD_REPEATS, LOSS_HEAD_QUICK_REPEATS = 500, 10


# -- the problem ----------------------------------------------------------------
@dataclass
class Problem:
    config: Config
    x: np.ndarray             # (batch, sizes[0]) input data, a constant
    labels: np.ndarray        # (batch,) int64 class indices
    onehot: np.ndarray        # (batch, classes) in the config's dtype
    weights: list             # numpy arrays: W1, b1, W2, b2, ...
    tg_x: object              # tg.Tensor of x
    tg_params: list           # tg.Variables, same order as `weights`
    rows: np.ndarray          # arange(batch), for the label pick
    graph_step: object = None  # the tg.function of graph mode (see make_graph_step)


def make_problem(config, seed=0):
    """Fixed-seed data and parameters (1/sqrt(fan_in)-scaled normal init)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(config.dtype)
    n, sizes = config.batch, config.sizes
    x = rng.standard_normal((n, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], n)
    onehot = np.eye(sizes[-1], dtype=dtype)[labels]
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        weights.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype))
        weights.append((0.1 * rng.standard_normal(fan_out)).astype(dtype))
    tg_params = [tg.Variable(w, name=("W" if w.ndim == 2 else "b") + str(i // 2 + 1))
                 for i, w in enumerate(weights)]
    p = Problem(config, x, labels, onehot, weights, tg.constant(x), tg_params, np.arange(n))
    p.graph_step = make_graph_step(p)
    return p


# -- teachgrad ------------------------------------------------------------------
def _pick_getitem(logp, p):
    return logp[p.rows, p.labels]                                   # getitem op


def _pick_onehot(logp, p):
    return tg.sum(tg.constant(p.onehot) * logp, axis=1)            # multiply + sum


def _pick_gather(logp, p):
    flat = p.rows * p.config.sizes[-1] + p.labels
    return tg.gather(tg.reshape(logp, (-1,)), flat)                 # reshape + gather


#: Ways to pick log p(label) for each example; the first one is used.
LOSS_HEADS = {"getitem": _pick_getitem, "one-hot": _pick_onehot, "gather": _pick_gather}


def teachgrad_gradient(p, pick=_pick_getitem):
    """(loss, [dW1, db1, dW2, ...]) as tg.Tensors, the way a user writes it."""
    params = p.tg_params
    with tg.GradientTape() as tape:
        h = p.tg_x
        for W, b in zip(params[0:-2:2], params[1:-2:2]):
            h = tg.tanh(h @ W + b)
        logits = h @ params[-2] + params[-1]
        logp = tg.log_softmax(logits, axis=-1)
        loss = -tg.mean(pick(logp, p))
    return loss, tape.gradient(loss, params)


# -- teachgrad, graph mode -------------------------------------------------------
def make_graph_step(p, pick=_pick_getitem):
    """A tg.function: batch -> (loss, [dW1, db1, ...]), with tg.gradients inside.

    The parameters are the problem's tg.Variables, read in the body (the
    function captures them); the batch is the argument. Traced on first call.
    """
    params = p.tg_params

    @tg.function
    def graph_step(x):
        h = x
        for W, b in zip(params[0:-2:2], params[1:-2:2]):
            h = tg.tanh(h @ W + b)
        logits = h @ params[-2] + params[-1]
        logp = tg.log_softmax(logits, axis=-1)
        loss = -tg.mean(pick(logp, p))
        return loss, tg.gradients(loss, params)

    return graph_step


def graph_gradient(p):
    """(loss, [dW1, db1, dW2, ...]) as tg.Tensors: one call of the traced function."""
    return p.graph_step(p.tg_x)


# -- numpy, by hand -------------------------------------------------------------
def numpy_gradient(p):
    """(loss, [dW1, db1, dW2, ...]) by a hand-written forward and backward pass."""
    weights, n = p.weights, p.config.batch
    Ws, bs = weights[0::2], weights[1::2]
    hs = [p.x]                                     # the input of each layer
    for W, b in zip(Ws[:-1], bs[:-1]):
        hs.append(np.tanh(hs[-1] @ W + b))
    logits = hs[-1] @ Ws[-1] + bs[-1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    loss = -(shifted[p.rows, p.labels] - np.log(s[:, 0])).mean()
    d = (e / s - p.onehot) / n                     # dloss/dlogits
    grads = [None] * len(weights)
    for i in reversed(range(len(Ws))):
        h = hs[i]
        grads[2 * i] = h.T @ d
        grads[2 * i + 1] = d.sum(axis=0)
        if i:                                      # no gradient for the input data x
            d = (d @ Ws[i].T) * (1 - h * h)
    return loss, grads


def check_gradients(p, gradient=teachgrad_gradient, who="teachgrad"):
    """Raise unless ``gradient(p)`` (teachgrad's, eager by default) matches the numpy
    one; returns the worst error."""
    cfg = p.config
    tg_loss, tg_grads = gradient(p)
    np_loss, np_grads = numpy_gradient(p)
    if not np.allclose(tg_loss.numpy(), np_loss, rtol=cfg.rtol, atol=cfg.atol):
        raise AssertionError(f"config {cfg.name}: losses differ: {who} {tg_loss.numpy()!r} "
                             f"vs numpy {np_loss!r}")
    worst = 0.0
    for var, g_tg, g_np in zip(p.tg_params, tg_grads, np_grads):
        if g_tg is None:
            raise AssertionError(f"config {cfg.name}: {who} gave no gradient for {var.name}")
        g_tg = g_tg.numpy()
        if g_tg.shape != g_np.shape or g_tg.dtype != g_np.dtype:
            raise AssertionError(
                f"config {cfg.name}: gradient of {var.name}: {who} {g_tg.shape} "
                f"{g_tg.dtype} vs numpy {g_np.shape} {g_np.dtype}")
        scale = float(np.max(np.abs(g_np)))
        if not np.allclose(g_tg, g_np, rtol=cfg.rtol, atol=cfg.atol * scale):
            err = float(np.max(np.abs(g_tg - g_np)))
            raise AssertionError(
                f"config {cfg.name}: {who} gradient of {var.name} differs: max |diff| {err:.3g}, "
                f"max |numpy| {scale:.3g} (rtol {cfg.rtol}, atol {cfg.atol} x max|numpy|)")
        worst = max(worst, float(np.max(np.abs(g_tg - g_np))) / (scale or 1.0))
    return worst


# -- timing ---------------------------------------------------------------------
def interleaved_times(fns, warmup, repeats):
    """Seconds per call for each of ``fns`` ({name: callable}), calls interleaved.

    Warm up each function, then time one call of each per repeat; the order runs
    through every permutation of the functions, one per repeat (for two: forwards,
    backwards), so that none always runs first or always after the same one.
    """
    for _ in range(warmup):
        for f in fns.values():
            f()
    names = list(fns)
    orders = list(itertools.permutations(names))
    times = {name: [] for name in names}
    gc.collect()
    clock = time.perf_counter
    for r in range(repeats):
        for name in orders[r % len(orders)]:
            f = fns[name]
            t0 = clock()
            f()
            times[name].append(clock() - t0)
    return times


@dataclass
class Stat:
    median: float
    min: float
    n: int


def stat(samples, scale=1.0):
    return Stat(statistics.median(samples) * scale, min(samples) * scale, len(samples))


# -- the scalar chain -----------------------------------------------------------
def scalar_chain(x, n_ops=SCALAR_OPS, sin=tg.sin, tanh=tg.tanh):
    """``n_ops`` ops: (x * 1.0001, sin, x * 1.0001, tanh) repeated."""
    for _ in range(n_ops // 4):
        x = x * 1.0001
        x = sin(x)
        x = x * 1.0001
        x = tanh(x)
    return x


def scalar_chain_derivative(x0, n_ops=SCALAR_OPS):
    """d chain / d x0 by the chain rule, in plain Python floats."""
    import math
    x, d = x0, 1.0
    for _ in range(n_ops // 4):
        x *= 1.0001; d *= 1.0001
        d *= math.cos(x); x = math.sin(x)
        x *= 1.0001; d *= 1.0001
        x = math.tanh(x); d *= 1 - x * x
    return x, d


def bench_scalar_chain(repeats):
    """Seconds per op: forward on a tape, its backward, forward without a tape, numpy."""
    x0 = tg.constant(0.5)                                   # 0-d float64
    assert x0.ndim == 0 and x0.dtype == np.float64
    fwd, bwd = [], []

    def taped():
        tape = tg.GradientTape()
        t0 = time.perf_counter()
        with tape:
            tape.watch(x0)
            y = scalar_chain(x0)
        t1 = time.perf_counter()
        g = tape.gradient(y, x0)
        t2 = time.perf_counter()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
        return y, g

    y, g = taped()
    want_y, want_g = scalar_chain_derivative(0.5)
    if not (np.isclose(float(y), want_y, rtol=1e-12) and np.isclose(float(g), want_g, rtol=1e-10)):
        raise AssertionError(f"scalar chain: teachgrad gives y={float(y)!r} dy/dx={float(g)!r}, "
                             f"the chain rule gives {want_y!r}, {want_g!r}")
    x_np = np.asarray(0.5)
    times = interleaved_times({
        "taped": taped,
        "bare": lambda: scalar_chain(x0),
        "numpy": lambda: scalar_chain(x_np, sin=np.sin, tanh=np.tanh),
    }, warmup=2, repeats=repeats)
    del fwd[:3], bwd[:3]                                    # the check and the warm-up
    per_op = 1e6 / SCALAR_OPS                               # seconds per chain -> us per op
    return {"forward (recording)": stat(fwd, per_op), "backward": stat(bwd, per_op),
            "forward, no tape": stat(times["bare"], per_op),
            "numpy (floor)": stat(times["numpy"], per_op)}


# -- reporting ------------------------------------------------------------------
def environment_lines():
    lines = [f"python {platform.python_version()} ({platform.python_implementation()}), "
             f"numpy {np.__version__}, teachgrad {tg.__version__}, backend {tg.get_backend()}",
             f"cpu: {platform.machine()}, {os.cpu_count()} logical cores"
             + (f", {len(os.sched_getaffinity(0))} usable" if hasattr(os, "sched_getaffinity")
                else "")]
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        lines.append(f"numpy BLAS: {blas.get('name')} {blas.get('version')}")
    except Exception:  # older numpy: no mode="dicts"
        pass
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",
                                      "OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    lines.append("env: " + (", ".join(f"{k}={v}" for k, v in env.items()) or
                            "no OPENBLAS_*/OMP_*/MKL_* thread or core-type variables set"))
    try:
        import threadpoolctl
    except ImportError:
        lines.append("threadpoolctl: not installed (optional; pip install threadpoolctl)")
    else:
        for pool in threadpoolctl.threadpool_info():
            lines.append(f"threadpoolctl: {pool.get('internal_api')} {pool.get('version')} "
                         f"threads={pool.get('num_threads')} "
                         f"arch={pool.get('architecture')}")
    from teachgrad.backend import host_memory
    lines.append("host memory: " + (
        "teachgrad keeps freed memory for reuse (glibc mmap/trim thresholds "
        f"{host_memory.MMAP_THRESHOLD >> 20}/{host_memory.TRIM_THRESHOLD >> 20} MiB; "
        "opted in with TEACHGRAD_KEEP_FREED_MEMORY=1)" if host_memory.active
        else "malloc defaults (TEACHGRAD_KEEP_FREED_MEMORY=1 keeps freed memory)"))
    lines.append(load_line("at start"))
    return lines


def load_line(when):
    try:
        one, five, _ = os.getloadavg()
    except (AttributeError, OSError):
        return f"load average {when}: unavailable"
    return f"load average {when}: {one:.2f} (1 min), {five:.2f} (5 min), {os.cpu_count()} cores"


def fmt(s):
    return f"{s.median:9.3f} [{s.min:9.3f}]"


def ratio(a, b):
    """``a / b`` for the medians and the minima, formatted like ``fmt``."""
    return f"{a.median / b.median:12.2f}x [{a.min / b.min:.2f}x]"


def config_label(cfg):
    return f"{cfg.name}: {cfg.batch} x {'-'.join(map(str, cfg.sizes))} f{cfg.dtype[-2:]}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few repeats only: a smoke test, not a measurement")
    args = parser.parse_args(argv)
    quick = args.quick
    started = time.perf_counter()

    print("teachgrad MLP gradient benchmark" + ("  (--quick: too few repeats to trust)"
                                                 if quick else ""))
    for line in environment_lines():
        print("  " + line)

    results = []
    for cfg in CONFIGS:
        p = make_problem(cfg)
        n_params = sum(w.size for w in p.weights)
        print(f"\nconfig {cfg.name}: batch {cfg.batch}, layers "
              f"{'-'.join(map(str, cfg.sizes))}, {cfg.dtype}, tanh, {n_params:,} parameters")
        worst = check_gradients(p)
        print(f"  gradients agree: max |teachgrad - numpy| / max|numpy| = {worst:.1e} "
              f"(rtol {cfg.rtol:g}, atol {cfg.atol:g} x max|numpy| per parameter)")
        t0 = time.perf_counter()
        graph_gradient(p)                           # the first call traces
        trace_ms = (time.perf_counter() - t0) * 1e3
        n_nodes = len(p.graph_step.graph.get_operations())
        worst = check_gradients(p, graph_gradient, "graph mode")
        print(f"  graph mode: first call (trace + one run) {trace_ms:.1f} ms, {n_nodes} nodes "
              f"(tg.gradients inside; parameters are captured tg.Variables, the batch is "
              f"the argument)")
        print(f"  graph gradients agree: max |graph - numpy| / max|numpy| = {worst:.1e}")

        if cfg is CONFIGS[0]:
            reps = LOSS_HEAD_QUICK_REPEATS if quick else LOSS_HEAD_REPEATS
            logits = tg.Variable(3 * np.random.default_rng(1).standard_normal(
                (cfg.batch, cfg.sizes[-1])).astype(cfg.dtype))

            def head(loss_of):
                def run():
                    with tg.GradientTape() as tape:
                        loss = loss_of(logits)
                    return tape.gradient(loss, logits)
                return run

            losses = {k: (lambda z, pick=pick: -tg.mean(pick(tg.log_softmax(z), p)))
                      for k, pick in LOSS_HEADS.items()}
            # The fused op, for comparison (what a user of it writes instead).
            losses["fused op"] = lambda z: tg.mean(
                tg.sparse_softmax_cross_entropy_with_logits(p.labels, z))
            heads = interleaved_times({k: head(f) for k, f in losses.items()},
                                      warmup=5, repeats=reps)
            print("  loss head alone (log_softmax, label pick, mean; forward+backward), "
                  "median us: " + ", ".join(f"{k} {statistics.median(v) * 1e6:.0f}"
                                            for k, v in heads.items())
                  + f"  -> using {next(iter(LOSS_HEADS))}")

        repeats = cfg.quick_repeats if quick else cfg.repeats
        t0 = time.perf_counter()
        times = interleaved_times({"teachgrad": lambda: teachgrad_gradient(p),
                                   "graph": lambda: graph_gradient(p),
                                   "numpy": lambda: numpy_gradient(p)},
                                  warmup=1 if quick else cfg.warmup, repeats=repeats)
        if p.graph_step.trace_count != 1:
            raise AssertionError(f"config {cfg.name}: graph mode traced "
                                 f"{p.graph_step.trace_count} times, not once")
        t_tg, t_np = stat(times["teachgrad"], 1e3), stat(times["numpy"], 1e3)
        t_gr = stat(times["graph"], 1e3)
        results.append((cfg, t_tg, t_gr, t_np))
        print(f"  {repeats} interleaved repeats ({time.perf_counter() - t0:.1f} s), "
              f"ms per gradient, median [min]:")
        print(f"    teachgrad {fmt(t_tg)}   (eager, GradientTape)")
        print(f"    graph     {fmt(t_gr)}   (tg.function, traced)")
        print(f"    numpy     {fmt(t_np)}")
        print(f"    ratio teachgrad/numpy: {t_tg.median / t_np.median:.2f}x median, "
              f"{t_tg.min / t_np.min:.2f}x min; teachgrad overhead "
              f"{t_tg.median - t_np.median:+.3f} ms per gradient (median)")
        print(f"    ratio graph/eager: {t_gr.median / t_tg.median:.2f}x median, "
              f"{t_gr.min / t_tg.min:.2f}x min; graph/numpy: {t_gr.median / t_np.median:.2f}x "
              f"median, {t_gr.min / t_np.min:.2f}x min; graph overhead "
              f"{t_gr.median - t_np.median:+.3f} ms per gradient (median)")
        del p

    repeats = SCALAR_QUICK_REPEATS if quick else SCALAR_REPEATS
    print(f"\nscalar chain: {SCALAR_OPS} ops on a 0-d float64 tensor "
          f"(x*1.0001, sin, x*1.0001, tanh), {repeats} interleaved repeats")
    chain = bench_scalar_chain(repeats)
    print("  backward checked against the chain rule by hand")

    print("\n== summary " + "=" * 70)
    print(f"{'ms per gradient':<32}{'teachgrad (eager)':>23}{'graph (tg.function)':>23}"
          f"{'numpy':>23}")
    print(f"{'':<32}{'median [min]':>23}{'median [min]':>23}{'median [min]':>23}")
    for cfg, t_tg, t_gr, t_np in results:
        print(f"{config_label(cfg):<32}  {fmt(t_tg)}  {fmt(t_gr)}  {fmt(t_np)}")
    print(f"{'ratios':<32}{'eager/numpy':>23}{'graph/eager':>23}{'graph/numpy':>23}")
    for cfg, t_tg, t_gr, t_np in results:
        print(f"{config_label(cfg):<32}  {ratio(t_tg, t_np)}  {ratio(t_gr, t_tg)}  "
              f"{ratio(t_gr, t_np)}")
    for cfg, t_tg, t_gr, t_np in results[:1]:
        met = t_gr.median <= t_tg.median
        print(f"target graph/eager <= 1.0 once traced (config {cfg.name}, medians): "
              f"{t_gr.median / t_tg.median:.2f}x, {'met' if met else 'NOT met'}")
    print(f"{'us per scalar op':<32}{'median [min]':>23}")
    for name, s in chain.items():
        print(f"  {name:<30}  {fmt(s)}")
    print(f"total time {time.perf_counter() - started:.1f} s; {load_line('at end')}")


if __name__ == "__main__":
    main()
