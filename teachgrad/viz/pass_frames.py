"""Frames: what the PassStepper shows at each step of what ``tg.function`` did.

``pass_frames(fn, *args)`` traces ``fn`` afresh (a new ``tg.function`` of the same
Python function, so the trace is made here and whatever Python prints while tracing
is caught), optimises the trace with the optimiser recording
(``ConcreteFunction.optimized_recording``: each pass reports what it changed, see
``teachgrad/graph/optimize/record.py``) and folds that into frames:

* ``traced``: the graph as Python ran it, with what Python printed meanwhile;
* one frame per pass run, in order (pruning runs again after folding and merging):
  the graph the pass was given, what it changed marked, its sentence, the counts
  before and after;
* ``program``: the graph that runs, the source of each fused kernel, and the
  measured times of the eager call, the traced call and the traced call with
  ``optimize=False``.

Nothing is worked out again: a frame holds what the optimiser recorded. This
module is pure Python (no widgets), so tests check frames directly.
"""
import contextlib
import io
import sys
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Optional

import numpy as np

from ..graph.function import Function, function
from ..graph.graph import const_p, placeholder_p
from ..graph.optimize.record import buffer_count
from ..tensor import constant

#: Calls timed for each of the three times (the best is kept).
REPEAT = 20


@dataclass(frozen=True)
class PassFrame:
    """One step: ``kind`` is ``"traced"``, a pass name or ``"program"``; ``graph`` the
    index (in ``PassFrames.graphs``) of the graph drawn; ``marked`` maps the labels of
    the nodes drawn marked to their change's kind; the counts are before and after the
    step (equal on the first and last)."""
    index: int
    kind: str
    sentence: str
    graph: int
    marked: Mapping
    nodes: tuple
    ops: tuple
    buffers: tuple
    changes: tuple = ()


@dataclass(frozen=True)
class PassFrames:
    """All the frames of one function's trace and optimisation.

    ``graphs`` are GraphFunctions: the trace, then each pass's result (a pass that
    changed nothing adds none); ``records`` the optimiser's PassRecords; ``printed``
    what Python printed while tracing; ``programs`` ``(node label, formula, source)``
    per fused kernel; ``times`` ``{"eager": s, "traced": s, "unoptimized": s}`` (best
    of ``REPEAT`` calls, in seconds), or None when not measured."""
    name: str
    concrete: Any
    graphs: tuple
    records: tuple
    frames: tuple
    printed: str
    programs: tuple
    times: Optional[Mapping]

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, index):
        return self.frames[index]


def pass_frames(fn, args, timing=True, repeat=REPEAT):
    """The PassFrames of ``fn`` (a Python function or a ``tg.function``) on ``args``."""
    python_function = fn.python_function if isinstance(fn, Function) else fn
    if not callable(python_function):
        raise TypeError(f"PassStepper: `fn`, the function to trace, must be a Python "
                        f"function or a tg.function, but got {type(fn).__name__} {fn!r:.60}.")
    optimize = fn.optimize if isinstance(fn, Function) and fn.optimize is not False else True
    traced = function(python_function, optimize=optimize)
    printed = io.StringIO()
    try:
        # numpy arrays become tensors, as tg.function makes them: the eager call gets them too
        args = tuple(constant(a) if isinstance(a, np.ndarray) else a for a in args)
        with contextlib.redirect_stdout(printed):
            concrete = traced.get_concrete_function(*args)
    except (TypeError, ValueError) as error:
        raise type(error)(f"PassStepper: tracing `fn` ({python_function.__name__}) on the "
                          f"`example_args` given failed: {error}") from error
    sys.stdout.write(printed.getvalue())     # the student sees the print too, once
    report = concrete.optimized_recording().report
    records = tuple(report.passes)
    graphs, frames = [records[0].before], []
    frames.append(_frame(0, "traced", _traced_sentence(python_function, records[0].before,
                                                       printed.getvalue()),
                         0, {}, records[0].before, records[0].before))
    for record in records:
        g = len(graphs) - 1
        marked = {c.node: c.kind for c in record.changes}
        frames.append(_frame(len(frames), record.name, record.sentence, g, marked,
                             record.before, record.after, record.changes))
        if record.changes:
            graphs.append(record.after)
    final = records[-1].after
    programs = tuple((node.label, node.params["program"].describe(),
                      node.params["program"].source)
                     for node in final.nodes if "program" in node.params)
    times = _times(python_function, traced, args, concrete, repeat) if timing else None
    fused = {label: "fused" for label, _, _ in programs}
    frames.append(_frame(len(frames), "program",
                         _program_sentence(final, programs, times), len(graphs) - 1, fused,
                         final, final))
    return PassFrames(python_function.__name__, concrete, tuple(graphs), records,
                      tuple(frames), printed.getvalue(), programs,
                      None if times is None else MappingProxyType(times))


def op_count(fn):
    """The nodes of a GraphFunction that run a kernel (not placeholders or constants)."""
    return sum(node.op is not placeholder_p and node.op is not const_p for node in fn.nodes)


def _frame(index, kind, sentence, graph, marked, before, after, changes=()):
    return PassFrame(index, kind, sentence, graph, MappingProxyType(dict(marked)),
                     (len(before.nodes), len(after.nodes)), (op_count(before), op_count(after)),
                     (buffer_count(before), buffer_count(after)), tuple(changes))


def _traced_sentence(python_function, fn, printed):
    ops = op_count(fn)
    text = (f"Python ran {python_function.__name__} once, on placeholders (symbolic values: "
            f"a shape and a dtype, no numbers), and every teachgrad op it called became a "
            f"node: {ops} ops. A Python if or for ran then, and left only the ops it chose or "
            f"repeated, never itself.")
    if printed.strip():
        first = printed.strip().splitlines()[0]
        text += (f" Python's print ran during the trace, once (it printed {first!r}), and "
                 f"is not in the graph: later calls print nothing.")
    return text


def _program_sentence(fn, programs, times):
    text = (f"What runs on each call: {len(fn.nodes)} nodes, {op_count(fn)} of them ops, "
            f"{len(programs)} of those generated kernels (a fused chain, or an op writing in "
            f"place), whose source is below.")
    if times:
        text += (f" Measured: eager {_ms(times['eager'])}, traced with optimize=False "
                 f"{_ms(times['unoptimized'])}, traced and optimised {_ms(times['traced'])}.")
    return text


def _ms(seconds):
    return f"{seconds * 1e3:.3g} ms"


def _times(python_function, traced, args, concrete, repeat):
    """Best-of-``repeat`` seconds of the eager call, the optimised traced call and the
    traced call with optimize=False; the Variables the function assigns are put back."""
    variables = list(concrete.assigned_variables)
    saved = [v.numpy().copy() for v in variables]
    plain = function(python_function, optimize=False)
    calls = {"eager": lambda: python_function(*args), "traced": lambda: traced(*args),
             "unoptimized": lambda: plain(*args)}
    times = {}
    try:
        with contextlib.redirect_stdout(io.StringIO()):   # a print in the function: quiet
            for name, call in calls.items():
                call()                                      # warm up (and trace)
                best = float("inf")
                for _ in range(repeat):
                    start = time.perf_counter()
                    call()
                    best = min(best, time.perf_counter() - start)
                times[name] = best
    finally:
        for v, value in zip(variables, saved):
            v.assign(value)
    return times
