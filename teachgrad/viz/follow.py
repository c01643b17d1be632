"""Keeping a stepper's drawing readable, and the node being processed in view.

A drawing is shrunk to fit the width it is given; a wide one (lesson 11's
convolution) would shrink its text to 5 px. ``readable_width`` says how wide
the drawing must stay for its smallest text to keep ``SMALLEST_TEXT`` pixels;
the widget gives it that much room, and scrolls sideways beyond it.

A tall drawing scrolls in a box at most ``widget.VIEW`` tall, and a student
stepping through it would lose the node being processed below the box. Widgets
run no scripts, so the box cannot be scrolled by a frame; instead each frame's
``<style>`` moves the drawing inside its box (``follow_style``) so that the node
is near the box's middle, never past the drawing's edges. It is pure CSS, with
the node's place as a fraction of the drawing's size, so it needs no kernel and
works at any zoom: it works in a saved notebook too.
"""
import math
import re

#: The smallest a drawing's text may get, in CSS pixels (no stepper text is smaller).
SMALLEST_TEXT = 12
#: Room kept under a drawing moved up to its bottom edge (CSS pixels): a box that scrolls
#: sideways loses that much height to its scrollbar, and a node at the drawing's bottom
#: stays clear of the box's edge.
MARGIN = 24

_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"\s+viewBox="([-\d. ]+)"')
_FONT = re.compile(r'font-size="([\d.]+)"')
_TRANSLATE = re.compile(r'class="graph" transform="[^"]*translate\(([-\d.]+) ([-\d.]+)\)"')
_NODE = re.compile(r'<g id="[^"]*" class="node tg-node tg-node-([^"]+)">(.*?)</g>', re.S)
_POINT = re.compile(r"(-?[\d.]+),(-?[\d.]+)")
_ELLIPSE = re.compile(r'<ellipse [^>]*cx="([-\d.]+)" cy="([-\d.]+)"')


def readable_width(svg):
    """The narrowest the drawing can be shown, in CSS pixels, with its smallest text at
    least ``SMALLEST_TEXT`` pixels (None when the SVG says no size)."""
    size = _SIZE.search(svg)
    fonts = [float(f) for f in _FONT.findall(svg)]
    if size is None or not fonts:
        return None
    width_pt = float(size.group(1))
    # Shown w px wide, text of f pt is f * w / width_pt px: w >= SMALLEST * width_pt / f.
    return math.ceil(SMALLEST_TEXT * width_pt / min(fonts))


def centres(svg):
    """{DOT name: (x, y)}: the middle of each drawn node, as fractions of the drawing's
    width and height (0, 0 the top left)."""
    size, shift = _SIZE.search(svg), _TRANSLATE.search(svg)
    if size is None or shift is None:
        return {}
    box = [float(v) for v in size.group(3).split()]
    width, height = box[2] or 1.0, box[3] or 1.0
    dx, dy = float(shift.group(1)), float(shift.group(2))
    found = {}
    for name, body in _NODE.findall(svg):
        ellipse = _ELLIPSE.search(body)
        if ellipse is not None:
            x, y = float(ellipse.group(1)), float(ellipse.group(2))
        else:
            points = [(float(a), float(b)) for a, b in _POINT.findall(_shape(body))]
            if not points:
                continue
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            x, y = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
        found.setdefault(name, ((x + dx) / width, (y + dy) / height))
    return found


def _shape(body):
    shape = re.search(r'<(?:path|polygon) [^>]*(?:d|points)="([^"]*)"', body)
    return shape.group(1) if shape else ""


def follow_style(root, centre, view):
    """A ``<style>`` that moves the drawing under ``root`` inside its box, so that the
    point ``centre`` (fractions, from ``centres``) is near the box's middle, and no
    edge of the drawing comes inside the box (the bottom one no further than ``MARGIN``).
    ``view`` is the box's most height (a CSS
    length, ``60vh``); its width is the box's own (``cqw``: the box is a container)."""
    if centre is None:
        return ""
    fx, fy = (round(min(max(v, 0.0), 1.0) * 100, 2) for v in centre)
    x = f"min(0px, max(calc(100cqw - 100%), calc(50cqw - {fx}%)))"
    y = f"min(0px, max(calc({view} - 100% - {MARGIN}px), calc({view} / 2 - {fy}%)))"
    return (f"<style>{root} svg{{transform:translate({x}, {y});"
            f"transition:transform 0.2s}}</style>")
