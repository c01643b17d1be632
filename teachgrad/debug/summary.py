"""One-line summaries of arrays, for error messages: shape, dtype, range, NaN and inf."""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import backend


@dataclass(frozen=True)
class ArraySummary:
    """What a message says about an array (the range is over its finite entries)."""
    shape: tuple
    dtype: str
    min: Optional[float]
    max: Optional[float]
    nans: int
    infs: int
    zeros: int

    @property
    def finite(self):
        return self.nans == 0 and self.infs == 0

    def __str__(self):
        parts = [f"shape {self.shape} {self.dtype}"]
        if self.min is not None:
            parts.append(f"min {self.min:.6g}, max {self.max:.6g}")
        parts.append(f"NaN: {self.nans or 'none'}")
        parts.append(f"inf: {self.infs or 'none'}")
        if self.zeros:
            parts.append(f"zeros: {self.zeros}")
        return ", ".join(parts)


def summarize(value):
    """An ``ArraySummary`` of a Tensor or an array."""
    array = np.asarray(backend.to_numpy(getattr(value, "value", value)))
    kind = array.dtype.kind
    if kind in "fc":
        nan, inf = np.isnan(array), np.isinf(array)
        finite = array[~(nan | inf)]
        nans, infs = int(nan.sum()), int(inf.sum())
    else:
        finite, nans, infs = array.ravel(), 0, 0
    low = float(finite.min()) if finite.size else None
    high = float(finite.max()) if finite.size else None
    return ArraySummary(tuple(array.shape), str(array.dtype), low, high, nans, infs,
                        int(np.count_nonzero(array == 0)))
