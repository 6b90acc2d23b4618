"""Go's math/rand/v2 PCG-DXSM generator and Rand.Perm, bit for bit.

vomc draws its validation split (transformer.SplitByTree) and the window order
of every epoch (PCG(seed, epoch).Perm(n)) with Go's generator; this module
reproduces both so that the PyTorch engine sees exactly the windows, in
exactly the order, that the Go engine sees.

The generator (Go's rand.PCG) is a 128-bit linear congruential state
    s <- s * MUL + INC  (mod 2^128)
whose output is the DXSM permutation of the new state (hi, lo):
    h = hi; h ^= h >> 32; h *= 0xda942042e4dd58b5; h ^= h >> 48; h *= lo | 1
(all mod 2^64).  rand.New(PCG(seed1, seed2)) starts from hi = seed1,
lo = seed2.  Perm(n) is the Fisher-Yates shuffle of 0..n-1 from i = n-1
down to 1, swapping i with j = uint64n(i + 1), where uint64n(m) is a mask
for a power of two and otherwise Lemire's multiply-and-reject method (the
high word of x * m, rejecting x * m mod 2^64 < (2^64 - m) mod m).  This is
the 64-bit platform's path (Go uses 32-bit arithmetic on 32-bit machines).
"""
from __future__ import annotations

import numpy as np

_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
_MUL = (2549297995355413924 << 64) | 4865540595714422341
_INC = (6364136223846793005 << 64) | 1442695040888963407
_CHEAP = 0xDA942042E4DD58B5


class PCG:
    """Go's rand.PCG seeded with (seed1, seed2), as rand.NewPCG does."""

    def __init__(self, seed1: int, seed2: int) -> None:
        self.state = ((seed1 & _M64) << 64) | (seed2 & _M64)

    def uint64(self) -> int:
        """The next 64-bit output (rand.PCG.Uint64)."""
        s = (self.state * _MUL + _INC) & _M128
        self.state = s
        hi, lo = s >> 64, s & _M64
        hi ^= hi >> 32
        hi = (hi * _CHEAP) & _M64
        hi ^= hi >> 48
        return (hi * (lo | 1)) & _M64

    def uint64n(self, n: int) -> int:
        """A uniform integer in [0, n) (rand.Rand.uint64n, 64-bit path)."""
        if n & (n - 1) == 0:
            return self.uint64() & (n - 1)
        prod = self.uint64() * n
        lo = prod & _M64
        if lo < n:
            thresh = ((1 << 64) - n) % n  # Go: -n % n on uint64
            while lo < thresh:
                prod = self.uint64() * n
                lo = prod & _M64
        return prod >> 64

    def perm(self, n: int) -> np.ndarray:
        """rand.New(pcg).Perm(n) as an int64 array."""
        if n < 0:
            raise ValueError(f"perm of {n} elements")
        p = list(range(n))
        u = self.uint64n
        for i in range(n - 1, 0, -1):
            j = u(i + 1)
            p[i], p[j] = p[j], p[i]
        return np.asarray(p, dtype=np.int64)


def perm(seed1: int, seed2: int, n: int) -> np.ndarray:
    """rand.New(rand.NewPCG(seed1, seed2)).Perm(n)."""
    return PCG(seed1, seed2).perm(n)
