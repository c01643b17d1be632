"""tg.viz.PassStepper: its frames, its HTML (widget and stand-alone view), its errors."""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad.viz import html_view


def _step(x, w):
    print("tracing _step")
    h = x @ w
    for _ in range(2):                       # unrolled by the trace
        h = tg.tanh(h) * 2.0
    return tg.sum(h * h) + tg.sum(h * h) + tg.constant(2.0) * tg.constant(3.0)


@pytest.fixture(scope="module")
def stepper():
    x, w = np.ones((4, 3)), np.full((3, 2), 0.1)
    return tg.viz.PassStepper(_step, x, w, repeat=2)


def test_the_steps_are_the_trace_each_pass_and_the_program(stepper):
    kinds = [f.kind for f in stepper.frames.frames]
    assert kinds[0] == "traced" and kinds[-1] == "program"
    assert kinds[1:-1] == [r.name for r in stepper.frames.records]
    assert stepper.frames.printed == "tracing _step\n"
    assert "it printed 'tracing _step'" in stepper.frames[0].sentence
    by_kind = {f.kind: f for f in stepper.frames.frames}
    assert by_kind["fold"].marked and set(by_kind["fold"].marked.values()) == {"folded"}
    assert set(by_kind["cse"].marked.values()) == {"merged"}
    assert set(by_kind["fuse"].marked.values()) == {"fused"}
    assert set(stepper.frames.times) == {"eager", "traced", "unoptimized"}
    assert stepper.frames.programs and "def program" in stepper.frames.programs[0][2]


def test_the_traced_function_gives_the_eager_numbers(stepper):
    x, w = np.ones((4, 3)), np.full((3, 2), 0.1)
    traced = stepper.frames.concrete
    assert traced.optimized.report.passes == list(stepper.frames.records)
    assert np.allclose(tg.function(_step)(x, w).numpy(), _step(x, w).numpy())


def test_each_frame_marks_its_nodes_in_the_html(stepper):
    for i, frame in enumerate(stepper.frames.frames):
        html = stepper.frame_html(i, "tg-test")
        names = stepper.marked_names(i)
        assert f'data-kind="{frame.kind}"' in html
        for name in names:
            assert f"#tg-test .tg-node-{name}>" in html
    view = html_view.frames_of(stepper.html_view())
    assert len(view["frames"]) == len(stepper.frames)
    assert "tg-pass-graph-0" in view["graph"]
    assert stepper.text() == stepper.text() and "Measured" not in stepper.text()
    assert stepper.widget is not None


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(TypeError, match="`fn`, the function to trace"):
        tg.viz.PassStepper(3.0)
    with pytest.raises(ValueError, match="repeat"):
        tg.viz.PassStepper(_step, np.ones((1, 3)), np.ones((3, 1)), repeat=0)


def test_it_draws_and_marks_without_dot(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")      # dot cannot start: laid out in Python
    stepper = tg.viz.PassStepper(_step, np.ones((2, 3)), np.ones((3, 2)), timing=False)
    graph = stepper.graph_html("tg-test")
    assert graph.count("<svg") == len(stepper.frames.graphs)
    assert "laid this graph out itself" in stepper.header_html()
    fold = next(f for f in stepper.frames.frames if f.kind == "fold")
    names = stepper.marked_names(fold.index)
    assert names and all(f"tg-node tg-node-{n}" in graph for n in names)
