"""HTML for the steppers: the drawing once, then a small restyling per frame.

Running ``dot`` for every frame would be slow, and a copy of the SVG in every
frame would make a notebook huge. So the drawing is rendered once; each SVG
node ``<g>`` gets the classes ``tg-node tg-node-<name>`` (``name`` is the DOT
name from ``tg.viz.draw``: ``n3`` for an op, ``t0`` for a tensor drawn on its
own), and each frame carries a ``<style>`` block, scoped to one stepper's
unique id, that colours the nodes by their state in that frame. Only the
frame on show is in the page (see ``widget.py``), so only its style applies.

All text that comes from a model (op names, tensor names) is HTML-escaped here.
"""
import collections
import re

from ..debug.report import escape
from . import follow, wasm
from .frame_types import DONE, NOT_REACHED, PROCESSING, QUEUED, SKIPPED, STATES, WAITING

#: Each state's colours (fill, outline), then extra CSS for the node's outline and group.
COLOURS = {
    NOT_REACHED: ("#ffffff", "#9e9e9e", "stroke-width:1", "opacity:0.45"),
    WAITING: ("#fff2b3", "#b38f00", "stroke-width:1.5", "opacity:1"),
    QUEUED: ("#cfe6ff", "#1f6fc5", "stroke-width:2", "opacity:1"),
    PROCESSING: ("#ff9f43", "#b03a00", "stroke-width:3", "opacity:1"),
    DONE: ("#d4f0d2", "#2e7d32", "stroke-width:1.5", "opacity:1"),
    SKIPPED: ("#eeeeee", "#757575", "stroke-width:1;stroke-dasharray:4 2", "opacity:0.8"),
}
#: Said under a stepper's drawing laid out without ``dot``.
NO_DOT = wasm.LAID_OUT_HERE
#: The fill of the node being processed (what a browser test can look for).
PROCESSING_FILL = COLOURS[PROCESSING][0]

WORDS = {NOT_REACHED: "not reached", WAITING: "waiting", QUEUED: "in the queue",
         PROCESSING: "being processed", DONE: "done", SKIPPED: "skipped"}

# The filled outline of a node (a periphery drawn around a target has fill="none").
_SHAPES = '>:is(path,polygon,ellipse):not([fill="none"])'

#: The Play widget's buttons as unicode glyphs: ipywidgets draws them with Font Awesome
#: icons (``<i class="fa fa-play">``), and Notebook 7 and HTML exports have no Font Awesome.
#: With it or without, the stepper's buttons show these.
GLYPHS = {"play": r"\25B6", "pause": r"\275A\275A", "stop": r"\25A0", "retweet": r"\21BB"}
PLAY_GLYPHS = (".tg-stepper-widget .widget-play .fa::before {font-family: "
               "var(--jp-ui-font-family, Helvetica, Arial, sans-serif); font-weight: normal; "
               "font-style: normal;}\n" + "".join(
                   f'.tg-stepper-widget .widget-play .fa-{icon}::before {{content: "{glyph}";}}\n'
                   for icon, glyph in GLYPHS.items()))

#: Shared by every frame; it lives in a widget that is always on the page (and in the
#: stepper's HTML view, ``html_view.py``). No text in it is under 12 px.
STYLE = """<style>
.tg-stepper {font-family: var(--jp-ui-font-family, Helvetica, Arial, sans-serif);
  font-size: 13px; line-height: 1.4;}
.tg-stepper .tg-step {color: #555; font-size: 12px;}
.tg-stepper .tg-sentence {margin: 4px 0 8px 0; font-size: 14px;}
.tg-stepper .tg-loop {background: #efe7ff; border-left: 4px solid #7e57c2;
  padding: 2px 6px; margin: 4px 0;}
.tg-stepper .tg-note {background: #fff8e1; border-left: 4px solid #f9a825; padding: 2px 6px;}
.tg-stepper table {border-collapse: collapse; margin: 4px 0 8px 0;}
.tg-stepper th, .tg-stepper td {border: 1px solid #ddd; padding: 2px 6px; text-align: left;
  vertical-align: top; font-size: 12px;}
.tg-stepper th {background: #f5f5f5;}
.tg-stepper .tg-chip {display: inline-block; border: 1px solid #999; border-radius: 9px;
  padding: 0 7px; margin: 1px 2px; font-size: 12px; white-space: nowrap;}
.tg-stepper .tg-value {font-family: var(--jp-code-font-family, monospace); font-size: 12px;}
.tg-stepper pre.tg-array {margin: 2px 0 0 0; padding: 2px 4px; background: #f7f7f7;
  line-height: 1.25; overflow-x: auto;}
.tg-stepper .tg-graph svg {max-width: 100%; height: auto;}
.tg-graph-box {container-type: inline-size; position: relative;}
.tg-kernel-note {color: #555; font-size: 12px; margin: 0 6px;}
.tg-stepper .tg-zoom {display: none;}
.tg-stepper .tg-zoom-label {cursor: pointer; color: #1f6fc5; font-size: 12px;
  text-decoration: underline; position: absolute; top: 0; right: 0; z-index: 2;
  background: rgba(255, 255, 255, 0.85); padding: 0 4px;}
.tg-stepper .tg-zoom:checked ~ .tg-graph svg {max-width: none;}
.tg-stepper-widget .tg-controls {position: sticky; top: 0; z-index: 3;
  background: var(--jp-layout-color0, white);}
.tg-stepper .tg-empty {color: #777; font-style: italic;}
.tg-stepper .tg-g {display: none;}
""" + PLAY_GLYPHS + "".join(
    f".tg-stepper .tg-chip.tg-state-{state} {{background: {fill}; border-color: {line};}}\n"
    for state, (fill, line, _, _) in COLOURS.items()) + "</style>"


#: What a standalone SVG needs of STYLE (a stepper's picture as an image).
STANDALONE_CSS = ".tg-g {display: none;}"


def fitted(scope, svg_html):
    """The drawing, shrunk to the width it is given (never so far that its text gets
    smaller than ``follow.SMALLEST_TEXT`` pixels: then it scrolls), and a click away
    from full size (a checkbox and its label: it needs no kernel, and works in a saved
    notebook too)."""
    graph = f'<div id="{scope}" class="tg-stepper tg-graph">{svg_html}</div>'
    if not svg_html:
        return graph
    least = follow.readable_width(svg_html)
    if least:
        graph = f"<style>#{scope} svg {{min-width: {least}px;}}</style>" + graph
    return (f'<div class="tg-stepper"><input type="checkbox" class="tg-zoom" '
            f'id="{scope}-zoom"><label class="tg-zoom-label" for="{scope}-zoom">'
            f"full size / fit the column</label>{graph}</div>")


def chip(text, state, node_name=None):
    """A rounded label coloured like a node in ``state``."""
    data = f' data-node="{escape(node_name)}"' if node_name else ""
    return f'<span class="tg-chip tg-state-{state}"{data}>{escape(text)}</span>'


def legend():
    return "<div>" + "".join(chip(WORDS[s], s) for s in STATES) + "</div>"


def table(css_class, headers, rows, more=0):
    """An HTML table; ``rows`` hold HTML already escaped; ``more`` rows left out."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if more:
        body += (f'<tr><td colspan="{len(headers)}" class="tg-empty">... and {more} more '
                 f"(all of them: stepper.frames[i])</td></tr>")
    return f'<table class="{css_class}"><tr>{head}</tr>{body}</table>'


def value(text):
    return f'<span class="tg-value">{escape(text)}</span>'


# -- the drawing --------------------------------------------------------------------
def drawing_svg(drawing, scope):
    """The drawing as inline SVG, its nodes classed ``tg-node tg-node-<name>``.

    Returns ``(svg, note)``. Where Graphviz's ``dot`` program cannot be started
    (``wasm.CANNOT_START``: not installed, or no processes, as in Pyodide) the
    drawing is laid out in Python (``plain_layout.py``: widgets run no scripts,
    so the browser's Graphviz cannot draw a stepper's graph), and ``note`` says so.
    The SVG is plain inline markup: a page shows it with no script or loader.
    """
    svg, by_dot = wasm.svg(drawing)
    return _classed(svg, scope), None if by_dot else NO_DOT


def _classed(svg, scope):
    svg = svg[svg.index("<svg"):]                       # no XML prolog or doctype
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.S)  # nor comments (version, names)
    svg = svg.replace("&#45;", "-")
    svg = re.sub(r"<title>%\d+</title>\s*", "", svg)      # the graph's own tooltip
    svg = re.sub(r'\bid="([^"]*)"', lambda m: f'id="{scope}-{m.group(1)}"', svg)
    svg = svg.replace("url(#", f"url(#{scope}-")
    return re.sub(r'<g id="([^"]*)" class="node">\s*<title>([^<]*)</title>',
                  lambda m: (f'<g id="{m.group(1)}" class="node tg-node tg-node-{m.group(2)}">'
                             f"<title>{m.group(2)}</title>"), svg)


#: How the edge a contribution travels along is drawn in the frame where it travels.
TRAVEL = "stroke:#d35400;stroke-width:3"


def with_versions(svg, versions, word="grad"):
    """The SVG with each ``grad = ...`` line (``word = ...``) drawn once per version of
    its text.

    ``versions`` maps ``(DOT name, line prefix)`` to the texts that line takes
    over the frames (the drawing was made with the longest, so every version
    fits). Each version is a ``<text class="tg-g tg-g-<key>-<k>">`` (``key`` the
    DOT name, and ``-i`` for output ``i`` of a node with several), hidden
    until a frame's style shows it (``version_style``): a stepper's drawing is
    rendered once, and its running sums still change from frame to frame.
    """
    for (name, prefix), texts in versions.items():
        longest = max(texts, key=len)
        group = re.compile(r'(<g id="[^"]*" class="node tg-node tg-node-%s">.*?</g>)'
                           % re.escape(name), re.S)
        line = re.compile(r'<text ([^>]*)>%s</text>'
                          % re.escape(escape(f"{prefix}{word} = {longest}")))

        key = version_key(name, prefix)

        def copies(match, texts=texts, prefix=prefix, key=key, word=word, center=None):
            attrs = match.group(1)
            if center is not None:   # every version centred where the longest was
                attrs = re.sub(r'text-anchor="start" x="[^"]*"',
                               f'text-anchor="middle" x="{center:g}"', attrs)
            return "".join(f'<text class="tg-g tg-g-{key}-{k}" {attrs}>'
                           f"{escape(f'{prefix}{word} = {text}')}</text>"
                           for k, text in enumerate(texts))
        svg = group.sub(lambda m: line.sub(
            lambda t: copies(t, center=_center(m.group(1))), m.group(1), count=1), svg, count=1)
    return svg


def _center(group):
    """The x at the middle of a drawn node (its first shape), or None if not found."""
    shape = re.search(r'<ellipse [^>]*cx="([-\d.]+)"|<(?:path|polygon) [^>]*'
                      r'(?:d|points)="([^"]*)"', group)
    if shape is None:
        return None
    if shape.group(1) is not None:
        return float(shape.group(1))
    xs = [float(x) for x in re.findall(r"(-?[\d.]+),-?[\d.]+", shape.group(2))]
    return (min(xs) + max(xs)) / 2 if xs else None


def version_key(name, prefix):
    """What a line's versions are classed by: ``n3``, or ``n3-1`` for output 1's line."""
    return name + ("-" + prefix[:-2] if prefix else "")


def version_style(root, shown, edges=()):
    """A ``<style>`` showing version ``k`` of each ``(key, k)`` in ``shown`` and
    highlighting the ``edges`` (``(tail, head)`` DOT names) under ``root``."""
    rules = [f"{root} .tg-g-{name}-{k}{{display:inline}}" for name, k in shown]
    for tail, head in edges:
        rules.append(f"{root} .tg-edge-{tail}-{head} path{{{TRAVEL}}}")
        rules.append(f"{root} .tg-edge-{tail}-{head} polygon{{fill:#d35400;stroke:#d35400}}")
    return "<style>" + "".join(rules) + "</style>" if rules else ""


def state_style(root, states):
    """A ``<style>`` block colouring the drawn nodes under the CSS selector ``root``
    (``#tg-1f2e...``, the stepper's drawing): ``states`` maps DOT names to states.

    The commonest state is written once for every node, the others by name,
    which keeps a frame small even when the graph is big.
    """
    if not states:
        return ""
    groups = collections.defaultdict(list)
    for name, state in states.items():
        groups[state].append(name)
    common = max(groups, key=lambda s: len(groups[s]))
    rules = _rules(f"{root} .tg-node", common)
    for state in STATES:
        if state != common and state in groups:
            names = ",".join(f".tg-node-{name}" for name in groups[state])
            rules += _rules(f"{root} :is({names})", state)
    return "<style>" + "".join(rules) + "</style>"


def _rules(selector, state):
    fill, line, outline, group = COLOURS[state]
    dashes = "" if "dasharray" in outline else ";stroke-dasharray:none"
    return [f"{selector}{{{group}}}",
            f"{selector}{_SHAPES}{{fill:{fill};stroke:{line};{outline}{dashes}}}"]


def drawn_states(frame_states, tensor_states, node_names, tensor_names):
    """DOT name -> state, for every node and tensor a drawing shows.

    What the pass does not follow (a constant input, say) is *not reached*.
    Several nodes can share one DOT node (a folded name scope): it shows the
    most advanced state among them.
    """
    rank = {state: i for i, state in enumerate((NOT_REACHED, DONE, SKIPPED, WAITING, QUEUED,
                                                PROCESSING))}
    shown = dict.fromkeys(node_names.values(), NOT_REACHED)
    shown.update(dict.fromkeys(tensor_names.values(), NOT_REACHED))
    for states, names in ((frame_states, node_names), (tensor_states, tensor_names)):
        for key, state in states.items():
            name = names.get(key)
            if name is not None and rank[state] > rank[shown[name]]:
                shown[name] = state
    return shown
