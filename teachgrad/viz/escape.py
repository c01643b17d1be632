"""Text that reaches Graphviz or the browser, made inert.

Op names, tensor names and name scopes are chosen by whoever wrote the model,
so a drawing must show ``<script>alert(1)</script>`` or ``"];x->y[`` as that
text, never run it as HTML or read it as DOT. Every piece of such text goes
into a drawing through one of three doors, each escaping for what is behind it:

* ``html(text)``: text inside a Graphviz HTML-like label (``label=<...>``).
  Graphviz parses those labels as XML, then writes the text into the SVG
  escaped again; the browser shows it as text. It builds on the one HTML
  escape of the package, ``debug.report.escape``, which the steppers' and
  the reports' HTML use directly.
* ``quoted(value)``: any other DOT attribute value, as a double-quoted string.
* ``js_string(text)``: a string literal inside an inline ``<script>``.
"""
import json
import re

from ..debug.report import escape

# Control characters cannot appear in XML (Graphviz would reject the label):
# they are shown as Python would show them, e.g. \x07.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

#: The most characters of one piece of user text a label shows: Graphviz rejects an
#: HTML-like label longer than 16384 characters (after escaping, which can multiply a
#: text's length by six), and a longer name could not be read in a drawing anyway.
LABEL_LIMIT = 400


def shortened(text, limit=LABEL_LIMIT):
    """``text``, or its start and end around an ellipsis when it is longer than ``limit``."""
    if len(text) <= limit:
        return text
    keep = limit - 1
    return text[:keep - keep // 3] + "\u2026" + text[len(text) - keep // 3:]


def html(text):
    r"""``text`` for an HTML-like label: shown exactly, never parsed as markup.

    ``& < > " '`` become character references; a newline becomes a line
    break (``<br/>``), a tab a space, any other control character its
    ``\xNN`` spelling. Backslashes and non-ASCII letters stay as they are:
    HTML-like labels, unlike quoted DOT strings, give ``\`` no meaning.

    >>> html('<script>alert(1)</script>')
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    text = shortened(str(text)).replace("\r\n", "\n").replace("\t", " ")
    text = escape(text)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text.replace("\n", "<br/>")


class Html(str):
    """A finished HTML-like label (already escaped): written as ``<...>``."""
    __slots__ = ()


def quoted(value):
    r"""``value`` as a double-quoted DOT string: ``\`` and ``"`` are escaped.

    Used for attribute values the drawing chooses itself (colours, shapes),
    so that even those cannot end the string early.
    """
    text = shortened(str(value)).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _CONTROL.sub(" ", text).replace("\n", " ") + '"'


def attributes(attrs):
    """``[k1=v1 k2=v2]`` for a DOT statement; an ``Html`` value is written as ``<...>``.

    Keys are fixed names from this package (``label``, ``fillcolor``), never
    user text.
    """
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        parts.append(f"{key}=<{value}>" if isinstance(value, Html) else f"{key}={quoted(value)}")
    return "[" + " ".join(parts) + "]" if parts else ""


def js_string(text):
    """``text`` as a JavaScript string literal that is safe inside ``<script>``.

    JSON gives a valid literal; ``<``, ``>`` and ``&`` are then written as
    ``\\u003c``-style escapes so that no ``</script>`` or ``<!--`` can end or
    confuse the script element (U+2028/2029 are escaped by ``ensure_ascii``).
    """
    literal = json.dumps(str(text), ensure_ascii=True)
    return literal.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
