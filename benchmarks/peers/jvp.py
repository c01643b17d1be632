"""JVP of the medium MLP loss / its forward pass, for teachgrad and each peer.

    .bench-venv/bin/python benchmarks/peers/jvp.py [--quick] [--json PATH]

The loss of ``mlp_medium.py`` (784-256-256-10, batch 64, float64), pushed
forward along one fixed direction over every parameter ("params"), and along
one in the input batch ("input"). Each library's JVP time is divided by its own
forward pass, taken the way its users take one (teachgrad: ops with no tape;
torch: under ``no_grad``; jax: the same jit setting as the JVP), as a median
of per-repeat ratios, everything interleaved in one process.

JVPs: teachgrad ``tg.ForwardAccumulator`` (native JVP rules); PyTorch
``torch.func.jvp``; JAX ``jax.jvp``, jitted and not; autograd ``make_jvp``
(forward mode). Each is checked against numpy first: the exact JVP is
``<gradient, direction>``, with the gradients written by hand.
"""
import common
import mlp_gradient as mlp
import mlp_peers

RTOL = 1e-8


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    p = mlp.make_problem(mlp.CONFIGS[0])
    v, vx = mlp_peers.directions(p)
    ref = mlp_peers.Numpy(p, v, vx)
    want = {"params": ref.jvp_reference(), "input": ref.jvp_x_reference()}
    want_loss = ref.forward()

    libraries = {"teachgrad": mlp_peers.Teachgrad(p, v, vx), **mlp_peers.peers(p, v, vx)}
    fns = {"numpy forward": ref.forward}
    for name, lib in libraries.items():
        # check: the loss and both JVPs agree with numpy
        for direction, jvp in (("params", lib.jvp), ("input", lib.jvp_x)):
            loss, tangent = lib.host(jvp())
            common.check_close(f"{name} loss", loss, want_loss, RTOL, 1e-12)
            common.check_close(f"{name} JVP along {direction}", tangent, want[direction],
                               RTOL, 1e-12)
        common.check_close(f"{name} forward", lib.host(lib.forward()), want_loss, RTOL, 1e-12)
        fns[f"{name} forward"] = lib.forward
        fns[f"{name} jvp params"] = lib.jvp
        fns[f"{name} jvp input"] = lib.jvp_x
    print(f"checks: {len(libraries)} libraries' JVPs agree with <numpy gradient, direction>")

    warmup, repeats, budget, lead_in = (1, 3, 2.0, 0) if args.quick else (10, 300, 30.0, 1)
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=lead_in)
    n = len(times["numpy forward"])
    label = f"JVP of the medium MLP loss / its forward, {n} interleaved repeats"
    print(label)
    rows = {}
    for name in libraries:
        forward = f"{name} forward"
        row = {"forward_ms": common.median_ms(times[forward])}
        for direction in ("params", "input"):
            key = f"{name} jvp {direction}"
            row[f"{direction}_ms"] = common.median_ms(times[key])
            row[f"{direction}_ratio"] = common.median_ratio(times, key, forward)
        rows[name] = row
        print(f"  {name:10s} forward {row['forward_ms']:8.3f} ms | JVP params "
              f"{row['params_ms']:8.3f} ms {row['params_ratio']:5.2f}x | JVP input "
              f"{row['input_ms']:8.3f} ms {row['input_ratio']:5.2f}x")
    print(f"  (numpy forward {common.median_ms(times['numpy forward']):.3f} ms)")
    return common.write(args, {"workload": "jvp", "label": label, "repeats": n, "rows": rows})


if __name__ == "__main__":
    main()
