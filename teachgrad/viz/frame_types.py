"""The frames' data: the states a node goes through, one ``Frame`` per event of a backward
pass, and ``BackpropFrames``, all the frames of one pass (``frames.backprop_frames`` makes
them). Frozen dataclasses that the widgets read, and tests check directly.
"""
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..autodiff import events
from .values import format_sum, format_value

NOT_REACHED, WAITING, QUEUED, PROCESSING, DONE, SKIPPED = (
    "not-reached", "waiting", "queued", "processing", "done", "skipped")
#: Every state a node (or a leaf tensor) can be in, in the order a node goes through them.
STATES = (NOT_REACHED, WAITING, QUEUED, PROCESSING, DONE, SKIPPED)


@dataclass(frozen=True)
class TensorGradient:
    """What one tensor's gradient has received so far.

    ``contributions`` are in the order they arrived; ``total`` and ``method``
    are set once they are summed (``"add_n"``, ``"tree"`` or ``"sparse"``),
    or, for a source with a single contribution, at the end (``"nop"``).
    """
    label: str
    contributions: tuple
    total: Any = None
    method: Optional[str] = None

    @property
    def text(self):
        """The gradient so far, for reading: the sum once summed, the one contribution,
        or the running sum (``0.5 - 0.4444``) while more may come."""
        if self.total is not None:
            return format_value(self.total)
        return format_sum([format_value(c) for c in self.contributions])


@dataclass(frozen=True)
class Frame:
    """The backward pass just after one event.

    ``states`` maps every node to one of ``STATES`` and ``tensor_states``
    does the same for the sources and targets (leaf tensors); ``pending``
    holds each node's latest pending count (a popped node keeps its 0);
    ``queue`` is front first; ``gradients`` maps tensor ids to
    ``TensorGradient`` in the order their first contribution arrived;
    ``loop`` is the loop iteration under way, if any; ``result`` is set on the
    ``Finish`` frame only: one gradient per source. The mappings are
    read-only and shared between frames where nothing changed.
    """
    index: int
    event: Any
    kind: str
    sentence: str
    node: Any
    states: Mapping
    tensor_states: Mapping
    pending: Mapping
    queue: tuple
    processing: Any
    gradients: Mapping
    loop: Optional[events.LoopIteration] = None
    result: Optional[tuple] = None


@dataclass(frozen=True)
class BackpropFrames:
    """All the frames of one backward pass, and the names to show them with.

    ``nodes`` are the nodes between sources and targets in creation order and
    ``names`` gives each its drawing name (``n0``, ``n1``, ...); ``labels``
    gives nodes and tensor ids the words the sentences use, from ``namer`` (a
    ``names.Names``, which the drawing of the pass shares).
    """
    trace: Any
    frames: tuple
    nodes: tuple
    names: Mapping
    labels: Mapping
    targets: tuple
    sources: tuple
    namer: Any = None

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, index):
        return self.frames[index]

    @property
    def has_pass(self):
        """False for a trace of loop iterations only (a forward loop's trace)."""
        return any(f.kind == "Start" for f in self.frames)


def gradient_texts(frame):
    """``{tensor id: text}``: each tensor's gradient so far in ``frame`` (see
    ``TensorGradient.text``): what a drawing writes as ``grad = ...``."""
    return {key: grad.text for key, grad in frame.gradients.items()}

