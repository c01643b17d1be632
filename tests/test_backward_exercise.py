"""Lesson 3's rough edges (issue 31): what a student sees when a backward pass they wrote
goes wrong, and their run beside teachgrad's."""
import collections

import teachgrad as tg
from teachgrad import exercises as ex


def _z(x, y):                       # lesson 2's z: a = x y is used three times
    a = x * y
    return tg.sin(a) * tg.exp(a) + a


def _counts(target, producer, seen_set=True):
    """count_pending as lesson 3 asks for it (``seen_set=False``: a common slip)."""
    pending, seen, stack = collections.Counter(), set(), [producer(target)]
    while stack:
        node = stack.pop()
        if node is None or (seen_set and node in seen):
            continue
        seen.add(node)
        pending[node] += 0
        for x in node.inputs:
            if producer(x) is not None:
                pending[producer(x)] += 1
                stack.append(producer(x))
    return dict(pending)


def _engine(counting=_counts, wait=True, pending_dict=True):
    """A queue engine; ``wait=False`` queues a producer at every use (not waiting for its
    pending count), ``pending_dict=False`` keeps no tg.exercises.Pending at all."""
    def backward(target, sources, producer):
        pending = ex.Pending(counting(target, producer)) if pending_dict else {}
        cts = {target.id: [tg.ones_like(target)]}
        queue = ex.Queue([producer(target)])
        while queue:
            node = queue.popleft()
            outs = [sum(cts.pop(t.id)) if t.id in cts else None for t in node.outputs]
            for x, g in zip(node.inputs, ex.call_rule(node, outs)):
                if g is not None:
                    cts.setdefault(x.id, []).append(g)
                parent = producer(x)
                if parent is not None:
                    if pending_dict:
                        pending[parent] -= 1
                    if not wait or pending[parent] == 0:
                        queue.append(parent)
        return [sum(cts[s.id]) if s.id in cts else None for s in sources]
    return backward


def _beside(engine):
    run = ex.record(_z, 0.5, 2.0)
    with tg.viz.record() as rec:
        run.tape.gradient(run.target, run.sources)
    return ex.Beside(rec.traces[0], ex.replay(engine, run), run)


def test_an_engine_that_does_not_wait_is_replayed_without_a_crash():
    for engine in (_engine(wait=False), _engine(wait=False, pending_dict=False)):
        beside = _beside(engine)
        assert beside.first is not None
        widget = beside.widget          # builds every frame of both runs
        assert "tg-beside" in widget._dom_classes
        text = beside._repr_mimebundle_()["text/plain"]
        assert "n0" in text and "t1" not in text


def test_beside_displays_its_widget_then_both_steppers_html_views():
    from unittest import mock

    import IPython.display

    from teachgrad.viz import html_view
    beside = _beside(_engine())
    sent = []
    with mock.patch.object(IPython.display, "display",
                           lambda data, raw=False: sent.append(data)):
        beside._ipython_display_()
    widget_output, views = sent
    assert "application/vnd.jupyter.widget-view+json" in widget_output
    assert list(views) == ["text/html"]
    html = views["text/html"]
    for stepper, title in ((beside.reference, "teachgrad's run"), (beside.yours, "Your run")):
        assert f'data-scope="{stepper._scope}"' in html
        assert html_view.hide_style(stepper._scope) in stepper.widget.children[0].value
    headers = [html_view.unpack(part.split("</script>")[0])["header"]
               for part in html.split('class="tg-view-data">')[1:]]
    assert "teachgrad's run" in headers[0] and "Your run" in headers[1]


def test_an_engine_with_no_pending_counts_has_every_node_in_its_stepper():
    beside = _beside(_engine(wait=False, pending_dict=False))
    frames = beside.yours.frames
    assert len(frames.nodes) == 5
    html = beside.yours.frame_html(0, "scope")
    assert "not counted" in html


def test_beside_names_nodes_as_the_messages_do_and_says_whose_run_is_whose():
    beside = _beside(_engine())
    assert beside.first is None
    for stepper in (beside.reference, beside.yours):
        assert stepper.frames.labels[stepper.frames.nodes[0]] == "n0"
        assert "t1" not in stepper.text()
    html = beside._repr_mimebundle_()["text/html"]
    assert "teachgrad's run" in html and "Your run" in html
    titles = [child.children[0].value for child in beside.widget.children[1].children]
    assert "teachgrad's run" in titles[0] and "Your run" in titles[1]
    panels = beside.widget.children[1].children
    assert all(p.layout.flex == "1 1 0px" and p.layout.min_width for p in panels)


def test_a_rule_run_three_times_is_said_to_run_three_times():
    run = ex.record(_z, 0.5, 2.0)

    def recursive(target, sources, producer):
        grads = {}

        def visit(t, ct):
            if any(t is s for s in sources):
                grads[t.id] = grads.get(t.id, 0.0) + ct
            node = producer(t)
            if node is not None:
                for x, g in zip(node.inputs, ex.call_rule(node, [ct])):
                    if g is not None:
                        visit(x, g)
        visit(target, tg.ones_like(target))
        return [grads.get(s.id) for s in sources]
    feedback = ex.check_backward(recursive)
    assert "ran the rule of multiply (n0) three times" in feedback.message
    assert run.label(run.nodes()[0]) == "multiply (n0)"


def test_pending_counts_that_visit_a_node_twice_are_pointed_at():
    feedback = ex.check_backward(_engine(lambda t, p: _counts(t, p, seen_set=False)))
    assert not feedback
    assert "your pending counts are wrong before the pass begins" in feedback.message
    assert "Keep a set of the nodes seen" in feedback.message
    assert ex.check_backward(_engine()).ok
