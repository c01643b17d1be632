"""A stepper's drawing laid out in Python, for a kernel without Graphviz's ``dot``.

A plain drawing (``tg.viz.draw``) falls back to Graphviz compiled to WebAssembly,
run by the browser (``wasm.py``). A stepper cannot: widgets run no scripts, and
the stepper must know where each node is (to keep the node being processed in
view, ``follow.py``) before the browser sees the drawing. So when ``dot`` is
missing, the stepper's drawing is laid out here, from the DOT text that
``dot.py`` wrote, in the simplest way that reads well:

1. each node goes on a *rank*, one more than the deepest node with an edge into
   it (the inputs on top, the loss at the bottom, as ``dot`` draws them);
2. the nodes of a rank are ordered a few times by the mean place of their
   neighbours on the rank above, then below (a barycentre sweep, which undoes
   most edge crossings);
3. every rank is centred, and each edge is a straight line with an arrowhead.

Name-scope boxes (clusters) are left out. The SVG has the shape ``dot``
writes (a ``<g class="node">`` with a ``<title>`` per node, ``<g class="edge">``
per edge), so the steppers colour, annotate and follow it as they do ``dot``'s.
Laying out lesson 2's graph takes about a millisecond (``dot``: about 20 ms, a
process start included).
"""
import html
import re

from ..debug.report import escape

_STATEMENT = re.compile(r'^\s*("?[\w.]+"?)\s*(?:->\s*("?[\w.]+"?)\s*)?(\[.*\])?\s*$')
_ATTR = re.compile(r'([\w-]+)=("(?:[^"\\]|\\.)*"|<)')
_LINE_FONT = re.compile(r'point-size="([\d.]+)"')
_TAG = re.compile(r"<[^>]*>")
#: Points per inch, and the sizes and gaps of the layout, in points.
PT = 72.0
RANK_GAP, NODE_GAP, PAD = 30.0, 18.0, 4.0


def parse(source):
    """(nodes, edges, defaults) of DOT text written by ``dot.py``: nodes is
    {name: attrs} in the order written, edges [(tail, head, attrs)]."""
    nodes, edges, defaults = {}, [], {}
    for line in source.splitlines():
        match = _STATEMENT.match(line)
        if match is None or line.strip().startswith(("subgraph", "digraph")):
            continue
        tail, head, attrs = match.group(1).strip('"'), match.group(2), _attrs(match.group(3))
        if tail in ("graph", "edge"):
            continue
        if tail == "node":
            defaults = attrs
        elif head is None:
            nodes[tail] = attrs
        else:
            edges.append((tail, head.strip('"'), attrs))
            for name in (tail, head.strip('"')):
                nodes.setdefault(name, {})
    return nodes, edges, defaults


def _attrs(text):
    """{key: value} of an attribute list; an HTML-like label keeps its inner markup."""
    found, at = {}, 0
    while text:
        match = _ATTR.search(text, at)
        if match is None:
            break
        if match.group(2) == "<":          # label=<...>: up to the matching '>'
            depth, i = 0, match.end() - 1
            while i < len(text):
                depth += {"<": 1, ">": -1}.get(text[i], 0)
                if depth == 0:
                    break
                i += 1
            found[match.group(1)] = ("html", text[match.end():i])
            at = i + 1
        else:
            found[match.group(1)] = match.group(2)[1:-1].replace('\\"', '"')
            at = match.end()
    return found


def label_lines(attrs, name):
    """[(text, size, bold)] of a node's label: HTML-like labels line by line."""
    label = attrs.get("label", name)
    if not isinstance(label, tuple):
        return [(escape(label), 11.0, False)]
    lines = []
    for part in re.split(r"<br\s*/?>", label[1]):
        size = _LINE_FONT.search(part)
        text = escape(html.unescape(_TAG.sub("", part)))
        lines.append((text, float(size.group(1)) if size else 11.0, "<b>" in part))
    return lines


def _size(lines, shape):
    """(width, height) of a node, in points, from an estimate of its text's width."""
    width = max(len(html.unescape(t)) * s * 0.56 for t, s, _ in lines) + 2 * 0.12 * PT
    height = sum(s + 1 for _, s, _ in lines) + 2 * 0.04 * PT + 4
    return (width * 1.25, height * 1.3) if shape == "ellipse" else (width, height)


def ranks(nodes, edges):
    """{name: rank}: 0 for a node no edge enters, else one more than its deepest tail."""
    into = {name: [] for name in nodes}
    for tail, head, _ in edges:
        into[head].append(tail)
    rank = {}

    def depth(name, seen=()):
        if name not in rank:
            tails = [t for t in into[name] if t not in seen]   # cycles cannot recurse
            rank[name] = 1 + max((depth(t, seen + (name,)) for t in tails), default=-1)
        return rank[name]
    for name in nodes:
        depth(name)
    return rank


def order(rank, edges, sweeps=4):
    """[[names of rank r, left to right]], ordered by barycentre sweeps."""
    rows = [[] for _ in range(max(rank.values(), default=-1) + 1)]
    for name, r in rank.items():
        rows[r].append(name)
    up, down = {}, {}
    for tail, head, _ in edges:
        down.setdefault(tail, []).append(head)
        up.setdefault(head, []).append(tail)
    for sweep in range(sweeps):
        span = range(1, len(rows)) if sweep % 2 == 0 else range(len(rows) - 2, -1, -1)
        near = up if sweep % 2 == 0 else down
        for r in span:
            place = {n: i for i, n in enumerate(rows[r - 1 if sweep % 2 == 0 else r + 1])}
            now = {n: i for i, n in enumerate(rows[r])}
            rows[r].sort(key=lambda n: _mean([place[m] for m in near.get(n, ()) if m in place],
                                             now[n]))
    return rows


def _mean(values, otherwise):
    return sum(values) / len(values) if values else otherwise


def svg(source):
    """The drawing of DOT text ``source`` as SVG shaped like ``dot``'s (see above)."""
    nodes, edges, defaults = parse(source)
    drawn = {name: dict(defaults, **attrs) for name, attrs in nodes.items()}
    lines = {name: label_lines(attrs, name) for name, attrs in drawn.items()}
    sizes = {name: _size(lines[name], drawn[name].get("shape")) for name in drawn}
    rows = order(ranks(nodes, edges), edges)
    widths = [sum(sizes[n][0] for n in row) + NODE_GAP * (len(row) - 1) for row in rows]
    width = max(widths, default=0.0)
    place, y = {}, 0.0
    for row, row_width in zip(rows, widths):
        height = max((sizes[n][1] for n in row), default=0.0)
        x = (width - row_width) / 2
        for n in row:
            place[n] = (x + sizes[n][0] / 2, y + height / 2)
            x += sizes[n][0] + NODE_GAP
        y += height + RANK_GAP
    height = max(y - RANK_GAP, 0.0)
    w, h = width + 2 * PAD, height + 2 * PAD
    parts = [f'<svg width="{w:.0f}pt" height="{h:.0f}pt"\n viewBox="0.00 0.00 {w:.2f} {h:.2f}" '
             f'xmlns="http://www.w3.org/2000/svg">\n<g id="graph0" class="graph" '
             f'transform="scale(1 1) rotate(0) translate({PAD} {PAD})">']
    for k, name in enumerate(drawn):
        parts.append(_node(k, name, drawn[name], lines[name], place[name], sizes[name]))
    for k, (tail, head, attrs) in enumerate(edges):
        parts.append(_edge(k, tail, head, attrs, place, sizes))
    return "\n".join(parts) + "\n</g>\n</svg>\n"


def _node(k, name, attrs, lines, centre, size):
    (cx, cy), (w, h) = centre, size
    style = attrs.get("style", "")
    fill = attrs.get("fillcolor", "white") if "filled" in style else "none"
    stroke = (f'stroke="{escape(attrs.get("color", "black"))}" '
              f'stroke-width="{escape(attrs.get("penwidth", "1"))}"'
              + (' stroke-dasharray="5,2"' if "dashed" in style else ""))
    if attrs.get("shape") == "ellipse":
        shape = (f'<ellipse fill="{escape(fill)}" {stroke} cx="{cx:.2f}" cy="{cy:.2f}" '
                 f'rx="{w / 2:.2f}" ry="{h / 2:.2f}"/>')
    else:
        shape = _box(fill, stroke, cx, cy, w, h)
        if attrs.get("peripheries") == "2":
            shape += _box("none", stroke, cx, cy, w + 8, h + 8)
    top = cy - sum(s + 1 for _, s, _ in lines) / 2
    texts = []
    for text, size, bold in lines:
        top += size + 1
        weight = ' font-weight="bold"' if bold else ""
        texts.append(f'<text text-anchor="middle" x="{cx:.2f}" y="{top - 2:.2f}" '
                     f'font-family="Helvetica,sans-Serif"{weight} font-size="{size:.2f}">'
                     f"{text}</text>")
    return (f'<g id="node{k + 1}" class="node"><title>{escape(name)}</title>\n{shape}\n'
            + "\n".join(texts) + "\n</g>")


def _box(fill, stroke, cx, cy, w, h):
    x0, y0, x1, y1 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    return (f'<polygon fill="{escape(fill)}" {stroke} points="{x0:.2f},{y0:.2f} '
            f'{x1:.2f},{y0:.2f} {x1:.2f},{y1:.2f} {x0:.2f},{y1:.2f} {x0:.2f},{y0:.2f}"/>')


def _edge(k, tail, head, attrs, place, sizes):
    (x0, y0), (x1, y1) = place[tail], place[head]
    y0 += sizes[tail][1] / 2 * (1 if y1 >= y0 else -1)
    y1 -= (sizes[head][1] / 2 + 5) * (1 if y1 >= y0 else -1)
    dx, dy = x1 - x0, y1 - y0
    norm = max((dx * dx + dy * dy) ** 0.5, 1e-9)
    ux, uy = dx / norm, dy / norm
    tip = (x1 + ux * 5, y1 + uy * 5)
    arrow = (f"{tip[0]:.2f},{tip[1]:.2f} {x1 - uy * 2.5:.2f},{y1 + ux * 2.5:.2f} "
             f"{x1 + uy * 2.5:.2f},{y1 - ux * 2.5:.2f}")
    dash = ' stroke-dasharray="5,2"' if "dashed" in attrs.get("style", "") else ""
    colour = escape(attrs.get("color", "#555555"))
    label = attrs.get("label")
    text = ("" if not label else
            f'\n<text text-anchor="start" x="{(x0 + x1) / 2 + 3:.2f}" y="{(y0 + y1) / 2:.2f}" '
            f'font-family="Helvetica,sans-Serif" font-size="9.00">{escape(label)}</text>')
    css = f" {escape(attrs['class'])}" if attrs.get("class") else ""
    return (f'<g id="edge{k + 1}" class="edge{css}">\n<title>{escape(tail)}-&gt;'
            f'{escape(head)}</title>\n<path fill="none" stroke="{colour}"{dash} '
            f'd="M{x0:.2f},{y0:.2f}L{x1:.2f},{y1:.2f}"/>\n<polygon fill="{colour}" '
            f'stroke="{colour}" points="{arrow}"/>{text}\n</g>')
