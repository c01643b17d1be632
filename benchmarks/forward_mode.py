"""Forward mode on the medium MLP loss (batch 64, 784-256-256-10, tanh, float64).

Measures, in one process with interleaved repeats (median of many):

* JVP / forward: the loss with a ForwardAccumulator carrying one random
  direction over every parameter, divided by the plain forward pass (no tape),
  once with native JVP rules and once with every JVP by transposition
  (``tg.transposition_only()``);
* HVP / gradient: a forward-over-reverse Hessian-vector product (``tg.hvp``
  style: accumulator around a tape) divided by one tape gradient.

The JVP is checked against a central finite difference of the loss and the
HVP against finite differences of the gradient before anything is timed.

    python benchmarks/forward_mode.py [--quick]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_gradient as mlp  # noqa: E402
import teachgrad as tg  # noqa: E402


def loss_of(p, params):
    h = p.tg_x
    for W, b in zip(params[0:-2:2], params[1:-2:2]):
        h = tg.tanh(h @ W + b)
    logits = h @ params[-2] + params[-1]
    return -tg.mean(tg.log_softmax(logits, axis=-1)[p.rows, p.labels])


def main(argv=None):
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    repeats = 20 if quick else 300
    p = mlp.make_problem(mlp.CONFIGS[0])
    params = p.tg_params
    rng = np.random.default_rng(1)
    direction = [tg.constant(rng.standard_normal(v.shape)) for v in params]

    def forward():
        return loss_of(p, params)

    def jvp():
        with tg.ForwardAccumulator(params, direction) as acc:
            loss = loss_of(p, params)
        return acc.jvp(loss)

    def jvp_transposed():
        with tg.transposition_only():
            return jvp()

    x_direction = tg.constant(rng.standard_normal(p.tg_x.shape))

    def jvp_input():
        # The loss as a function of its input batch, along one input direction.
        with tg.ForwardAccumulator(p.tg_x, x_direction) as acc:
            loss = loss_of(p, params)
        return acc.jvp(loss)

    def jvp_input_transposed():
        with tg.transposition_only():
            return jvp_input()

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

    # Check before timing: JVP and HVP against finite differences along `direction`.
    eps = 1e-6
    def shifted(sign):
        saved = [v.numpy().copy() for v in params]
        for v, d in zip(params, direction):
            v.assign(v.numpy() + sign * eps * d.numpy())
        loss, grads = float(forward()), [g.numpy() for g in gradient()]
        for v, s in zip(params, saved):
            v.assign(s)
        return loss, grads
    (lp, gp), (lm, gm) = shifted(+1), shifted(-1)
    fd_jvp = (lp - lm) / (2 * eps)
    for name, fn in (("native", jvp), ("transposed", jvp_transposed)):
        got = float(fn())
        assert np.isclose(got, fd_jvp, rtol=1e-5), (name, got, fd_jvp)
    for h, a, b in zip(hvp(), gp, gm):
        np.testing.assert_allclose(h.numpy(), (a - b) / (2 * eps), rtol=1e-4, atol=1e-7)
    print(f"checks: JVP = {fd_jvp:.6f} (finite difference), HVP matches finite differences")

    fns = {"forward": forward, "jvp native": jvp, "jvp transposed": jvp_transposed,
           "jvp x native": jvp_input, "jvp x transposed": jvp_input_transposed,
           "gradient": gradient, "hvp": hvp}
    times = {name: [] for name in fns}
    for _ in range(5):
        for fn in fns.values():
            fn()
    for r in range(repeats):
        order = list(fns.items())
        if r % 2:
            order.reverse()
        for name, fn in order:
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    med = {name: float(np.median(t)) * 1e3 for name, t in times.items()}
    print(f"medium MLP (batch 64, 784-256-256-10, float64), {repeats} interleaved repeats, "
          f"median ms:")
    for name, ms in med.items():
        print(f"  {name:16s} {ms:8.3f}")
    print(f"JVP / forward, direction in the input:      native "
          f"{med['jvp x native'] / med['forward']:.2f}x (target <= 2.5), transposed "
          f"{med['jvp x transposed'] / med['forward']:.2f}x")
    print(f"JVP / forward, direction in every parameter: native "
          f"{med['jvp native'] / med['forward']:.2f}x, transposed "
          f"{med['jvp transposed'] / med['forward']:.2f}x "
          f"(5 extra matmuls on 3: about 2.7x is the floor)")
    print(f"HVP / gradient: {med['hvp'] / med['gradient']:.2f}x (target <= 3)")


if __name__ == "__main__":
    main()
