"""``tg.explain_gradient`` when no path connects the source to the target: why not.

On a tape, the likely cuts: the target made while the tape was not recording, an
integer or bool tensor made from the source (the tape stops following it), a value
taken out of the tape (``.numpy()``), a ``stop_recording()`` block; in both modes, a
cond branch that did not run.
"""
from ..autodiff.pending import upstream_nodes
from . import views
from .explanation import Cause
from .report import a_or_an


def no_path_causes(view, target, source, names):
    source_name, target_name = names
    causes, integers = [], []
    if view.mode == "tape" and view.producer(target.id) is None:
        moment = view.tape.when_made(target)
        if moment != "recording":
            text, fix = views.WHEN_MADE[moment]
            return [Cause("not_recording", f"{target_name} {text}", fix)]
        # The source is watched here (an unwatched one is a problem found before):
        # the record stops short of the target. An integer tensor made from the
        # source is the usual reason, so it leads, though the record cannot prove it.
        integers, others = _tape_hints(view, target, source_name)
        untracked = ("an integer tensor such as the one above, or values that do not depend on "
                     f"{source_name}" if integers else
                     f"constants, tensors nobody watched, or a copy of {source_name} made "
                     f"outside the tape")
        causes.append(Cause("no_record", f"no op the tape recorded made {target_name}: a tape "
                            f"records an op only when it reads a watched tensor or a float "
                            f"tensor computed from one, so {target_name} was computed from "
                            f"tensors the tape did not follow ({untracked})",
                            "" if integers else
                            f"Compute {target_name} from {source_name} itself, with float ops, "
                            f"inside the tape's block."))
        # A value taken out of the tape explains the missing record best: it leads.
        left = [c for c in others if c.kind == "left_the_tape"]
        causes = left + causes + [c for c in others if c.kind != "left_the_tape"]
    elif view.mode == "tape":   # recorded, from other tensors: the source's trail may end early
        integers, _ = _tape_hints(view, target, source_name)
    for node in upstream_nodes([target], view.producer_all, every_dtype=True):
        branch = node.context
        if getattr(branch, "taken", None) is not None:
            causes.append(Cause("cond_branch_not_taken", f"{target_name} was computed through "
                                f"cond '{branch.name}', which ran {branch.taken}: the branch "
                                f"that did not run left nothing on the tape, so if only it "
                                f"reads {source_name}, there is no path", "", node,
                                certain=False))
            break
    if not causes or all(not c.certain for c in causes):
        causes.insert(0, Cause("no_path", f"no path connects {source_name} to {target_name}: "
                               f"{target_name} does not depend on {source_name}"
                               + (" in anything the tape recorded" if view.mode == "tape"
                                  else ""), ""))
    return integers + causes     # an integer cast of the source leads: the likely cut


def _tape_hints(view, target, source_name):
    """Where the tape may have lost the source's trail, as (integer casts, other hints).

    A tape follows float tensors only: an op that makes an integer or bool tensor
    from one is kept aside (``tape.dropped_nodes()``), and what is computed from its
    result is not recorded at all. Such an op, fed by the source (or by floats
    computed from it) before the target was made, is the likely cut; the nearest
    the target comes first.
    """
    tape = view.tape
    walk_ids = {s.id for s in view.walk_sources}
    reached = _reached_ids(tape, walk_ids)
    integers = _integer_casts(tape, reached, walk_ids, target, source_name)
    others = _left_the_tape(tape, reached, target, source_name)
    if len(tape.recording_spans()) > 1:
        others.append(Cause("not_recording", "the tape stopped recording for a while "
                            "(stop_recording()); values computed then have no record, so a "
                            "target computed from one of them is cut off",
                            "Move that computation out of the stop_recording() block.",
                            certain=False))
    return integers, others


def _reached_ids(tape, walk_ids):
    """The tensors the record shows to depend on the source (a node is always made
    after the nodes it reads, so one pass in the order they were made will do)."""
    reached = set(walk_ids)
    for node in tape.recorded_nodes():
        if any(x.id in reached for x in node.inputs):
            reached.update(out.id for out in node.outputs)
    return reached


def _integer_casts(tape, reached, walk_ids, target, source_name):
    """The ops kept aside that made an integer or bool tensor from the source's trail
    before the target was made, the nearest the target first."""
    integers = []
    for node in reversed(tape.dropped_nodes()):
        if (any(x.id in reached for x in node.inputs)
                and min(out.id for out in node.outputs) < target.id):
            dtype = next(out.dtype for out in node.outputs if out.dtype.kind != "f")
            read = (source_name if any(x.id in walk_ids for x in node.inputs)
                    else f"a value computed from {source_name}")
            integers.append(Cause("integer", f"{node.name} ({node.op.name}) made "
                                  f"{a_or_an(dtype)} tensor from {read}: integers and bools "
                                  f"carry no gradient, so the tape stopped following {source_name} "
                                  f"there, and a target computed from that tensor is cut off",
                                  "Keep the computation in floats; tg.grad_pass_through "
                                  "passes a gradient through a rounding or casting step on "
                                  "purpose.", node, certain=False))
    return integers


def _left_the_tape(tape, reached, target, source_name):
    """A float result computed from the source that no recorded op read, made before the
    target: the usual trace of a value taken out of the tape (h.numpy(), float(h),
    tg.constant(h.numpy())), whose copy is a constant to the tape. The latest one."""
    read = {x.id for node in tape.recorded_nodes() for x in node.inputs}
    for node in reversed(tape.recorded_nodes()):
        left = [out for out in node.outputs if out.id in reached and out.id not in read
                and out.dtype.kind == "f" and out.id < target.id]
        if left and any(x.id in reached for x in node.inputs):
            out = left[0]
            name = f"{out.name} ({node.name})" if out.name else f"the output of {node.name}"
            return [Cause("left_the_tape", f"{name}, a {node.op.name}, was "
                          f"computed from {source_name}, but no op the tape recorded "
                          f"read it: if the target was computed from its value "
                          f"(.numpy(), float(), .item() or tg.constant(...) of it), that "
                          f"copy is a constant to the tape, and the path ends there",
                          f"Compute with the tensor itself, not with its value: "
                          f"teachgrad ops instead of numpy ones.", node, certain=False)]
    return []
