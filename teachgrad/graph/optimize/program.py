"""Elementwise programs: several elementwise ops run as one kernel.

A program is a list of steps, each one array function (a numpy ufunc, or
``where``) applied to the program's inputs, to Python numbers, or to earlier
steps' results; the last step's result is the program's output. Written out,
``tanh(x0 + x1)`` is::

    s0 = add(x0, x1)
    s1 = tanh(s0)          # the output

On the CPU the steps run one after another with numpy, but each result is
written with ``out=`` into a buffer that is no longer needed (``s1`` into
``s0``'s), so the chain allocates one array instead of one per op, and gives
bit-for-bit the results of the unfused ops (the same ufuncs in the same order).
A program may also be *donated* one of its inputs: when the graph no longer
needs that input after this node, its buffer is written over too (see
``reuse.py``), and the program allocates nothing at all. The program is
compiled to a small Python function, which ``program.source`` shows::

    def program(x0, x1):
        s0 = add(x0, x1)
        s1 = tanh(s0, out=s0)
        return s1

On a GPU (the CuPy backend) the whole program is compiled by ``cupy.fuse``
into one CUDA kernel: one pass over memory instead of one per op.

numexpr (one multithreaded pass over memory) was measured as the CPU engine
and lost by far: ``tanh(x0 + x1)`` over 1024 x 2048 float32 took about 60 ms
against under 1 ms for numpy's vectorised ufuncs with ``out=``, and 64 x 256
float64 about 10x numpy's time (2-core AMD EPYC, numexpr 2.14, numpy 2.4).
"""
import itertools

import numpy as np

from ... import backend
from ...ops.core.declare import defeffect, primitive, takes_complex
from .formula import formula_of


class Step:
    """One step: ``fn`` (a name in the array namespace) applied to ``args``.

    Each arg is ``("in", k)`` (input k), ``("step", j)`` (step j's result) or
    ``("num", value)`` (a Python number). ``shape`` and ``dtype`` describe the
    result (as the graph knows them: None for an unknown size).
    """

    __slots__ = ("fn", "args", "shape", "dtype")

    def __init__(self, fn, args, shape, dtype):
        self.fn = fn
        self.args = tuple(args)
        self.shape = shape
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return f"{self.fn}({', '.join(map(str, self.args))})"


class ElementwiseProgram:
    """Steps computing one output from ``n_inputs`` arrays (see the module docstring).

    Args:
      steps: the Steps, in order; the last one's result is the output.
      input_specs: (shape, dtype) of each input, as the graph knows them.
      donate: the index of an input whose buffer the program may write over,
        or None.
    """

    def __init__(self, steps, input_specs, donate=None):
        self.steps = tuple(steps)
        self.input_specs = tuple(input_specs)
        self.donate = donate
        self._lets, self._result = formula_of(self.steps)
        self._xp = None        # the array namespace the compiled code was made for
        self._run = None

    @property
    def n_inputs(self):
        return len(self.input_specs)

    def with_donation(self, donate):
        """The same steps, allowed to write over input ``donate``."""
        return ElementwiseProgram(self.steps, self.input_specs, donate)

    @property
    def formula(self):
        """The program as math over its inputs x0, x1, ...: ``tanh(x0 + x1)``; a result
        used twice is named first: ``s0 = tanh(x0); (1 - s0 * s0) * x1``."""
        return "; ".join(self._lets + [self._result])

    def describe(self):
        """The formula, with ``x0 := ...`` when the result is written into x0's buffer."""
        if self.donate is None:
            return self.formula
        return "; ".join(self._lets + [f"x{self.donate} := {self._result}"])

    def __repr__(self):
        return f"<elementwise program {self.describe()}: {len(self.steps)} steps>"

    @property
    def source(self):
        """The Python the program runs on the CPU (numpy), e.g. for ``tanh(x0 + x1)``
        with x0 donated::

            def program(x0, x1):
                if not writable(x0, shape0, dtype0):
                    return fresh(x0, x1)    # the same steps, writing over nothing
                s0 = add(x0, x1, out=x0)
                s1 = tanh(s0, out=s0)
                return s1
        """
        return _source(self, self.donate)

    def __call__(self, *arrays):
        if self._xp is not backend.xp:
            self._compile()
        return self._run(*arrays)

    def _compile(self):
        xp = backend.xp
        self._run = _gpu_code(self) if backend.get_backend() == "cupy" else _cpu_code(self, xp)
        self._xp = xp


def _cpu_code(program, xp):
    """The program as a Python function: one line per step (see ``source``)."""
    namespace = {fn: getattr(xp, fn) for fn in {step.fn for step in program.steps}}
    namespace["writable"] = _writable
    numbers = [value for step in program.steps for kind, value in step.args if kind == "num"]
    namespace.update({f"c{k}": value for k, value in enumerate(numbers)})
    if program.donate is not None:
        shape, dtype = program.input_specs[program.donate]
        namespace.update(shape0=tuple(shape), dtype0=np.dtype(dtype),
                         fresh=_cpu_code(program.with_donation(None), xp))
    exec(_source(program, program.donate, literals=False), namespace)   # noqa: S102
    return namespace["program"]


def _writable(array, shape, dtype):
    """Is ``array`` a writable array of this shape and dtype (safe to write over)?"""
    return (type(array) is backend.xp.ndarray and array.shape == shape
            and array.dtype == dtype and getattr(array.flags, "writeable", True))


def _source(program, donate, literals=True, buffers=True):
    """The Python source of ``program`` (numbers inlined when ``literals``; ``out=``
    buffers reused when ``buffers``)."""
    n_in = program.n_inputs
    params = ", ".join(f"x{k}" for k in range(n_in))
    lines = [f"def program({params}):"]
    if donate is not None:
        lines += [f"    if not writable(x{donate}, shape0, dtype0):",
                  f"        return fresh({params})"]
    numbers = itertools.count()
    outs = _plan(program, donate) if buffers else [None] * len(program.steps)
    for j, (step, out) in enumerate(zip(program.steps, outs)):
        args = []
        for kind, value in step.args:
            if kind == "in":
                args.append(f"x{value}")
            elif kind == "step":
                args.append(f"s{value}")
            else:
                k = next(numbers)
                args.append(repr(value) if literals else f"c{k}")
        if out is not None:
            args.append(f"out={out}")
        lines.append(f"    s{j} = {step.fn}({', '.join(args)})")
    lines.append(f"    return s{len(program.steps) - 1}")
    return "\n".join(lines) + "\n"


def _plan(program, donate):
    """For each step, the name of the buffer it writes into (``"x0"``, ``"s2"``), or
    None to let it allocate.

    A step may write into a buffer whose value no later step reads, if it is an
    array the program owns (an earlier step's result, or the donated input) of
    the step's exact shape and dtype. A ufunc may read the very buffer it writes
    (same shape, elementwise), so the step's own arguments count as free too;
    ``where`` has no ``out=`` and always allocates.
    """
    last_read = {}
    for j, step in enumerate(program.steps):
        for kind, value in step.args:
            if kind != "num":
                last_read[f"{'x' if kind == 'in' else 's'}{value}"] = j
    owned = {}       # buffer name -> (shape, dtype), for buffers the program may write over
    if donate is not None:
        owned[f"x{donate}"] = tuple(program.input_specs[donate])
    outs = []
    for j, step in enumerate(program.steps):
        spec = (step.shape, step.dtype)
        out = None
        if step.fn != "where" and _known(step.shape):
            out = next((name for name, held in owned.items()
                        if held == spec and last_read.get(name, -1) <= j), None)
        if out is not None:
            del owned[out]
        if _known(step.shape):
            owned[f"s{j}"] = spec
        outs.append(out)
    return outs


def _known(shape):
    return shape is not None and len(shape) > 0 and None not in shape


def _gpu_code(program):
    """The program as one CUDA kernel: ``cupy.fuse`` compiles the steps (no ``out=``:
    inside one kernel the intermediates never reach memory)."""
    import cupy
    namespace = {fn: getattr(cupy, fn) for fn in {step.fn for step in program.steps}}
    numbers = [value for step in program.steps for kind, value in step.args if kind == "num"]
    namespace.update({f"c{k}": value for k, value in enumerate(numbers)})
    exec(_source(program, None, literals=False, buffers=False), namespace)   # noqa: S102
    return cupy.fuse(namespace["program"])


def run_program(*arrays, program):
    """The kernel of every program node."""
    return program(*arrays)



def program_op(program, fused):
    """The op of a node running ``program``: named after what it does, for drawings
    (``fused: tanh(x0 + x1)``, ``in place: x0 := x0 * x1``)."""
    prefix = "fused" if fused else "in place"
    # its ops were checked when the graph was built: complex ones among them took complex
    return takes_complex(defeffect(primitive(f"{prefix}: {program.describe()}", run_program),
                                   "fresh"))
