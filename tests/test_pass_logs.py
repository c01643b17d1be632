"""Golden logs of what the optimiser's passes did to lesson 14's programs.

``tg.viz.PassStepper`` steps through the passes' own records (``PassRecord``, made by
each pass as it runs: ``teachgrad/graph/optimize/record.py``). Its events for the lesson's
programs (the MLP step, the lesson-11 CNN step) are kept in tests/golden/pass_logs.json,
so a change to a pass, to tracing or to the ops' gradients that changes what the lesson
shows is seen. The second test checks the records against the optimiser's real results
on a plain ``tg.function``, made without the stepper: the node counts after each pass,
and that the nodes a record says were removed are exactly those missing afterwards. To
write the logs again after a change that *should* alter them, run this file with
TEACHGRAD_WRITE_GOLDEN=1 and read the diff.
"""
import json
import os
import pathlib

import pytest
from lesson14_programs import PROGRAMS

import teachgrad as tg

GOLDEN = pathlib.Path(__file__).parent / "golden" / "pass_logs.json"


def _log(stepper):
    """The stepper's events as plain data: per pass, its counts and its changes."""
    return [{"pass": r.name, "nodes": [r.nodes_before, r.nodes_after],
             "buffers": [r.buffers_before, r.buffers_after],
             "changes": [[c.kind, c.node, c.into, c.detail] for c in r.changes]}
            for r in stepper.frames.records]


@pytest.fixture(scope="module")
def steppers():
    made = {}
    for name, program in PROGRAMS.items():
        fn, args = program()
        made[name] = tg.viz.PassStepper(fn, *args, timing=False)
    return made


def test_the_passes_do_to_the_lessons_programs_what_they_did(steppers):
    logs = {name: _log(s) for name, s in steppers.items()}
    if os.environ.get("TEACHGRAD_WRITE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(logs, indent=1) + "\n")
        pytest.skip("golden pass logs written")
    golden = json.loads(GOLDEN.read_text())
    assert set(golden) == set(logs)
    for name in golden:
        assert logs[name] == golden[name], f"what the passes did to {name} changed"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_logs_are_what_the_optimiser_really_did(name, steppers):
    stepper = steppers[name]
    fn, args = PROGRAMS[name]()
    traced = tg.function(fn)
    report = traced.get_concrete_function(*args).optimized.report   # no stepper, no recording
    records = stepper.frames.records
    assert [(r.name, r.nodes_after) for r in records] == report.steps
    assert records[0].nodes_before == report.traced
    for record in records:
        before = {n.label for n in record.before.nodes}
        after = {n.label for n in record.after.nodes}
        if record.name == "prune":
            assert {c.node for c in record.changes} == before - after
        assert record.nodes_before - record.nodes_after == len(before) - len(after)
        assert record.nodes_after == len(record.after.nodes)
    # each frame's counts are its record's, and the marked nodes are drawn
    for frame, record in zip(stepper.frames.frames[1:], records):
        assert frame.nodes == (record.nodes_before, record.nodes_after)
        assert set(frame.marked) == {c.node for c in record.changes}
        if frame.marked:
            assert stepper.marked_names(frame.index), frame.kind


def test_the_stepper_runs_what_the_function_runs(steppers):
    """The stepper's optimised copy is the one its traced function calls."""
    stepper = steppers["mlp_step"]
    concrete = stepper.frames.concrete
    assert concrete.optimized.report.passes == list(stepper.frames.records)
    assert len(concrete.optimized.graph.nodes) == stepper.frames[-1].nodes[1]
