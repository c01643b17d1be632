"""``tg.viz.PassStepper``: step through what ``tg.function`` did to one function.

    def step(x, w, b):
        return tg.reduce_sum(tg.tanh(x @ w + b) ** 2)
    tg.viz.PassStepper(step, x, w, b)

Step 0 is the graph as traced: Python ran once, on placeholders, and each op it
called is a node (its ``if`` and ``for`` already unrolled, its ``print`` shown as
having run once). Then each optimiser pass, in the order it ran: the graph the pass
was given with what it removed, folded, merged, fused or reused marked, one
sentence, and the nodes, ops and buffers before and after. The last step is the
graph that runs, each fused kernel's generated source, and the measured times of
the eager call, the traced call and the traced call with ``optimize=False``.

The steps come from what the passes recorded as they ran (``pass_frames.py``,
``teachgrad/graph/optimize/record.py``), never worked out again.

What a browser test can rely on: ``.tg-frame`` (the frame on show) with
``data-step``, ``data-kind`` (``traced``, a pass name, ``program``) and
``data-marked`` (the DOT names of the marked nodes, space-separated); in the
drawing, ``.tg-pass-graph-<k>`` holds graph ``k`` (only the frame's own shows) and
``g.tg-node-<name>`` each node, a marked one filled with its kind's colour
(``MARKS``).
"""
from .. import validate
from ..debug.report import escape
from . import render
from .draw import draw
from .jvp_drawings import add_note, follow_node
from .pass_frames import REPEAT, pass_frames
from .widget import INTERVAL, MAX_FRAMES, Stepper, steps_words, text_table

#: Each kind of change's fill and outline on the drawing (and its chip in the legend).
MARKS = {"removed": ("#ffd6d6", "#c62828"), "folded": ("#fff2b3", "#b38f00"),
         "merged": ("#e6dcf7", "#6a3fb5"), "fused": ("#cfe6ff", "#1f6fc5"),
         "reused": ("#d4f0d2", "#2e7d32")}
_WORDS = {"removed": "removed (pruned)", "folded": "folded into a constant",
          "merged": "merged into an equal node", "fused": "fused into one kernel",
          "reused": "writes over an input's buffer"}
_TITLES = {"traced": "As traced", "prune": "Pruning", "fold": "Constant folding",
           "cse": "Common subexpressions", "fuse": "Elementwise fusion",
           "reuse": "Buffer reuse", "program": "What runs"}
_SHAPES = '>:is(path,polygon,ellipse):not([fill="none"])'


class PassStepper(Stepper):
    """Step through ``fn``'s trace and each optimisation pass, on ``example_args``.

    Args:
      fn: a Python function, or a ``tg.function`` (its ``optimize=`` passes are used);
        it is traced afresh here, so the steps start from the trace.
      example_args: the arguments to trace (and time) it with.
      timing: measure the three calls (best of ``repeat``); False for none.
      max_frames, start, interval: as for ``BackpropStepper``.

    Attributes:
      frames: the ``PassFrames`` (``pass_frames.py``): every step, the graphs, the
        optimiser's records, the fused programs and the times.
    """

    def __init__(self, fn, *example_args, timing=True, repeat=REPEAT, max_frames=MAX_FRAMES,
                 start=0, interval=INTERVAL):
        validate.flags("tg.viz.PassStepper", timing=timing)
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise ValueError(f"PassStepper: repeat is how many calls to time, a whole number "
                             f">= 1; got {repeat!r}.")
        self.frames = pass_frames(fn, example_args, timing=bool(timing), repeat=repeat)
        super().__init__(len(self.frames), max_frames, start, interval)
        self._drawn = None
        self._notes = []
        self._centres = {}

    # -- drawings ---------------------------------------------------------------------
    def drawings(self):
        """``[(drawing, svg with "@SCOPE@") or None]``, one per graph in ``frames.graphs``."""
        if self._drawn is None:
            self._drawn = []
            for k, fn in enumerate(self.frames.graphs):
                try:
                    drawing = draw(fn.graph, fit=False)   # the widget fits it, never too small
                except ValueError as error:
                    add_note(self._notes, f"Graph {k} is not drawn: {error}")
                    self._drawn.append(None)
                    continue
                svg, note = render.drawing_svg(drawing, f"@SCOPE@-g{k}")
                add_note(self._notes, note)
                self._drawn.append(None if svg is None else (drawing, svg))
        return self._drawn

    def marked_names(self, index):
        """The DOT names of the nodes frame ``index`` marks, ``{name: kind}``."""
        frame = self.frames[index]
        drawn = self.drawings()[frame.graph]
        if drawn is None:
            return {}
        by_label = {node.label: node for node in self.frames.graphs[frame.graph].nodes}
        names = {}
        for label, kind in frame.marked.items():
            name = drawn[0].node_names.get(by_label.get(label))
            if name is not None:
                names.setdefault(name, kind)
        return names

    def graph_html(self, scope):
        parts = []
        for k, drawn in enumerate(self.drawings()):
            if drawn is not None:
                parts.append(f'<div class="tg-pass-graph tg-pass-graph-{k}">'
                             f'{drawn[1].replace("@SCOPE@", scope)}</div>')
        return "".join(parts)

    def frame_style(self, index, root):
        frame = self.frames[index]
        rules = [f"{root} .tg-pass-graph{{display:none}}",
                 f"{root} .tg-pass-graph-{frame.graph}{{display:block}}"]
        if root == "svg":      # the first picture: one drawing, no wrapper
            rules = []
        for name, kind in self.marked_names(index).items():
            fill, line = MARKS[kind]
            rules.append(f"{root} .tg-node-{name}{_SHAPES}{{fill:{fill};stroke:{line};"
                         f"stroke-width:3}}")
        return "<style>" + "".join(rules) + "</style>"

    def final_style(self, scope):
        return self.frame_style(len(self.frames) - 1, f"#{scope}")

    # -- HTML -------------------------------------------------------------------------
    def frame_html(self, index, scope):
        frame = self.frames[index]
        names = self.marked_names(index)
        drawn = self.drawings()[frame.graph]
        first = next(iter(names), None)
        follow = ""
        if drawn is not None and first is not None:
            node = next(n for n, v in drawn[0].node_names.items() if v == first)
            follow = follow_node(self._centres, drawn, node, f"#{scope} .tg-pass-graph-"
                                                             f"{frame.graph}")
        parts = [self.frame_style(index, f"#{scope}"), follow,
                 f'<div class="tg-step">Step {index} (0 to {len(self.frames) - 1}) · '
                 f"{_TITLES[frame.kind]}</div>",
                 f'<p class="tg-sentence">{escape(frame.sentence)}</p>', _counts(frame)]
        if frame.changes:
            rows = [(render.chip(_WORDS[c.kind], c.kind), escape(c.node), escape(c.into or ""),
                     escape(c.detail)) for c in frame.changes[:24]]
            parts.append(render.table("tg-changes", ["change", "node", "now", "how"], rows,
                                      max(0, len(frame.changes) - 24)))
        if frame.kind == "program":
            parts.append(self._program_html())
        return (f'<div class="tg-stepper tg-frame" data-step="{index}" '
                f'data-kind="{frame.kind}" data-marked="{" ".join(names)}">'
                + "".join(parts) + "</div>")

    def _program_html(self):
        parts = []
        times = self.frames.times
        if times:
            rows = [("eager (Python runs every op)", f"{times['eager'] * 1e3:.3g} ms"),
                    ("traced, optimize=False", f"{times['unoptimized'] * 1e3:.3g} ms"),
                    ("traced and optimised", f"{times['traced'] * 1e3:.3g} ms")]
            parts.append(render.table("tg-times", ["call", "best time"],
                                      [(escape(a), escape(b)) for a, b in rows]))
        for label, formula, source in self.frames.programs:
            parts.append(f"<div><b>{escape(label)}</b>: {escape(formula)}</div>"
                         f'<pre class="tg-array tg-source">{escape(source)}</pre>')
        return "".join(parts)

    def header_html(self):
        frames = self.frames
        title = (f"<b>tg.function on {escape(frames.name)}</b>: {frames[0].nodes[0]} nodes as "
                 f"traced, {frames[-1].nodes[1]} as it runs, after {len(frames.records)} "
                 f"passes; {steps_words(len(frames))}.")
        self.drawings()
        legend = "<div>" + "".join(
            f'<span class="tg-chip" style="background:{fill};border-color:{line}">'
            f"{escape(_WORDS[kind])}</span>" for kind, (fill, line) in MARKS.items()) + "</div>"
        notes = [n for n in [self.window_note()] + self._notes if n]
        note = "".join(f'<div class="tg-note">{escape(n)}</div>' for n in notes)
        return f'{render.STYLE}<div class="tg-stepper">{title}{legend}{note}</div>'

    def text(self):
        """The steps as a plain-text table (what shows where no widget runs); no times,
        so that it is the same on every run."""
        title = (f"PassStepper: {len(self.frames)} steps, the trace of "
                 f"{self.frames.name} and {len(self.frames.records)} passes")
        rows = [(f.index, f.kind, _plain(f)) for f in self.frames.frames]
        return text_table(title, rows)

    def __repr__(self):
        return (f"<PassStepper: {len(self.frames)} steps, {self.frames[0].nodes[0]} -> "
                f"{self.frames[-1].nodes[1]} nodes>")


def _counts(frame):
    rows = [(what, str(before), str(after)) for what, (before, after) in
            (("nodes", frame.nodes), ("ops", frame.ops), ("buffers per call", frame.buffers))]
    return render.table("tg-counts", ["", "before", "after"], rows)


def _plain(frame):
    """The frame's sentence without the measured times (they change from run to run)."""
    text = frame.sentence
    return text.split(" Measured:")[0] if frame.kind == "program" else text
