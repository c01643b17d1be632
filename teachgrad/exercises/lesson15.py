"""Lesson 15's exercise (complex numbers): its contract and check.

``fft_vjp(g)``: the cotangent that ``y = tg.signal.fft(z)`` hands back to ``z`` when ``y``'s
is ``g``, in TensorFlow's convention, with one call of an FFT. The check makes fresh complex
cotangents of three shapes (one a batch of rows) after the answer was defined, computes the
right values with a tape on copies the answer never sees, calls the answer through
``calls.Answer`` (the guards every lesson check shares), and counts the FFT ops it binds:
one, neither a loop of them nor none (a DFT matrix, a sum per frequency).
"""
import numpy as np

from ..autodiff import GradientTape
from ..ops import conj, real, sum as total
from ..ops.signal import fft as fft_ops
from ..tensor import constant
from .calls import Answer, tensor_result
from .contracts import Contract, register_contract
from .differences import must_match
from .feedback import NotYet

_TRANSFORMS = (fft_ops.fft_p, fft_ops.ifft_p)


def _by_tape(g):
    """What the tape hands z for L = sum(real(conj(g) y)), y = fft(z): y's gradient is g."""
    z = constant(np.zeros(g.shape, complex))
    with GradientTape() as tape:
        tape.watch(z)
        loss = total(real(conj(constant(g)) * fft_ops.fft(z)))
    return tape.gradient(loss, z).numpy()


def _counting():
    """Wrap the FFT ops' kernels so that each bind is counted; returns (counts, undo)."""
    counts, kept = [], [(op, op.forward) for op in _TRANSFORMS]

    def counted(forward):
        def call(*args, **params):
            counts.append(1)
            return forward(*args, **params)
        return call
    for op, forward in kept:
        op.forward = counted(forward)

    def undo():
        for op, forward in kept:
            op.forward = forward
    return counts, undo


def _check_fft_vjp(lesson):
    answer = Answer(FFT_VJP, lesson)
    for shape, seed in [((8,), 51), ((5,), 52), ((3, 6), 53)]:
        rng = np.random.default_rng(seed)
        g = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        expected = _by_tape(g)
        about = f"fft_vjp on a cotangent of shape {shape}"
        counts, undo = _counting()
        try:
            got = answer.call(constant(g.copy()))
        finally:
            undo()
        array = tensor_result(FFT_VJP, got, about, shape, complex_values=True)
        n = shape[-1]
        for slip, value in [
                ("ifft(g) without the factor n: ifft divides by n, and the adjoint of the "
                 "DFT does not", np.fft.ifft(g)),
                ("fft(g): the DFT itself, not its adjoint. The adjoint conjugates the "
                 "matrix, e^{+2 pi i jk/n}", np.fft.fft(g)),
                ("the conjugate of the answer: that is the other convention (JAX's); "
                 "TensorFlow's hands back conj(F)^T g", np.conj(n * np.fft.ifft(g)))]:
            if np.allclose(array, value) and not np.allclose(array, expected):
                raise NotYet(f"Not yet: {about} gave {slip}.")
        must_match(array, expected, about, "the cotangent goes back through the adjoint "
                   "F^H (the conjugate transpose), and F^H = n * ifft.")
        if not counts:
            raise NotYet(f"Not yet: the numbers are right, but {about} called no FFT: a DFT "
                         f"matrix or a sum per frequency costs n^2 work. Use one "
                         f"tg.signal.ifft call.")
        if len(counts) > 1:
            raise NotYet(f"Not yet: the numbers are right, but {about} called an FFT "
                         f"{len(counts)} times (a loop over rows, or a tape running fft "
                         f"forward and back). One tg.signal.ifft call does every row: the "
                         f"transform acts on the innermost axis.")
    return "fft_vjp is n * ifft(g), one FFT call, on three shapes (a batch of rows too)"


FFT_VJP = register_contract(Contract(
    "fft_vjp", lesson=15, number=1, kind="function", cell="l15-ex1-check",
    check=_check_fft_vjp,
    expect="a function fft_vjp(g) that returns the gradient with respect to z of a loss "
           "whose gradient with respect to y = tg.signal.fft(z) is g, with one FFT call",
    forbidden={
        "returns the lesson's grad_z": "def fft_vjp(g):\n    return grad_z\n",
        "a loop over the rows": (
            "def fft_vjp(g):\n"
            "    n = g.shape[-1]\n"
            "    if len(g.shape) == 1:\n"
            "        return tg.signal.ifft(g) * n\n"
            "    return tg.stack([tg.signal.ifft(g[i]) * n for i in range(g.shape[0])])\n"),
        "the conjugated DFT matrix, no FFT": (
            "def fft_vjp(g):\n"
            "    n = g.shape[-1]\n"
            "    k = np.arange(n)\n"
            "    F_conj = tg.constant(np.exp(2j * np.pi * np.outer(k, k) / n))\n"
            "    return tg.matmul(g, F_conj)\n"),
        "a tape through fft": (
            "def fft_vjp(g):\n"
            "    z = tg.zeros(g.shape, dtype=g.dtype)\n"
            "    with tg.GradientTape() as tape:\n"
            "        tape.watch(z)\n"
            "        loss = tg.sum(tg.real(tg.conj(g) * tg.signal.fft(z)))\n"
            "    return tape.gradient(loss, z)\n"),
        "JAX's convention (conjugated)": (
            "def fft_vjp(g):\n"
            "    return tg.conj(tg.signal.ifft(g)) * g.shape[-1]\n"),
        "ifft without the n": "def fft_vjp(g):\n    return tg.signal.ifft(g)\n"},
    accepted={
        "fft of the conjugate, conjugated": (
            "def fft_vjp(g):\n"
            "    return tg.conj(tg.signal.fft(tg.conj(g)))\n"),
        "the length cast to the cotangent's dtype": (
            "def fft_vjp(g):\n"
            "    n = tg.cast(g.shape[-1], g.dtype)\n"
            "    return n * tg.signal.ifft(g)\n")}))
