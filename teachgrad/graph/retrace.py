"""When ``tg.function`` traces again, why, and how its traces stay few.

A trace is keyed by its arguments: each tensor's shape and dtype, each Python value
itself, each Variable by identity. A call whose key is new is traced again. This
module keeps what one function remembers about its keys, to

* **say why** a retrace happened: which argument changed, and how (its shape, its
  dtype, its Python value), compared with the trace made before it;
* **relax shapes** (TensorFlow's ``reduce_retracing``): once an argument has come with
  ``RELAX_AT`` different shapes of one rank and dtype, the sizes that changed become
  None and one shape-generic trace serves every later size;
* **stay bounded**: at most ``MAX_TRACES`` traces are kept, the oldest dropped first.
"""
import numpy as np

#: After this many traces of one function, tg.function warns (as TensorFlow does).
RETRACE_WARNING = 5
#: After an argument came with this many shapes (one rank and dtype), its changing sizes relax.
RELAX_AT = 3
#: The most traces one function keeps (the oldest is dropped to make room).
MAX_TRACES = 64


def _is_tensor_entry(entry):
    return isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], np.dtype)


class Retracing:
    """What one traced function remembers of its keys (see the module docstring)."""

    def __init__(self):
        self.seen = {}      # (position, dtype, rank) -> the distinct shapes it came with
        self.relaxed = {}   # position -> (dtype, shape with None for the sizes that change)
        self.last = None    # the key of the most recent trace
        self.warned = False

    def relax(self, key, offset):
        """``key`` with each relaxed argument's shape made generic (``offset``: 1 when the
        key starts with the keyword names, else 0)."""
        if not self.relaxed:
            return key
        entries = list(key)
        for position, (dtype, pattern) in self.relaxed.items():
            entry = entries[offset + position] if offset + position < len(entries) else None
            if _is_tensor_entry(entry) and entry[1] == dtype and entry[0] is not None \
                    and len(entry[0]) == len(pattern) \
                    and all(p is None or p == d for p, d in zip(pattern, entry[0])):
                entries[offset + position] = (pattern, dtype)
        return tuple(entries)

    def note(self, key, offset):
        """Count the shapes of a key about to be traced; relax an argument that has now
        come with ``RELAX_AT`` shapes. Returns the key to trace under."""
        for position, entry in enumerate(key[offset:]):
            if not _is_tensor_entry(entry) or entry[0] is None:
                continue
            shapes = self.seen.setdefault((position, entry[1], len(entry[0])), set())
            shapes.add(entry[0])
            if len(shapes) >= RELAX_AT:
                pattern = tuple(d if len({s[i] for s in shapes}) == 1 else None
                                for i, d in enumerate(entry[0]))
                self.relaxed[position] = (entry[1], pattern)
        return self.relax(key, offset)

    def cause(self, key, offset, names):
        """Which argument made ``key`` differ from the last trace's, in words, and the kind
        of change (``"value"``, ``"shape"`` or ``"dtype"``)."""
        if self.last is None or len(self.last) != len(key):
            return "the arguments' structure changed", "value"
        for position, (old, new) in enumerate(zip(self.last[offset:], key[offset:])):
            if old == new:
                continue
            name = f"`{names[position]}`" if position < len(names) else f"{position}"
            if _is_tensor_entry(old) and _is_tensor_entry(new):
                if old[1] != new[1]:
                    return f"argument {name} changed dtype, from {old[1]} to {new[1]}", "dtype"
                return f"argument {name} changed shape, from {old[0]} to {new[0]}", "shape"
            if old[0] == "value" and new[0] == "value":
                return (f"argument {name} is a new Python value, {new[1][1]!r} (it was "
                        f"{old[1][1]!r})"), "value"
            return f"argument {name} changed kind", "value"
        return "the keyword arguments changed", "value"

    def warning(self, function_name, count, key, offset, names):
        """The one warning, when the function has traced more than RETRACE_WARNING times."""
        if self.warned or count <= RETRACE_WARNING:
            return None
        self.warned = True
        what, kind = self.cause(key, offset, names)
        return (f"tg.function has traced {function_name} {count} times; this trace was made "
                f"because {what}. " + _ADVICE[kind] + f" At most {MAX_TRACES} traces are kept.")


_ADVICE = {
    "value": "A Python value (a number, a bool, a string) is part of the trace's key: if it "
             "changes from call to call, pass it as a tensor, tg.constant(value): a tensor's "
             "value is not part of the key, only its shape and dtype.",
    "shape": f"Once an argument has come with {RELAX_AT} shapes, tg.function traces one "
             f"version with None for the sizes that change, which serves every later size.",
    "dtype": "Each dtype gets a trace of its own: cast the argument to one dtype (tg.cast) "
             "before the call.",
}


def drop_oldest(traces):
    """Keep at most MAX_TRACES traces in the dict ``traces`` (oldest first out)."""
    while len(traces) > MAX_TRACES:
        del traces[next(iter(traces))]
