"""Lesson 11's CNN training step, and one conv2d forward + backward, against PyTorch CPU.

    .bench-venv/bin/python benchmarks/peers/cnn.py [--quick] [--json PATH]

Two workloads, each library in the same process, interleaved (``common.interleaved``):

* ``step``: one training step of the lesson's network on a batch of 32 digits
  (8x8x1, float64): conv 3x3 SAME (8 filters), relu, 2x2 max pool, conv 3x3 SAME (16),
  relu, 2x2 max pool, dense 64 -> 10, the fused sparse softmax cross-entropy, and
  an Adam update. teachgrad eager (a GradientTape, ``tg.optimizers.Adam``), the same
  step as a ``tg.function``, and PyTorch (``torch.optim.Adam``, NCHW, the same
  weights).
* ``conv2d``: one 3x3 SAME convolution of a (32, 32, 32, 16) float32 batch to 32
  channels, forward and both cotangents (input and filters), eager; ``conv2d float64``:
  the same in float64.

Before timing, every library's loss and gradients are checked against teachgrad's
eager ones (the same network from the same weights). The report is each time and
its ratio to PyTorch's (goals, issue 33: the step eager <= 1.3x, as a tg.function
<= 1.1x; conv2d <= 1.5x in float32, <= 0.8x in float64). ``benchmarks/cnn_split.py``
splits teachgrad's times by phase, kernels against Python.
"""
import common
import numpy as np

import teachgrad as tg

BATCH = 32


def _weights(rng):
    def he(*shape):
        return rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[:-1]))
    return [he(3, 3, 1, 8), np.zeros(8), he(3, 3, 8, 16), np.zeros(16), he(64, 10),
            np.zeros(10)]


def _predict(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = tg.nn.relu(tg.nn.conv2d(x, w1, strides=1, padding="SAME") + b1)
    h = tg.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
    h = tg.nn.relu(tg.nn.conv2d(h, w2, strides=1, padding="SAME") + b2)
    h = tg.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
    return tg.reshape(h, (-1, 64)) @ w3 + b3


class TeachgradStep:
    """The lesson's step, eager or traced."""

    def __init__(self, weights, x, y):
        self.params = [tg.Variable(w) for w in weights]
        self.x, self.y = tg.constant(x), tg.constant(y)
        self.optimizer = tg.optimizers.Adam(learning_rate=1e-3)
        self.traced = tg.function(self.step)

    def loss_and_grads(self, x, y):
        with tg.GradientTape() as tape:
            logits = _predict(self.params, x)
            loss = tg.mean(tg.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        return loss, tape.gradient(loss, self.params)

    def step(self, x, y):
        loss, grads = self.loss_and_grads(x, y)
        self.optimizer.apply_gradients(zip(grads, self.params))
        return loss

    def eager(self):
        return self.step(self.x, self.y)

    def function(self):
        return self.traced(self.x, self.y)


class TorchStep:
    """The same network in PyTorch: NCHW, weights converted from HWIO."""

    def __init__(self, torch, weights, x, y, device="cpu"):
        self.torch, F = torch, torch.nn.functional
        w1, b1, w2, b2, w3, b3 = weights
        conv = lambda w: torch.tensor(w.transpose(3, 2, 0, 1).copy(), device=device,  # noqa: E731
                                      requires_grad=True)
        plain = lambda w: torch.tensor(w, device=device, requires_grad=True)  # noqa: E731
        self.params = [conv(w1), plain(b1), conv(w2), plain(b2), plain(w3), plain(b3)]
        self.x = torch.tensor(x.transpose(0, 3, 1, 2).copy(), device=device)
        self.y = torch.tensor(y, device=device)
        self.optimizer = torch.optim.Adam(self.params, lr=1e-3, eps=1e-7)

        def predict():
            w1, b1, w2, b2, w3, b3 = self.params
            h = F.max_pool2d(F.relu(F.conv2d(self.x, w1, b1, padding="same")), 2)
            h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2, padding="same")), 2)
            return h.permute(0, 2, 3, 1).reshape(-1, 64) @ w3 + b3   # NHWC order, as tg
        self.predict = predict

    def loss_and_grads(self):
        loss = self.torch.nn.functional.cross_entropy(self.predict(), self.y)
        return loss, self.torch.autograd.grad(loss, self.params)

    def step(self):
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.torch.nn.functional.cross_entropy(self.predict(), self.y)
        loss.backward()
        self.optimizer.step()
        return loss


def check_step(tg_step, torch_step):
    loss, grads = tg_step.loss_and_grads(tg_step.x, tg_step.y)
    t_loss, t_grads = torch_step.loss_and_grads()
    as_hwio = [lambda g: g.cpu().numpy().transpose(2, 3, 1, 0), lambda g: g.cpu().numpy()] * 2 \
        + [lambda g: g.cpu().numpy()] * 2
    common.check_close("torch loss", t_loss.detach().cpu().numpy(), loss.numpy(), 1e-9, 1e-12)
    common.check_close("torch gradients", [f(g) for f, g in zip(as_hwio, t_grads)],
                       [g.numpy() for g in grads], 1e-7, 1e-9)


def conv_workload(rng, torch, dtype=np.float32, device="cpu"):
    """{name: fn} for one conv2d forward and backward, and the check of each (teachgrad
    on the backend in use, PyTorch on ``device``)."""
    x = rng.standard_normal((32, 32, 32, 16)).astype(dtype)
    w = (rng.standard_normal((3, 3, 16, 32)) * 0.1).astype(dtype)
    ct = rng.standard_normal((32, 32, 32, 32)).astype(dtype)
    tx, tw, tct = tg.constant(x), tg.constant(w), tg.constant(ct)

    def teachgrad_conv():
        with tg.GradientTape() as tape:
            tape.watch([tx, tw])
            y = tg.nn.conv2d(tx, tw, strides=1, padding="SAME")
        return tape.gradient(y, [tx, tw], output_gradients=tct)
    fns = {"teachgrad": teachgrad_conv}
    if torch is not None:
        px = torch.tensor(x.transpose(0, 3, 1, 2).copy(), device=device, requires_grad=True)
        pw = torch.tensor(w.transpose(3, 2, 0, 1).copy(), device=device, requires_grad=True)
        pct = torch.tensor(ct.transpose(0, 3, 1, 2).copy(), device=device)

        def torch_conv():
            y = torch.nn.functional.conv2d(px, pw, padding="same")
            return torch.autograd.grad(y, (px, pw), pct)
        gx, gw = teachgrad_conv()
        px_g, pw_g = torch_conv()
        common.check_close("torch conv2d gradients",
                           [px_g.cpu().numpy().transpose(0, 2, 3, 1),
                            pw_g.cpu().numpy().transpose(2, 3, 1, 0)],
                           [gx.numpy(), gw.numpy()], 1e-3, 1e-4)
        fns["torch"] = torch_conv
    return fns


def main(argv=None):
    args = common.parser(__doc__.splitlines()[0]).parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.random((BATCH, 8, 8, 1))
    y = rng.integers(0, 10, BATCH)
    weights = _weights(rng)
    torch = common.load("torch")
    tg_step = TeachgradStep(weights, x, y)
    step_fns = {"teachgrad": tg_step.eager, "teachgrad tg.function": tg_step.function}
    if torch is not None:
        torch_step = TorchStep(torch, weights, x, y)
        check_step(tg_step, torch_step)
        step_fns["torch"] = torch_step.step
    print("checks: teachgrad's CNN loss and gradients agree with PyTorch's"
          if torch is not None else "note: no PyTorch here; teachgrad alone")
    warmup, repeats, budget = (2, 5, 5.0) if args.quick else (20, 300, 40.0)
    rows = {}
    workloads = (("step", step_fns), ("conv2d", conv_workload(rng, torch)),
                 ("conv2d float64", conv_workload(rng, torch, np.float64)))
    for workload, fns in workloads:
        times = common.interleaved(fns, warmup, repeats, budget)
        print(f"{workload}: ms per call (median), ratio to PyTorch's time")
        for name in fns:
            row = {"ms": common.median_ms(times[name])}
            if "torch" in fns:
                row["vs_torch"] = common.median_ratio(times, name, "torch")
            rows[f"{workload}: {name}"] = row
            ratio = f"   {row['vs_torch']:5.2f}x torch" if "vs_torch" in row else ""
            print(f"  {name:24s} {row['ms']:8.3f} ms{ratio}")
    return common.write(args, {"workload": "cnn", "rows": rows})


if __name__ == "__main__":
    main()
