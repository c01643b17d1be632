"""``tg.viz.draw``: a picture of what autodiff recorded, as a ``graphviz.Digraph``.

    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.sin(x) * x
    tg.viz.draw(y, tape=tape)          # the ops y was computed through

In a notebook the result shows itself as SVG. It draws

* an eager tensor's history on the tape that recorded it (draw it before
  ``tape.gradient``: a non-persistent tape lets go of its records there);
* a ``tg.Graph`` (all of it, or what ``fetches`` need), a graph tensor, a
  ``tg.function`` (its latest trace) or a ``get_concrete_function(...)``;
* a recorded backward pass, ``rec.traces[i]`` from
  ``with tg.viz.record() as rec: ...``: the nodes its pending counts covered.

Ops are boxes and tensors no drawn op made are ellipses; targets have a double
outline and sources a thick one. ``collect.py`` gathers what to draw,
``layout.py`` places it in clusters and colours it, ``dot.py`` writes the DOT
text and ``wasm.py`` draws it where ``dot`` cannot run.
"""
import dataclasses

import graphviz

from .. import validate
from . import collect, wasm
from .dot import Options, Writer
from .labels import LabelOptions
from .names import Names, cotangent_labels, of_scene
from .values import format_value, plural

RANKDIRS = ("TB", "LR", "BT", "RL")


class Drawing(graphviz.Digraph):
    """A ``graphviz.Digraph`` that remembers which DOT node draws what.

    Attributes:
      node_names: ``{Node: DOT name}`` for every engine ``Node`` drawn, e.g.
        ``drawing.node_names[pop_event.node] == "n3"``. Op nodes are ``n0, n1, ...``
        in creation order; a node inside a folded name scope (``collapse``) maps
        to the scope's node ``s0, s1, ...``; a function body drawn twice maps to
        its first drawing. In the SVG from ``dot``, each node is a
        ``<g class="node">`` whose ``<title>`` is this name.
      tensor_names: ``{tensor.id: DOT name}`` for tensors drawn on their own
        (``t0, t1, ...``): inputs that no drawn op made (a watched x, a
        constant), and targets or sources without a producer.

    Where the ``dot`` program cannot be started (not installed; Pyodide, where no
    process starts), a notebook still shows it: ``_repr_mimebundle_`` then sends
    HTML with the drawing laid out in Python, which the Graphviz build for
    WebAssembly bundled in teachgrad redraws in a live notebook (see ``wasm.py``).
    """

    def __init__(self, *args, node_names=None, tensor_names=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.node_names = dict(node_names or {})
        self.tensor_names = dict(tensor_names or {})

    def _copy_kwargs(self, **kwargs):
        kwargs = super()._copy_kwargs(**kwargs)   # graphviz's own: name, body, ...
        kwargs.update(node_names=self.node_names, tensor_names=self.tensor_names)
        return kwargs

    def __repr__(self):
        # The text/plain of a notebook output, with or without ``dot``: the same on
        # every machine, so the lessons' stored outputs do not depend on it.
        return f"<teachgrad drawing: {plural(len(self.node_names), 'op')}>"

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        try:
            return super()._repr_mimebundle_(include, exclude, **kwargs)
        except wasm.CANNOT_START:
            svg, _ = wasm.svg(self)
            return wasm.mimebundle(self.source, svg, text=repr(self))

    def tensor_lines(self):
        """``{tensor id: (DOT name, line prefix)}``: the DOT node whose label writes each
        tensor's lines, and the prefix of those lines (``"1: "`` for output 1 of a node
        with several outputs, else ``""``)."""
        lines = {key: (name, "") for key, name in self.tensor_names.items()}
        for node, name in self.node_names.items():
            if name.startswith("n"):
                for i, t in enumerate(node.outputs):
                    lines.setdefault(t.id, (name, f"{i}: " if len(node.outputs) > 1 else ""))
        return lines

    def html(self):
        """The HTML of this drawing, for a page of one's own: the SVG from ``dot``, or
        where ``dot`` cannot be started, the layout made in Python with a note, redrawn
        by the bundled Graphviz on a page that includes ``wasm.loader_html()`` once.
        It needs no network, and no script to be readable."""
        svg, by_dot = wasm.svg(self)
        if by_dot:
            return f'<div class="teachgrad-viz">{svg[svg.index("<svg"):]}</div>'
        return wasm.html(self.source, svg)


def draw(obj, tape=None, *, fetches=None, show_shapes=True, show_dtypes=True,
         show_values=True, gradients=None, max_value_size=6, rankdir="TB", scopes=True,
         side_by_side=True, expand_functions=True, collapse=None, max_nodes=2000, title=None,
         names=None, fit=True, trace=None):
    """Draw a tensor's history, a graph, a ``tg.function`` or a backward-pass trace.

    Args:
      obj: an eager ``tg.Tensor`` (or a list of them), a graph tensor, a
        ``tg.Graph``, a ``tg.function`` or a concrete function, or a ``Trace``
        from ``tg.viz.record()``.
      tape: the ``GradientTape`` that recorded an eager tensor (inside the
        tape's ``with`` block it is found on its own). Draw before
        ``tape.gradient(...)``, or use ``persistent=True``.
      fetches: for a graph, the tensors (or nodes) to draw with everything they
        need; all nodes by default.
      show_shapes, show_dtypes, show_values: what each node says besides its
        name: output shapes ``(2, 3)`` (``?`` unknown), dtypes, and values of at
        most ``max_value_size`` entries (eager tensors and graph constants),
        written ``value = 0.5``.
      gradients: each tensor's gradient beside its value (``grad = 1.5``): a
        dict ``{tensor: gradient}``, True (those a drawn backward-pass trace
        computed, or a persistent tape's last ``gradient`` call gave), or
        False. By default a trace's drawing shows the gradients it computed, a
        tape's drawing the sources' gradients once ``tape.gradient`` ran, and
        other drawings none.
      rankdir: the direction data flows: ``"TB"`` (down), ``"LR"``, ``"BT"``, ``"RL"``.
      scopes: draw name scopes (``layer1/...``) as clusters.
      side_by_side: draw gradient nodes (made by ``tg.gradients``) apart from the
        forward nodes, each filled with the colour of the forward node whose
        VJP rule made it; a forward value a rule reads appears again beside it
        as a dashed ellipse. False draws one graph with every edge direct
        (slow for dot to lay out when the graph is big).
      expand_functions: draw the graph inside each node that holds one (a
        ``tg.function`` call, a While or If) as a cluster beside it.
      collapse: fold name scopes into one node each, for big graphs: an int
        ``d`` folds every scope at depth ``d`` (1: the top-level scopes), a list
        names the scopes (``["layer1", "gradients/layer1"]``).
      max_nodes: refuse (ValueError) to draw more nodes than this; None for no limit.
      title: a caption above the drawing.
      fit: shrink a drawing wider than a notebook column (about 900 px) to fit it
        (dot's ``size``); False draws it at its natural size, however wide.
      names: a ``teachgrad.viz.names.Names`` that says what to call each node
        and tensor (the steppers share theirs with the drawing). By default
        named tensors go by their names (``name=``, a Variable's, a
        placeholder's) and the others are ``t1, t2, ...`` in creation order.
      trace: for a graph, a trace of ``tg.gradients`` on it (``rec.traces[0]``):
        the gradient ops are called by the cotangents they compute, ``b_bar``
        for $\bar b$ (``names.cotangent_labels``), not by their ops
        (``multiply_1``).

    Returns:
      A ``Drawing`` (a ``graphviz.Digraph``): ``.source`` is the DOT text,
      ``.pipe(format="svg")`` renders it, ``.node_names`` and ``.tensor_names``
      say which DOT node draws which Node or tensor.
    """
    validate.flags("tg.viz.draw", show_shapes=show_shapes, show_dtypes=show_dtypes,
                   show_values=show_values, scopes=scopes, side_by_side=side_by_side,
                   expand_functions=expand_functions, fit=fit)
    options = Options(
        label_options=LabelOptions(show_shapes=bool(show_shapes), show_dtypes=bool(show_dtypes),
                            show_values=bool(show_values),
                            max_value_size=_count("max_value_size", max_value_size)),
        rankdir=_rankdir(rankdir), scopes=bool(scopes), side_by_side=bool(side_by_side),
        expand_functions=bool(expand_functions), collapse=_collapse(collapse),
        max_nodes=None if max_nodes is None else _count("max_nodes", max_nodes),
        title=None if title is None else str(title),
        fit=bool(fit))
    if names is not None and not isinstance(names, Names):
        validate.fail(TypeError, "tg.viz.draw", "names", "a teachgrad.viz.names.Names (or "
                      "None: named tensors by their names, the others t1, t2, ...)", names)
    scene = collect.scene_of(obj, tape=tape, fetches=fetches)
    if options.title is None and scene.title:
        options = dataclasses.replace(options, title=scene.title)
    options = dataclasses.replace(options, gradients=_gradients(gradients, obj, scene))
    if trace is not None:   # the gradient ops called by their cotangents
        if names is not None:
            raise ValueError("tg.viz.draw takes names= or trace=, not both.")
        if not isinstance(getattr(trace, "events", None), (list, tuple)):
            validate.fail(TypeError, "tg.viz.draw", "trace", "a trace of tg.gradients on "
                          "the graph, from tg.viz.record() (rec.traces[0])", trace)
        names = of_scene(scene, given=cotangent_labels(trace, of_scene(scene)))
    return draw_scene(scene, options, names)


def draw_scene(scene, options, names=None):
    """The Drawing of a ``collect.Scene`` with checked ``dot.Options`` (what ``draw`` does
    once it has gathered the scene; the JVPStepper draws its forward ops with it)."""
    writer = Writer(options)
    body = writer.write(scene, names if names is not None else of_scene(scene))
    return Drawing(body=body, node_names=writer.node_names, tensor_names=writer.tensor_names)


def _gradients(gradients, obj, scene):
    """``{tensor id: text}`` of the gradients to show, or None."""
    if gradients is None or gradients is True:
        trace = collect.trace_of(obj)
        if trace is None or trace.start is None:
            last = scene.tape.last_gradients() if scene.tape is not None else {}
            if last:   # a persistent tape's last gradient() call
                return {key: format_value(g) for key, g in last.items()}
            if gradients is True:
                raise ValueError("gradients=True shows what a gradient computed: draw a "
                                 "recorded backward pass (rec.traces[0]) or a persistent "
                                 "tape's tensor after tape.gradient(...), or pass the "
                                 "gradients as a dict {tensor: gradient}.")
            return None
        from .frame_types import gradient_texts
        from .frames import backprop_frames  # they fold the trace's events
        frames = backprop_frames(trace)
        return gradient_texts(frames[len(frames) - 1])
    if gradients is False:
        return None
    if not isinstance(gradients, dict):
        validate.fail(TypeError, "tg.viz.draw", "gradients", "a dict {tensor: gradient}, "
                      "True or False", gradients)
    shown = {}
    for tensor, g in gradients.items():
        if not hasattr(tensor, "id"):
            raise TypeError(f"gradients' keys are the tensors drawn, got "
                            f"{type(tensor).__name__}.")
        shown[tensor.id] = g if isinstance(g, str) else format_value(g)
    return shown


def _count(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number >= 0, got {value!r}.")
    return value


def _rankdir(value):
    if not isinstance(value, str) or value.upper() not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)} (the direction data "
                         f"flows in the drawing), got {value!r}.")
    return value.upper()


def _collapse(value):
    """None, a depth >= 1, or a frozenset of scope paths as tuples."""
    if value is None or value is False:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ValueError(f"collapse={value} folds nothing: give a depth >= 1 (1 folds the "
                             f"top-level name scopes), or scope names.")
        return value
    names = [value] if isinstance(value, str) else value
    try:
        names = list(names)
    except TypeError:
        raise TypeError(f"collapse takes a depth (int) or name scopes (a list of str), not "
                        f"{type(value).__name__}.") from None
    if not names or not all(isinstance(name, str) and name.strip("/") for name in names):
        raise TypeError(f"collapse takes a depth (int) or name scopes (a list of non-empty "
                        f"str such as 'layer1'), got {value!r}.")
    return frozenset(tuple(name.strip("/").split("/")) for name in names)
