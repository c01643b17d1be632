"""The drawings ``JVPStepper`` shows: the forward computation once, each tensor with its
value and tangent, and each transposed op's transpose tape; then, per frame, the forward
drawing's colours and known tangents, and the style that keeps a node in the box's view.

Each function takes ``notes``, the stepper's list of notes, and appends to it why a
drawing is not shown.
"""
from . import collect, follow, render
from .dot import Options
from .draw import draw, draw_scene
from .frame_types import DONE, NOT_REACHED, PROCESSING
from .labels import LabelOptions
from .values import format_value
from .widget import VIEW

#: Transposed ops whose transpose tape is drawn, at most (each is one run of dot).
MAX_DRAWINGS = 40


def add_note(notes, note):
    """Append ``note`` to ``notes`` unless it is empty or already there."""
    if note and note not in notes:
        notes.append(note)


def transpose_drawings(frames, window, notes):
    """{op index: (drawing, svg with "@SCOPE@")} for the transpose tapes in ``window``."""
    drawings = {}
    first, stop = window
    ops = sorted({f.op_index for f in frames.frames[first:stop]
                  if f.op_index in frames.transposes})
    if len(ops) > MAX_DRAWINGS:
        notes.append(f"Only the first {MAX_DRAWINGS} of the {len(ops)} transpose "
                     f"tapes are drawn.")
    for k in ops[:MAX_DRAWINGS]:
        try:
            transpose = frames.transposes[k]
            # gradients=False: its frames tell the running sums, not the totals
            drawing = draw(transpose.trace, names=transpose.namer, gradients=False)
        except ValueError as error:
            notes.append(f"The transpose tape of op {k} is not drawn: {error}")
            continue
        svg, note = render.drawing_svg(drawing, "@SCOPE@")
        add_note(notes, note)
        if svg is None:
            break
        drawings[k] = (drawing, svg)
    return drawings


def _tangents(frames):
    """({tensor id: its tangent's text}, the tensors given a tangent that no op made)."""
    tangents, sources = {}, []
    made = {t.id for e in frames.events for t in e.node.outputs}
    for e in frames.events:
        for t, d in zip(e.node.inputs, e.input_tangents):
            if d is not None and t.id not in tangents:
                tangents[t.id] = format_value(d)
                if t.id not in made:
                    sources.append(t)
        for t, d in zip(e.node.outputs, e.output_tangents):
            if d is not None:
                tangents[t.id] = format_value(d)
    return tangents, sources


def forward_drawing(frames, notes):
    """The forward ops drawn once, each tensor with its value and tangent:
    (drawing, svg with "@SCOPE@", tangent lines, source ids), or () if not drawn."""
    tangents, sources = _tangents(frames)
    scene = collect.Scene(list(frames.nodes), sources=tuple(sources),
                          targets=tuple(frames.events[-1].node.outputs))
    options = Options(label_options=LabelOptions(gradient_word="tangent"),
                      gradients=tangents, fit=False)
    try:
        drawing = draw_scene(scene, options, frames.namer)
    except ValueError as error:
        notes.append(f"The forward computation is not drawn: {error}")
        return ()
    svg, note = render.drawing_svg(drawing, "@SCOPE@")
    add_note(notes, note)
    if svg is None:
        return ()
    lines = drawing.tensor_lines()
    svg = render.with_versions(svg, {lines[k]: [text] for k, text in tangents.items()
                                     if k in lines}, "tangent")
    return (drawing, svg, lines, {s.id for s in sources})


def forward_style(frames, drawn, index, root):
    """The forward drawing ``drawn`` in frame ``index``: the ops done, the op being
    differentiated, and the tangents known so far (under the CSS selector ``root``)."""
    if not drawn:
        return ""
    drawing, _, lines, sources = drawn
    frame = frames[index]
    k = frame.op_index if frame.op_index >= 0 else _ops_before(frames, index)
    states, known = {}, set(sources)
    for i, event in enumerate(frames.events):
        node = event.node
        if i < k or (i == k and frame.phase in ("native", "tangent")):
            states[node] = DONE
            known.update(t.id for t in node.outputs)
        elif i == k and frame.op_index >= 0:
            states[node] = PROCESSING
        else:
            states.setdefault(node, NOT_REACHED)
    tensor_states = {key: DONE for key in sources}
    shown = [(render.version_key(*lines[key]), 0) for key in known if key in lines]
    return (render.state_style(root, render.drawn_states(
                states, tensor_states, drawing.node_names, drawing.tensor_names))
            + render.version_style(root, shown))


def _ops_before(frames, index):
    """For a loop frame: how many ops came before it."""
    return 1 + max([f.op_index for f in frames.frames[:index]] or [-1])


def follow_node(centres, drawn, node, root):
    """The style keeping ``node`` of a drawing (``(drawing, svg, ...)``) in the box's
    view, as the BackpropStepper does (``follow.follow_style``); ``centres`` caches
    ``follow.centres(svg)`` by ``id(svg)``."""
    if not drawn or node is None:
        return ""
    found = centres.get(id(drawn[1]))
    if found is None:
        found = centres[id(drawn[1])] = follow.centres(drawn[1])
    # the box's height less the lines above the drawing (the zoom link, its title)
    return follow.follow_style(root, found.get(drawn[0].node_names.get(node)),
                               f"calc({VIEW} - 4em)")
