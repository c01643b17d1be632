"""MLP gradient / hand-written numpy, for teachgrad and each peer, in one process.

``mlp_medium.py`` (784-256-256-10, batch 64, float64) and ``mlp_large.py``
(784-2048-2048-10, batch 1024, float32) call ``main`` with their configuration.
Every gradient is checked against numpy's before anything is timed.
"""
import common
import mlp_gradient as mlp
import mlp_peers

#: Tolerances for the check against numpy (atol relative to each gradient's largest entry).
TOLERANCES = {"float64": (1e-9, 1e-9), "float32": (1e-3, 1e-4)}

#: (warm-up calls, repeats, time budget in seconds, untimed lead-in calls before each
#: timed one) per configuration. B's calls take about half a second each: what the
#: previous library leaves behind is lost in that, so B times every call.
PLAN = {"A": (10, 300, 30.0, 1), "B": (2, 30, 75.0, 0)}
QUICK = (1, 3, 2.0, 0)


def main(config_name, description, argv=None):
    args = common.parser(description).parse_args(argv)
    cfg = {c.name: c for c in mlp.CONFIGS}[config_name]
    p = mlp.make_problem(cfg)
    v, vx = mlp_peers.directions(p)
    ref = mlp_peers.Numpy(p, v, vx)
    tgad = mlp_peers.Teachgrad(p, v, vx)

    fns = {"numpy": ref.gradient, "teachgrad": tgad.gradient,
           "teachgrad tg.function": tgad.function_gradient}
    hosts = {"teachgrad": tgad.host, "teachgrad tg.function": tgad.host}
    fused = {"teachgrad, fused loss": tgad.fused_gradient,
             "teachgrad tg.function, fused loss": tgad.fused_function_gradient}
    hosts.update(dict.fromkeys(fused, tgad.host))
    for name, peer in mlp_peers.peers(p, v, vx).items():
        fns[name], hosts[name] = peer.gradient, peer.host
        if hasattr(peer, "fused_gradient"):
            fused[f"{name}, fused loss"], hosts[f"{name}, fused loss"] = \
                peer.fused_gradient, peer.host
    # Each library's fused cross-entropy op, where it has one (numpy's pass is fused).
    fns.update(fused)

    # Check every library against numpy before timing anything.
    rtol, atol = TOLERANCES[cfg.dtype]
    want_loss, want_grads = ref.gradient()
    for name, host in hosts.items():
        loss, grads = host(fns[name]())
        common.check_close(f"{name} loss", loss, want_loss, rtol, atol)
        common.check_close(f"{name} gradient", grads, want_grads, rtol, atol)
    print(f"checks: {len(hosts)} libraries agree with numpy (rtol {rtol})")

    warmup, repeats, budget, lead_in = QUICK if args.quick else PLAN[config_name]
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=lead_in)
    n = len(times["numpy"])
    label = (f"MLP {'-'.join(map(str, cfg.sizes))}, batch {cfg.batch}, {cfg.dtype}: "
             f"gradient, {n} interleaved repeats")
    print(label)
    rows = {}
    for name in fns:
        ms = common.median_ms(times[name])
        ratio = common.median_ratio(times, name, "numpy")
        rows[name] = {"ms": ms, "ratio": ratio}
        print(f"  {name:34s} {ms:9.3f} ms   {ratio:6.2f} x numpy")
    return common.write(args, {"workload": f"mlp_{config_name}", "label": label,
                               "repeats": n, "rows": rows})
