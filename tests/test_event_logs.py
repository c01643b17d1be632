"""Golden event logs: what the engine reports, step by step, for the lessons' programs.

The steppers replay these events, so a refactor of the engine, the tape or the ops must
leave them as they are: the same events, in the same order, naming the same nodes, with
the same pending counts and the same numbers. Each program below is one a lesson steps
through (lesson 2's y = x sin(x^2), a tensor used twice, a loop and a branch as lesson 7's,
forward mode as lesson 5's). The logs are stored in tests/golden/event_logs.json; to write
them again after a change that *should* alter them, run this file with
TEACHGRAD_WRITE_GOLDEN=1 and read the diff.
"""
import dataclasses
import json
import os
import pathlib

import numpy as np
import pytest

import teachgrad as tg

GOLDEN = pathlib.Path(__file__).parent / "golden" / "event_logs.json"


def _lesson2():
    x = tg.constant(0.5, name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * tg.sin(x * x)
    return tape, y, x


def _used_twice():
    x = tg.constant([1.0, 2.0], name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        a = tg.exp(x)
        y = tg.sum(a * a + a)
    return tape, y, x


def _loop():
    x = tg.constant(1.5, name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        _, y = tg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tg.sin(v) * v), (0, x))
    return tape, y, x


def _branch():
    x = tg.constant(0.7, name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.cond(x > 0.5, lambda: x * x, lambda: -x)
    return tape, y, x


BACKWARD = {"lesson2": _lesson2, "used_twice": _used_twice, "loop": _loop, "branch": _branch}


def _describe(value, nodes):
    """An event field as plain data: arrays by their numbers, tensors by name, nodes by
    their op and the order they first appear in (a node no tape numbered is named after a
    process-wide counter, which other tests move)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return round(value, 10)
    if hasattr(value, "op") and hasattr(value, "inputs"):   # a Node
        return f"node {value.op.name} #{nodes.setdefault(value, len(nodes))}"
    if isinstance(value, tg.Tensor):
        return {"tensor": value.name,
                "value": _describe(np.round(value.numpy(), 10).tolist(), nodes)}
    if isinstance(value, np.ndarray):
        return _describe(np.round(value, 10).tolist(), nodes)
    if isinstance(value, dict):
        return {str(_describe(k, nodes)): _describe(v, nodes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_describe(v, nodes) for v in value]
    if dataclasses.is_dataclass(value):
        return {f.name: _describe(getattr(value, f.name), nodes)
                for f in dataclasses.fields(value)}
    return type(value).__name__


def _log(trace):
    nodes = {}
    return [[type(event).__name__, _describe(event, nodes)] for event in trace.events]


def _backward_log(program):
    with tg.viz.record() as rec:
        tape, y, x = program()
        tape.gradient(y, x)
    return [_log(trace) for trace in rec.traces]


def _forward_log():
    x = tg.constant([1.0, 2.0, 3.0], name="x")
    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, tg.constant([1.0, 0.5, -1.0])) as acc:
            y = tg.sin(x) * x ** 3
        acc.jvp(y)
    return [_log(trace) for trace in rec.traces]


def _all_logs():
    logs = {name: _backward_log(program) for name, program in BACKWARD.items()}
    logs["forward_mode"] = _forward_log()
    return logs


def test_the_engine_reports_what_the_lessons_step_through_unchanged():
    logs = json.loads(json.dumps(_all_logs()))   # as stored: lists, not tuples
    if os.environ.get("TEACHGRAD_WRITE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(logs, indent=1) + "\n")
        pytest.skip("golden event logs written")
    golden = json.loads(GOLDEN.read_text())
    for name in golden:
        assert logs[name] == golden[name], f"the event log of {name} changed"
