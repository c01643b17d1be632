"""Forward mode on the medium MLP loss (batch 64, 784-256-256-10, tanh, float64).

Measures, in one process with interleaved repeats (median of many):

* JVP / forward: the loss with a ForwardAccumulator carrying one random
  direction over every parameter, divided by the plain forward pass (no tape),
  once with native JVP rules and once with every JVP by transposition
  (``tg.transposition_only()``);
* HVP / gradient: a forward-over-reverse Hessian-vector product (``tg.hvp``
  style: accumulator around a tape) divided by one tape gradient.

The same on a tiny MLP (batch 4, layers 3-4-4-2), where the matrix products cost
nothing and the ratios show what forward mode adds per op in Python (its tangent
computations run on raw arrays when nothing records them).

Last, the cost per op of forward mode on a chain of ``tanh(y @ W)`` on 4x4 values:
run with no accumulator, recorded by one with no tangent to compute, and with one
(CPU time, the minimum of 15 repeats).

The JVP is checked against a central finite difference of the loss and the
HVP against finite differences of the gradient before anything is timed.

    OPENBLAS_NUM_THREADS=1 python benchmarks/forward_mode.py [--quick] [--repeats N] [--cpu]

(One BLAS thread: on a shared machine a thread pool's spinning makes the medians
wander more than anything measured here. ``--cpu`` times the process's CPU time, not
the wall clock: on a machine shared with other jobs, the time spent waiting for a
core is left out; with one thread it is the time the work took.)
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_gradient as mlp  # noqa: E402
import teachgrad as tg  # noqa: E402

TINY = mlp.Config("tiny", 4, (3, 4, 4, 2), "float64", warmup=20, repeats=3000,
                  quick_repeats=100, rtol=1e-9, atol=1e-12)


def loss_of(p, params):
    h = p.tg_x
    for W, b in zip(params[0:-2:2], params[1:-2:2]):
        h = tg.tanh(h @ W + b)
    logits = h @ params[-2] + params[-1]
    return -tg.mean(tg.log_softmax(logits, axis=-1)[p.rows, p.labels])


def workloads(p):
    """The timed functions of problem ``p``, by name (a direction drawn once)."""
    params = p.tg_params
    rng = np.random.default_rng(1)
    direction = [tg.constant(rng.standard_normal(v.shape)) for v in params]
    x_direction = tg.constant(rng.standard_normal(p.tg_x.shape))

    def forward():
        return loss_of(p, params)

    def jvp(primals=params, tangents=direction):
        with tg.ForwardAccumulator(primals, tangents) as acc:
            loss = loss_of(p, params)
        return acc.jvp(loss)

    def transposed(fn):
        def run():
            with tg.transposition_only():
                return fn()
        return run

    def jvp_input():   # the loss as a function of its input batch, along one direction
        return jvp(p.tg_x, x_direction)

    def gradient():
        with tg.GradientTape() as tape:
            loss = loss_of(p, params)
        return tape.gradient(loss, params)

    def hvp():
        with tg.ForwardAccumulator(params, direction) as acc:
            with tg.GradientTape() as tape:
                loss = loss_of(p, params)
            grads = tape.gradient(loss, params)
        return [acc.jvp(g) for g in grads]

    return {"forward": forward, "jvp native": jvp, "jvp transposed": transposed(jvp),
            "jvp x native": jvp_input, "jvp x transposed": transposed(jvp_input),
            "gradient": gradient, "hvp": hvp}, direction


def check(p, fns, direction):
    """JVP and HVP against finite differences along ``direction``."""
    eps = 1e-6
    params = p.tg_params

    def shifted(sign):
        saved = [v.numpy().copy() for v in params]
        for v, d in zip(params, direction):
            v.assign(v.numpy() + sign * eps * d.numpy())
        loss, grads = float(fns["forward"]()), [g.numpy() for g in fns["gradient"]()]
        for v, s in zip(params, saved):
            v.assign(s)
        return loss, grads
    (lp, gp), (lm, gm) = shifted(+1), shifted(-1)
    fd_jvp = (lp - lm) / (2 * eps)
    for name in ("jvp native", "jvp transposed"):
        got = float(fns[name]())
        assert np.isclose(got, fd_jvp, rtol=1e-5), (name, got, fd_jvp)
    for h, a, b in zip(fns["hvp"](), gp, gm):
        np.testing.assert_allclose(h.numpy(), (a - b) / (2 * eps), rtol=1e-4, atol=1e-7)
    print(f"checks: JVP = {fd_jvp:.6f} (finite difference), HVP matches finite differences")


def medians(fns, repeats, clock=time.perf_counter):
    """Median milliseconds of each function by ``clock``, the repeats interleaved (each
    round in the opposite order of the last)."""
    times = {name: [] for name in fns}
    for _ in range(5):
        for fn in fns.values():
            fn()
    for r in range(repeats):
        order = list(fns.items())
        if r % 2:
            order.reverse()
        for name, fn in order:
            start = clock()
            fn()
            times[name].append(clock() - start)
    return {name: float(np.median(t)) * 1e3 for name, t in times.items()}


def report(title, med, repeats):
    print(f"{title}, {repeats} interleaved repeats, median ms:")
    for name, ms in med.items():
        print(f"  {name:16s} {ms:8.3f}")
    print(f"JVP / forward, direction in the input:      native "
          f"{med['jvp x native'] / med['forward']:.2f}x, transposed "
          f"{med['jvp x transposed'] / med['forward']:.2f}x")
    print(f"JVP / forward, direction in every parameter: native "
          f"{med['jvp native'] / med['forward']:.2f}x (goal <= 2.0; the products alone: "
          f"2.25x on the medium MLP), transposed "
          f"{med['jvp transposed'] / med['forward']:.2f}x")
    print(f"HVP / gradient: {med['hvp'] / med['gradient']:.2f}x (goal <= 1.8; the products "
          f"alone: 2.34x on the medium MLP)")


def chain_split(n=200, repeats=15):
    """Microseconds per op of a chain of ``tanh(y @ W)`` on 4x4 values: with no
    accumulator, recorded by one without a tangent to compute, and with one."""
    x, W = tg.constant(np.full((4, 4), 0.1)), tg.constant(np.full((4, 4), 0.2))

    def chain():
        y = x
        for _ in range(n):
            y = tg.tanh(y @ W)
        return y

    def recorded():
        with tg.ForwardAccumulator(tg.constant(1.0), tg.constant(1.0)):
            return chain()

    def with_tangents():
        with tg.ForwardAccumulator(x, tg.ones_like(x)) as acc:
            y = chain()
        return acc.jvp(y)

    print("chain of tanh(y @ W), 4x4, CPU time per op (minimum of 15 repeats):")
    for name, fn in (("no accumulator", chain), ("recorded, no tangent", recorded),
                     ("with a tangent", with_tangents)):
        best = min(_cpu_time(fn) for _ in range(repeats))
        print(f"  {name:22s} {best / (2 * n) * 1e6:6.2f} us")


def _cpu_time(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else None
    clock = time.process_time if "--cpu" in argv else time.perf_counter
    print(f"teachgrad from {os.path.dirname(tg.__file__)}; clock: {clock.__name__}")
    for config, title in ((mlp.CONFIGS[0], "medium MLP (batch 64, 784-256-256-10, float64)"),
                          (TINY, "tiny MLP (batch 4, 3-4-4-2, float64)")):
        p = mlp.make_problem(config)
        fns, direction = workloads(p)
        check(p, fns, direction)
        n = (repeats or (20 if quick else 300)) * (10 if config is TINY else 1)
        report(title, medians(fns, n, clock), n)
    chain_split()


if __name__ == "__main__":
    main()
