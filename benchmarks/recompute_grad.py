"""recompute_grad: memory held by the tape, and time, with and without it.

A chain of 64 blocks, each ``tanh(h @ W_i)`` with 512x512 weights on a batch of
256 (float64), differentiated with respect to every W_i. With recompute_grad the
chain is cut into 8 segments of 8 blocks (the usual sqrt(n) checkpointing), each
wrapped in ``tg.recompute_grad``: the tape keeps only each segment's input.

Memory is measured with tracemalloc (numpy reports its allocations to it):
what the tape holds once the forward pass is done (the activations saved for
the backward pass), and the peak over forward plus backward. The time is the
median of interleaved repeats. Both gradients are checked to agree first.

    python benchmarks/recompute_grad.py [--quick]
"""
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import teachgrad as tg  # noqa: E402

BLOCKS, WIDTH, BATCH = 64, 512, 256


def main(argv=None):
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    blocks = 16 if quick else BLOCKS
    rng = np.random.default_rng(0)
    weights = [tg.Variable(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH))
               for _ in range(blocks)]
    x = tg.constant(rng.standard_normal((BATCH, WIDTH)))

    segment = 8

    def block(h, W):
        return tg.tanh(h @ W)

    def blocks_of(ws):
        def run(h):
            for W in ws:
                h = block(h, W)
            return h
        return run

    plain_chain = [blocks_of([W]) for W in weights]
    checkpointed = [tg.recompute_grad(blocks_of(weights[i:i + segment]))
                    for i in range(0, len(weights), segment)]

    def forward(chain):
        h = x
        for fn in chain:
            h = fn(h)
        return tg.mean(h * h)

    def gradient(chain, measure=False):
        start = tracemalloc.get_traced_memory()[0] if measure else 0
        with tg.GradientTape() as tape:
            loss = forward(chain)
        held = tracemalloc.get_traced_memory()[0] - start if measure else 0
        grads = tape.gradient(loss, weights)
        return (grads, held) if measure else grads

    plain, recomputed = gradient(plain_chain), gradient(checkpointed)
    for a, b in zip(plain, recomputed):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-14)

    def memory(chain):
        tracemalloc.start()
        tracemalloc.reset_peak()
        _, held = gradient(chain, measure=True)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return held / 2**20, top / 2**20

    chains = {"plain": plain_chain, "recompute_grad": checkpointed}
    mem = {name: memory(chain) for name, chain in chains.items()}
    times = {name: [] for name in chains}
    for r in range(2 if quick else 7):
        order = list(chains.items())
        for name, chain in (order if r % 2 else order[::-1]):
            start = time.perf_counter()
            gradient(chain)
            times[name].append(time.perf_counter() - start)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"{blocks} blocks of tanh(h @ W), W {WIDTH}x{WIDTH}, batch {BATCH}, float64, "
          f"segments of {segment}; gradients agree")
    for name, (held, top) in mem.items():
        print(f"  {name:15s} held by the tape after forward {held:7.1f} MiB, "
              f"peak {top:7.1f} MiB, time {med[name] * 1e3:7.1f} ms")
    print(f"memory held by the tape: {mem['plain'][0] / mem['recompute_grad'][0]:.1f}x less "
          f"(target >= 5x); peak: {mem['plain'][1] / mem['recompute_grad'][1]:.2f}x less; "
          f"time: {med['recompute_grad'] / med['plain']:.2f}x (target <= 2x)")

if __name__ == "__main__":
    main()
