"""How a LocalJacobian shows itself: a text table, and an HTML heat map.

Each block d y / d x is a table: one row per output entry, one column per
input entry, then the cotangent u and J t beside it, and the tangent t and
u^T J beneath it. Below: for a broadcast input, which cotangent entries the
VJP's unbroadcast sum adds up for each of its entries.
"""
import numpy as np

from ..debug.report import escape
from .values import format_number


def _entry_names(name, shape):
    if not shape:
        return [name]
    return [f"{name}[{','.join(map(str, idx))}]" for idx in np.ndindex(*shape)]


def names(lj):
    """Entry labels: y[0,1] for outputs, x0[2] for inputs."""
    node = lj.node
    outs = {k: _entry_names(f"y{k}" if len(node.outputs) > 1 else "y",
                            tuple(node.outputs[k].shape)) for k in lj.outputs}
    ins = {i: _entry_names(f"x{i}", tuple(node.inputs[i].shape)) for i in lj.inputs}
    return outs, ins


def text(lj):
    """The blocks as fixed-width text tables."""
    outs, ins = names(lj)
    lines = [f"Local Jacobian of {lj.node.name} ({lj.node.op.name})"
             + ("" if lj.agree else "  [VJP and JVP disagree!]")]
    for (k, i), block in lj.blocks.items():
        width = max(9, *(len(n) for n in ins[i]))
        lines.append(f"d {outs[k][0].split('[')[0]} / d x{i}:")
        lines.append(" " * 12 + "".join(f"{n:>{width}}" for n in ins[i])
                     + f"{'u':>{width}}{'J t':>{width}}")
        for r, name in enumerate(outs[k]):
            u = lj.cotangent[lj.outputs.index(k)][r]
            cells = list(block.matrix[r]) + [u, lj.jvp[(k, i)][r]]
            lines.append(f"{name:>12}" + "".join(format_number(v).rjust(width) for v in cells))
        t = lj.tangent[lj.inputs.index(i)]
        lines.append(f"{'t':>12}" + "".join(format_number(v).rjust(width) for v in t))
        lines.append(f"{'u^T J':>12}" + "".join(format_number(v).rjust(width) for v in lj.vjp[i]))
    for i, sources in lj.broadcast.items():
        lines.append(f"x{i} was broadcast: its VJP sums the cotangents of its copies:")
        k = lj.outputs[0]
        for entry, rows in zip(ins[i], sources):
            lines.append(f"  {entry} <- " + " + ".join(f"u[{outs[k][r]}]" for r in rows))
    return "\n".join(lines)


def html(lj):
    """The blocks as HTML tables whose cells are coloured by value."""
    outs, ins = names(lj)
    parts = [f"<div><b>Local Jacobian of {escape(lj.node.name)} "
             f"({escape(lj.node.op.name)})</b>"]
    if not lj.agree:
        parts.append(" <span style='color:#b42318'>VJP and JVP disagree!</span>")
    for (k, i), block in lj.blocks.items():
        top = float(np.abs(block.matrix).max(initial=0)) or 1.0
        head = "".join(f"<th>{escape(n)}</th>" for n in ins[i])
        rows = [f"<tr><th></th>{head}<th style='border-left:2px solid #888'>u</th>"
                f"<th>J t</th></tr>"]
        for r, name in enumerate(outs[k]):
            cells = "".join(heat_cell(v, top) for v in block.matrix[r])
            rows.append(f"<tr><th>{escape(name)}</th>{cells}<td style='border-left:2px "
                        f"solid #888'>{format_number(lj.cotangent[lj.outputs.index(k)][r])}</td>"
                        f"<td>{format_number(lj.jvp[(k, i)][r])}</td></tr>")
        t = lj.tangent[lj.inputs.index(i)]
        rows.append("<tr style='border-top:2px solid #888'><th>t</th>"
                    + "".join(f"<td>{format_number(v)}</td>" for v in t) + "</tr>")
        rows.append("<tr><th>u<sup>T</sup>J</th>"
                    + "".join(f"<td>{format_number(v)}</td>" for v in lj.vjp[i]) + "</tr>")
        parts.append(f"<p>d {escape(outs[k][0].split('[')[0])} / d x{i}</p>"
                     f"<table>{''.join(rows)}</table>")
    for i, sources in lj.broadcast.items():
        k = lj.outputs[0]
        items = "".join(f"<li>{escape(entry)} &larr; "
                        + escape(" + ".join(f"u[{outs[k][r]}]" for r in rows)) + "</li>"
                        for entry, rows in zip(ins[i], sources))
        parts.append(f"<p>x{i} was broadcast: its VJP sums the cotangents of its "
                     f"copies:</p><ul>{items}</ul>")
    return "".join(parts) + "</div>"


def heat_cell(value, top):
    """A table cell coloured red for positive, blue for negative, white for zero."""
    strength = min(abs(value) / top, 1.0)
    shade = int(255 - 155 * strength)
    color = f"rgb(255,{shade},{shade})" if value > 0 else f"rgb({shade},{shade},255)" \
        if value < 0 else "white"
    return f"<td style='background:{color};text-align:right'>{format_number(value)}</td>"
