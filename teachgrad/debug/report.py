"""Small text and HTML helpers for the tg.debug reports (and their notebook views).

``escape`` is the package's one HTML escape: the reports, the steppers
(``viz/render.py``), the drawings' labels (``viz/escape.py``) and the exercises'
feedback all write model text into HTML through it.
"""
import html


def a_or_an(word):
    """``word`` with its indefinite article: "an int64", "a float32", "a uint8", "a bool"."""
    word = str(word)
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


def escape(value):
    """``value`` as text that is safe inside HTML: ``& < > " '`` become character
    references, so a name like ``<script>`` is shown, never run."""
    return html.escape(str(value), quote=True)


def html_table(headers, rows, cell_style=None):
    """A plain HTML table; ``cell_style(row, column)`` may return a CSS style for a cell."""
    head = "".join(f"<th style='text-align:left'>{escape(h)}</th>" for h in headers)
    body = []
    for r, row in enumerate(rows):
        cells = []
        for c, value in enumerate(row):
            style = cell_style(r, c) if cell_style else None
            attr = f" style='{escape(style)}'" if style else ""
            cells.append(f"<td{attr}>{escape(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
