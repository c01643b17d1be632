"""HVP of the medium MLP loss / its gradient, for teachgrad and each peer.

    .bench-venv/bin/python benchmarks/peers/hvp.py [--quick] [--json PATH]

The Hessian of ``mlp_medium.py``'s loss (784-256-256-10, batch 64, float64)
with respect to every parameter, times one fixed direction. Each library's HVP
time is divided by its own gradient time (median of per-repeat ratios,
everything interleaved in one process).

HVPs: teachgrad forward over reverse (a ``tg.ForwardAccumulator`` around a
``tg.GradientTape``), and ``tg.hvp`` in a ``tg.function`` (over the traced gradient, as
JAX jit's is over its jitted gradient); PyTorch double backward (``create_graph=True``, then the
gradient of ``<gradient, v>``); JAX ``jax.jvp(jax.grad(loss))``, jitted and not;
autograd reverse over reverse (``grad`` of ``<grad, v>``). Each is checked first
against central differences of numpy's exact gradient.
"""
import common
import mlp_gradient as mlp
import mlp_peers

RTOL, ATOL = 1e-4, 1e-6     # finite differences of the gradient: about 1e-8 accurate


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    p = mlp.make_problem(mlp.CONFIGS[0])
    v, vx = mlp_peers.directions(p)
    ref = mlp_peers.Numpy(p, v, vx)
    want = ref.hvp_reference()

    tgad = mlp_peers.Teachgrad(p, v, vx)
    libraries = {"teachgrad": tgad, "teachgrad tg.function": Traced(tgad),
                 **mlp_peers.peers(p, v, vx)}
    fns = {}
    for name, lib in libraries.items():
        common.check_close(f"{name} HVP", lib.host(lib.hvp()), want, RTOL, ATOL)
        fns[f"{name} gradient"] = lib.gradient
        fns[f"{name} hvp"] = lib.hvp
    print(f"checks: {len(libraries)} libraries' HVPs agree with finite differences of "
          f"numpy's gradient")

    warmup, repeats, budget, lead_in = (1, 3, 2.0, 0) if args.quick else (10, 300, 30.0, 1)
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=lead_in)
    n = len(times[next(iter(fns))])
    label = f"HVP of the medium MLP loss / its gradient, {n} interleaved repeats"
    print(label)
    rows = {}
    for name in libraries:
        g, h = f"{name} gradient", f"{name} hvp"
        rows[name] = {"gradient_ms": common.median_ms(times[g]),
                      "hvp_ms": common.median_ms(times[h]),
                      "ratio": common.median_ratio(times, h, g)}
        r = rows[name]
        print(f"  {name:22s} gradient {r['gradient_ms']:8.3f} ms | HVP {r['hvp_ms']:8.3f} ms "
              f"| {r['ratio']:5.2f}x")
    if "jax jit" in libraries:   # the goal: the traced HVP in jax.jit's time
        rows["teachgrad tg.function"]["vs_jax_jit"] = common.median_ratio(
            times, "teachgrad tg.function hvp", "jax jit hvp")
        print(f"  teachgrad tg.function HVP / jax jit's: "
              f"{rows['teachgrad tg.function']['vs_jax_jit']:.2f}x")
    return common.write(args, {"workload": "hvp", "label": label, "repeats": n, "rows": rows})


class Traced:
    """teachgrad's gradient and HVP as ``tg.function``s (each traced on its first call)."""

    def __init__(self, tgad):
        self.gradient, self.hvp, self.host = (tgad.function_gradient, tgad.function_hvp,
                                              tgad.host)


if __name__ == "__main__":
    main()
