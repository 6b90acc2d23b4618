"""Checks of the arrays handed to vomc's Go core: every array is checked
here (dtype, shape, values) before a pointer to it leaves Python, and made
C-contiguous (a copy where it is not)."""
from __future__ import annotations

import numpy as np


def windows(x, A: int, what: str = "windows") -> np.ndarray:
    """x as a C-contiguous uint8 array of shape (W, N) (a 1-D x is one
    window), its symbols checked to lie in 0..A-1."""
    a = np.asarray(x)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{what}: dtype {a.dtype}, want integer symbols 0..{A - 1}")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"{what}: shape {a.shape}, want (windows, N) with at least one window of at least one symbol")
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < 0 or hi >= A:
            bad = lo if lo < 0 else hi
            w, t = np.argwhere(a == bad)[0]
            raise ValueError(f"{what}: window {w} position {t}: symbol {bad} outside the alphabet 0..{A - 1}")
    return np.ascontiguousarray(a, dtype=np.uint8)


def alphabet_of(x, alphabet) -> int:
    """The alphabet size: alphabet if given, else 1 + the largest symbol (at
    least 2)."""
    if alphabet is not None:
        A = int(alphabet)
        if not 2 <= A <= 256:
            raise ValueError(f"alphabet {alphabet}, want 2..256")
        return A
    a = np.asarray(x)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"windows: dtype {a.dtype}, want integer symbols")
    return max(2, int(a.max()) + 1) if a.size else 2


def floats(p, shape, what: str, dtype=np.float64) -> np.ndarray:
    """p as a C-contiguous array of dtype and the given shape; NaN and
    infinities are refused here, the rest is checked by vomc."""
    a = np.asarray(p)
    if not np.issubdtype(a.dtype, np.floating):
        raise TypeError(f"{what}: dtype {a.dtype}, want floating-point probabilities")
    if tuple(a.shape) != tuple(shape):
        raise ValueError(f"{what}: shape {tuple(a.shape)}, want {tuple(shape)}")
    a = np.ascontiguousarray(a, dtype=dtype)
    if not np.isfinite(a).all():
        i = tuple(int(v) for v in np.argwhere(~np.isfinite(a))[0])
        raise ValueError(f"{what}: entry {i} is {a[i]}, not a probability")
    return a
