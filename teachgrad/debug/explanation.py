"""The result of ``explain_gradient``: structured for tests, readable as text and HTML."""
from dataclasses import dataclass, field
from typing import Any, Optional

from . import hooks
from .report import escape

#: Each kind of reason, as ``explanation.kinds`` and ``cause.kind`` name it.
KINDS = {
    "no_path": "no path connects the source to the target",
    "integer": "an integer or bool tensor on the path (integers are constants)",
    "stop_gradient": "a tg.stop_gradient on the path",
    "stop_gradients_entry": "a stop_gradients= entry on the path",
    "not_differentiable": "an op with a zero derivative (rounding, comparisons, zeros_like)",
    "no_gradient_rule": "an op with no gradient rule (the LookupError case)",
    "cond_branch_not_taken": "the source is used only by the branch of a cond that did not run",
    "grad_fn_returned_none": "a custom gradient's grad_fn returned None",
    "custom_gradient_inside": "the path runs inside a custom_gradient function, which its "
                              "grad_fn replaces",
    "rule_returned_none": "an op's VJP rule gives no gradient for that input",
    "zeroed": "an op's VJP rule turned the gradient into zeros at these values",
    "cancelled": "the paths' gradients cancel out",
    "not_watched": "the tape was not watching the source",
    "not_recording": "the target was computed while the tape was not recording",
    "no_record": "the tape has no record of how the target was computed",
}


@dataclass(frozen=True)
class Cause:
    """One reason, and where: ``node`` (and ``input_index``) if it is at an op.

    ``certain`` is False for a likely reason that the record cannot prove (a
    tape keeps no record of what it did not watch); ``conditional`` marks a
    reason that holds only when the graph runs a certain way (a cond branch).
    """
    kind: str
    message: str
    fix: str = ""
    node: Any = None
    input_index: Optional[int] = None
    certain: bool = True
    conditional: bool = False

    @property
    def source(self):
        """The line of user code that made ``node``, when it was noted."""
        return None if self.node is None else hooks.source_of(self.node)

    def text(self):
        lines = [self.message + ("" if self.certain else " (likely; the record cannot "
                                                         "show it for sure)")]
        if self.source is not None:
            lines.append(f"made at {self.source}")
        if self.fix:
            lines.append(f"What to do: {self.fix}")
        return lines


@dataclass(frozen=True)
class Path:
    """One chain of ops from the source to the target: ``steps`` are ``(node, index)``,
    the node and which of its inputs the chain enters by, in forward order."""
    steps: tuple
    blocked: Optional[Cause] = None    # where the gradient stops, nearest the target
    condition: Optional[Cause] = None  # a cond branch it depends on (graphs, no feed)

    @property
    def nodes(self):
        return tuple(node for node, _ in self.steps)

    def text(self, source_name, target_name):
        names = [source_name] + [n.name for n in self.nodes]
        if names[-1] != target_name:   # in a graph the target is named after its node
            names.append(target_name)
        if len(names) > 14:            # an unrolled loop: the ends tell the story
            names = names[:6] + [f"... {len(names) - 12} more ..."] + names[-6:]
        return " -> ".join(names)


@dataclass
class GradientExplanation:
    """Why ``gradient(target, source)`` is what it is.

    Attributes:
      status: "nonzero", "zero", "none" (the gradient is None), "error" (the
        gradient call raises), or "symbolic" (a graph gradient whose value is
        known only when the graph runs; pass feed_dict= to get it).
      gradient: what the gradient call returns (a Tensor, None, or a graph tensor;
        with feed_dict=, the array).
      summary: one sentence.
      causes: the reasons (``Cause``), nearest the target first.
      paths: up to a dozen ``Path`` s from the source to the target; ``path_count``
        counts them all.
      with_zero: what ``unconnected_gradients="zero"`` would have returned.
    """
    mode: str
    source_name: str
    target_name: str
    status: str
    gradient: Any
    summary: str
    causes: list = field(default_factory=list)
    paths: list = field(default_factory=list)
    path_count: int = 0
    with_zero: str = ""
    error: Optional[str] = None

    @property
    def kinds(self):
        """The kinds of the causes found, e.g. {"stop_gradient"}."""
        return {c.kind for c in self.causes}

    def text(self):
        lines = [f"explain_gradient({self.target_name}, {self.source_name}): {self.summary}"]
        if self.error:
            lines.append(f"  The gradient call raises: {self.error}")
        for k, cause in enumerate(self.causes):
            first, *rest = cause.text()
            label = "Why" if self.status in ("none", "zero", "error") else "Note"
            lines.append(f"  {label if k == 0 else 'Also'}: {first}")
            lines += [f"    {line}" for line in rest]
        if self.paths:
            more = f" (showing {len(self.paths)})" if self.path_count > len(self.paths) else ""
            lines.append(f"  {self.path_count} path{'s' if self.path_count != 1 else ''} from "
                         f"{self.source_name} to {self.target_name}{more}:")
            for path in self.paths:
                lines.append("    " + path.text(self.source_name, self.target_name))
                if path.blocked is not None:
                    lines.append(f"      blocked at {path.blocked.node.name if path.blocked.node else '?'}"
                                 f": {KINDS[path.blocked.kind]}")
                elif path.condition is not None:
                    lines.append("      carries a gradient only when its cond branch runs")
                else:
                    lines.append("      carries the gradient")
        if self.with_zero:
            lines.append(f"  {self.with_zero}")
        return "\n".join(lines)

    __str__ = text

    def __repr__(self):
        return self.text()

    def _repr_html_(self):
        color = {"nonzero": "#1a7f37", "symbolic": "#1a7f37"}.get(self.status, "#b42318")
        parts = [f"<div><p><b>explain_gradient({escape(self.target_name)}, "
                 f"{escape(self.source_name)})</b>: <span style='color:{color}'>"
                 f"{escape(self.summary)}</span></p>"]
        if self.error:
            parts.append(f"<p>The gradient call raises: <code>{escape(self.error)}</code></p>")
        if self.causes:
            items = []
            for cause in self.causes:
                first, *rest = cause.text()
                extra = "".join(f"<br><small>{escape(r)}</small>" for r in rest)
                items.append(f"<li><b>{escape(cause.kind)}</b>: {escape(first)}{extra}</li>")
            parts.append("<ul>" + "".join(items) + "</ul>")
        if self.paths:
            rows = []
            for path in self.paths:
                verdict = ("blocked at " + escape(path.blocked.node.name if path.blocked.node
                                                  else "?")
                           if path.blocked else "carries the gradient")
                rows.append(f"<li><code>{escape(path.text(self.source_name, self.target_name))}"
                            f"</code>: {verdict}</li>")
            parts.append(f"<p>{self.path_count} path(s):</p><ul>{''.join(rows)}</ul>")
        if self.with_zero:
            parts.append(f"<p><small>{escape(self.with_zero)}</small></p>")
        return "".join(parts) + "</div>"
