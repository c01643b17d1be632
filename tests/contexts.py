"""Run one program eagerly, in ``tg.function`` and in a ``tg.Graph``: the three contexts
most behaviour is tested in."""
import numpy as np

import teachgrad as tg

CONTEXTS = ["eager", "function", "graph"]


def run_in(build, context, *feeds):
    """``build(*inputs)`` as a numpy array: on constants eagerly or through ``tg.function``,
    or on placeholders of a Graph fed with ``feeds`` (numpy arrays)."""
    feeds = [np.asarray(f) for f in feeds]
    if context == "graph":
        graph = tg.Graph()
        with graph.as_default():
            holders = [tg.placeholder(f.dtype, f.shape) for f in feeds]
            out = build(*holders)
        return tg.Session(graph).run(out, feed_dict=dict(zip(holders, feeds)))
    call = tg.function(build) if context == "function" else build
    return call(*[tg.constant(f) for f in feeds]).numpy()
