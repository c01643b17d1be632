"""The drawing of a recorded backward pass, as ``BackpropStepper`` shows it: drawn and
rendered once (dot runs once) with every version of each tensor's running sum, then each
frame's colours, running sums, travelling contributions and followed node as CSS.
"""
from . import follow, render
from .frame_types import gradient_texts
from .widget import VIEW


class PassDrawing:
    """The drawing of ``frames`` (``frames.backprop_frames(trace)``), made when first asked.

    ``note`` says why the graph is not drawn ("" while it is, or not yet tried)."""

    def __init__(self, trace, frames):
        self.trace, self.frames = trace, frames
        self._drawing = self._svg = None
        self.note = ""

    def drawing(self):
        """The ``tg.viz.draw`` drawing of the pass's nodes (None if it cannot be drawn)."""
        if self._drawing is None and not self.note:
            from .draw import draw
            tensors = self._tensors()
            longest = {tensors[key]: max(texts, key=len)
                       for key, texts in self._versions().items() if key in tensors}
            try:
                self._drawing = draw(self.trace, names=self.frames.namer, gradients=longest,
                                     fit=False)   # the widget fits it, full size a click away
            except ValueError as error:   # no Start event, or too many nodes to draw
                self.note = f"The graph is not drawn: {error}"
        return self._drawing

    def graph_html(self, scope):
        """The drawing as SVG, its element ids prefixed with ``scope`` ("" if not drawn)."""
        return "" if not self._rendered() else self._svg.replace("@SCOPE@", scope)

    def _rendered(self):
        """Render the drawing once (dot runs once); False if there is none."""
        drawing = self.drawing()
        if drawing is not None and self._svg is None and not self.note:
            svg, note = render.drawing_svg(drawing, "@SCOPE@")   # dot runs once
            self.note = note or ""
            if svg is not None:
                lines = drawing.tensor_lines()
                svg = render.with_versions(svg, {lines[key]: texts for key, texts
                                                 in self._versions().items() if key in lines})
            self._svg = svg
        return self._svg is not None

    def frame_style(self, index, root):
        """The drawing's colours, running sums and travelling edges in frame ``index``."""
        frame = self.frames[index]
        return render.state_style(root, self._drawn(frame)) + self._sums_style(frame, root)

    # -- running sums and travelling contributions -----------------------------------
    def _tensors(self):
        """{tensor id: tensor} for every tensor of the pass."""
        found = {t.id: t for t in self.frames.targets + self.frames.sources}
        for node in self.frames.nodes:
            found.update((t.id, t) for t in node.inputs + node.outputs)
        return found

    def _versions(self):
        """{tensor id: the texts of its gradient, in the order the frames show them}."""
        if getattr(self, "_texts", None) is None:
            self._texts = {}
            for frame in self.frames.frames:
                for key, text in gradient_texts(frame).items():
                    texts = self._texts.setdefault(key, [])
                    if text not in texts:
                        texts.append(text)
        return self._texts

    def _dot_name(self, tensor):
        drawing = self.drawing()
        name = drawing.tensor_names.get(tensor.id)
        if name is None:
            producer = next((n for n in self.frames.nodes
                             if any(t is tensor for t in n.outputs)), None)
            name = drawing.node_names.get(producer)
        return name

    def _sums_style(self, frame, root):
        """The frame's running sums shown in the drawing, and, in a CallVJP frame, the
        edges its contributions travel along highlighted."""
        if not self._rendered():
            return ""
        lines, versions = self.drawing().tensor_lines(), self._versions()
        shown = [(render.version_key(*lines[key]), versions[key].index(text))
                 for key, text in gradient_texts(frame).items() if key in lines]
        edges = []
        if frame.kind == "CallVJP":
            head = self.drawing().node_names.get(frame.node)
            for x, g in zip(frame.node.inputs, frame.event.input_grads):
                tail = self._dot_name(x) if g is not None else None
                if tail is not None and head is not None:
                    edges.append((tail, head))
        return render.version_style(root, shown, edges)

    def _drawn(self, frame):
        drawing = self.drawing()
        if drawing is None:
            return {}
        return render.drawn_states(frame.states, frame.tensor_states, drawing.node_names,
                                   drawing.tensor_names)

    def follow(self, frame, scope):
        """The style that keeps the node being processed (else the last one popped, or
        the targets' at the start) in the drawing's box (``follow.follow_style``)."""
        if not self._rendered():
            return ""
        if getattr(self, "_centres", None) is None:
            self._centres = follow.centres(self._svg)
        node = frame.processing or next(
            (f.processing for f in reversed(self.frames.frames[:frame.index])
             if f.processing is not None), None) or next(iter(frame.queue), None)
        name = self.drawing().node_names.get(node) if node is not None else None
        return follow.follow_style(f"#{scope}", self._centres.get(name), VIEW)
