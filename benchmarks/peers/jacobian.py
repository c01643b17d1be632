"""The Jacobian of a 256 -> 256 tanh layer, for teachgrad and each peer.

    .bench-venv/bin/python benchmarks/peers/jacobian.py [--quick] [--json PATH]

``f(x) = tanh(W x + b)`` with W (256, 256), b and x (256,), float64 (fixed seed);
its Jacobian with respect to x, a (256, 256) array, row i the gradient of output i.
A timed call computes it from x, forward pass included:

* teachgrad ``tg.vjp(f, x)``, then ``tg.vmap`` of its VJP function over the rows of
  the identity (the 256 one-hot cotangents), one pass for all of them;
* teachgrad ``tg.function(tg.jacrev(f))``, traced once before timing (jit's peer);
* teachgrad, the same VJP function called in a Python loop over the 256 one-hot
  rows (made once, outside the timed calls), stacked with ``tg.stack``;
* ``jax.jacrev(f)``, jitted and not; ``torch.func.jacrev(f)``;
* the floor: the analytic Jacobian in numpy, ``(1 - y**2)[:, None] * W``.

Each Jacobian is checked against the analytic one first; the table shows each
time over numpy's (median of per-repeat ratios, everything interleaved in one
process) and teachgrad's vmap over its loop.
"""
import common   # first: it limits the threads before numpy loads OpenBLAS
import mlp_peers
import numpy as np
import teachgrad as tg

N = 256
RTOL, ATOL = 1e-12, 1e-12


def make_problem(seed=0):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((N, N)) / np.sqrt(N)
    return W, 0.1 * rng.standard_normal(N), rng.standard_normal(N)


def numpy_jacobian(W, b, x):
    y = np.tanh(W @ x + b)
    return (1 - y * y)[:, None] * W


class Teachgrad:
    name = "teachgrad"

    def __init__(self, W, b, x):
        tW, tb = tg.constant(W), tg.constant(b)
        self.f = lambda x: tg.tanh(tW @ x + tb)
        self.x, self.eye = tg.constant(x), tg.constant(np.eye(N))
        self.rows = [tg.constant(row) for row in np.eye(N)]
        self.traced = tg.function(tg.jacrev(self.f))   # traced on the first call

    def jacobian(self):
        """vmap of the VJP over the one-hot cotangents."""
        _, vjp_fn = tg.vjp(self.f, self.x)
        return tg.vmap(lambda ct: vjp_fn(ct)[0])(self.eye)

    def function_jacobian(self):
        """``tg.function(tg.jacrev(f))``, as a JAX user jits ``jax.jacrev(f)``."""
        return self.traced(self.x)

    def loop(self):
        _, vjp_fn = tg.vjp(self.f, self.x)
        return tg.stack([vjp_fn(ct)[0] for ct in self.rows])

    @staticmethod
    def host(result):
        return result.numpy()


class Jax:
    def __init__(self, W, b, x, jit):
        jax = common.load("jax")
        if jax is None:
            raise mlp_peers.Unavailable("jax")
        import jax.numpy as jnp
        self.name, self.jax = ("jax jit" if jit else "jax"), jax
        jW, jb = jnp.asarray(W), jnp.asarray(b)
        self.x = jnp.asarray(x)
        fn = jax.jacrev(lambda x: jnp.tanh(jW @ x + jb))
        self._jacobian = jax.jit(fn) if jit else fn

    def jacobian(self):   # JAX dispatches asynchronously: wait for the result
        return self.jax.block_until_ready(self._jacobian(self.x))

    host = staticmethod(np.asarray)


class Torch:
    name = "torch"

    def __init__(self, W, b, x):
        torch = common.load("torch")
        if torch is None:
            raise mlp_peers.Unavailable("torch")
        import torch.func
        tW, tb = torch.tensor(W), torch.tensor(b)
        self.x = torch.tensor(x)
        self._jacobian = torch.func.jacrev(lambda x: torch.tanh(tW @ x + tb))

    def jacobian(self):
        return self._jacobian(self.x)

    @staticmethod
    def host(result):
        return result.numpy()


def peers(W, b, x):
    """Every peer that is installed: {name: object}. Missing ones print a note."""
    return mlp_peers.installed(lambda: Torch(W, b, x), lambda: Jax(W, b, x, jit=True),
                               lambda: Jax(W, b, x, jit=False))


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    W, b, x = make_problem()
    want = numpy_jacobian(W, b, x)
    tgad = Teachgrad(W, b, x)
    libraries = {"teachgrad": tgad, **peers(W, b, x)}
    calls = {"teachgrad loop": (tgad.loop, tgad.host),
             "teachgrad tg.function": (tgad.function_jacobian, tgad.host),
             **{name: (lib.jacobian, lib.host) for name, lib in libraries.items()}}
    fns = {"numpy": lambda: numpy_jacobian(W, b, x),
           **common.checked(calls, want, "Jacobian", RTOL, ATOL)}
    print(f"checks: {len(libraries)} libraries' Jacobians (and teachgrad's loop) agree with "
          f"the analytic one")

    warmup, repeats, budget, lead_in = (1, 3, 2.0, 0) if args.quick else (10, 200, 30.0, 1)
    times = common.interleaved(fns, warmup, repeats, budget, lead_in=lead_in)
    n = len(times["numpy"])
    label = f"Jacobian of tanh(W x + b), {N} -> {N}, float64, {n} interleaved repeats"
    print(label)
    rows = common.against(times, fns, "numpy")
    rows["teachgrad"]["vs_loop"] = common.median_ratio(times, "teachgrad", "teachgrad loop")
    print(f"  teachgrad vmap / its loop of {N} VJPs: {rows['teachgrad']['vs_loop']:.2f}x")
    if "jax jit" in times:   # the goal: the traced Jacobian within 1.2x of jit's
        rows["teachgrad tg.function"]["vs_jax_jit"] = common.median_ratio(
            times, "teachgrad tg.function", "jax jit")
        print(f"  teachgrad tg.function / jax jit: "
              f"{rows['teachgrad tg.function']['vs_jax_jit']:.2f}x")
    return common.write(args, {"workload": "jacobian", "label": label, "repeats": n,
                               "rows": rows})


if __name__ == "__main__":
    main()
