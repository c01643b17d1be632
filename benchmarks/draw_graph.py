"""tg.viz.draw on a 1,000-node graph: the time to write the DOT text, and to lay it
out as SVG with Graphviz's ``dot``.

The graph is an MLP-like chain, each layer in its own name scope
(``layer7/matmul``, ``layer7/add``, ``layer7/tanh``, its weights as constants),
a loss, and its gradient graph from ``tg.gradients`` (which doubles the node
count), so the drawing has nested clusters, side-by-side gradient nodes and
their colours. The issue's target: a 1,000-node graph renders in <= 2 s.

    python benchmarks/draw_graph.py [--quick]

``--quick`` uses a small graph and one repeat (a smoke test; its numbers mean
little). Without ``dot`` on PATH only the DOT-writing time is measured.
"""
import os
import shutil
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import teachgrad as tg  # noqa: E402

TARGET_NODES = 1000
WIDTH = 4


def build(target_nodes):
    """A graph of about ``target_nodes`` nodes: forward layers, loss, gradients."""
    rng = np.random.default_rng(0)
    graph = tg.Graph()
    layers = 1
    while True:   # find the depth that gives the node count asked for
        graph = tg.Graph()
        with graph.as_default():
            x = tg.placeholder(tg.float64, shape=(None, WIDTH), name="x")
            h, weights = x, []
            for i in range(layers):
                with tg.name_scope(f"layer{i}"):
                    W = tg.constant(rng.standard_normal((WIDTH, WIDTH)), name="W")
                    b = tg.constant(np.zeros(WIDTH), name="b")
                    h = tg.tanh(h @ W + b)
                    weights += [W, b]
            with tg.name_scope("loss"):
                loss = tg.mean(h * h)
            tg.gradients(loss, weights)
        count = len(graph.get_operations())
        if count >= target_nodes:
            return graph, count
        layers = max(layers + 1, int(layers * target_nodes / count))


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, times


def main(argv=None):
    quick = "--quick" in (argv if argv is not None else sys.argv[1:])
    target = 60 if quick else TARGET_NODES
    repeats = 1 if quick else 5
    graph, count = build(target)
    drawing, draw_times = timed(lambda: tg.viz.draw(graph, max_nodes=None), repeats)
    clusters = drawing.source.count("subgraph cluster_")
    print(f"graph: {count} nodes, {clusters} clusters, DOT text {len(drawing.source):,} chars")
    print(f"draw() (DOT text):    median {statistics.median(draw_times) * 1e3:8.1f} ms, "
          f"min {min(draw_times) * 1e3:8.1f} ms")
    # The same program always gives the same drawing.
    if tg.viz.draw(graph, max_nodes=None).source != drawing.source:
        raise SystemExit("two drawings of one graph differ: the DOT text is not deterministic")
    if shutil.which("dot") is None:
        print("dot (Graphviz) is not installed: SVG layout not timed")
        return
    svg, svg_times = timed(lambda: drawing.pipe(format="svg"), max(1, repeats // 2))
    missing = [name for name in drawing.node_names.values()
               if f"<title>{name}</title>".encode() not in svg]
    if b"<svg" not in svg or missing:
        raise SystemExit(f"dot's SVG lacks drawn ops: {missing[:5]}")
    total = statistics.median(draw_times) + statistics.median(svg_times)
    print(f"pipe(format='svg'):   median {statistics.median(svg_times) * 1e3:8.1f} ms, "
          f"min {min(svg_times) * 1e3:8.1f} ms  (dot's layout)")
    print(f"draw + SVG: {total:.2f} s; target <= 2 s for {TARGET_NODES} nodes: "
          f"{'met' if total <= 2.0 or quick else 'NOT met'}")


if __name__ == "__main__":
    main()
