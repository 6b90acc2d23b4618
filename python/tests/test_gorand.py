"""gorand against Go's math/rand/v2 (testdata/gorand.json from the generator)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import reference
from vomc_torch.gorand import PCG, perm

REF = reference("gorand.json")


@pytest.mark.parametrize("case", REF["Streams"], ids=lambda c: f"{c['Seed1']:x},{c['Seed2']:x}")
def test_uint64_stream(case: dict) -> None:
    """rand.NewPCG(seed1, seed2).Uint64() eight times."""
    g = PCG(case["Seed1"], case["Seed2"])
    assert [g.uint64() for _ in case["Uint64"]] == case["Uint64"]


@pytest.mark.parametrize("case", REF["Uint64N"], ids=lambda c: f"n={c['N']}")
def test_uint64n(case: dict) -> None:
    """rand.New(PCG).Uint64N(n): powers of two (mask), small n and n near
    2^63 and 2^64, where Lemire's method rejects often."""
    g = PCG(case["Seed1"], case["Seed2"])
    assert [g.uint64n(case["N"]) for _ in case["Draws"]] == case["Draws"]


@pytest.mark.parametrize("case", REF["Perms"], ids=lambda c: f"{c['Seed1']:x},{c['Seed2']:x},n={c['N']}")
def test_perm(case: dict) -> None:
    """rand.New(rand.NewPCG(seed1, seed2)).Perm(n) for n = 0, 1, 2, 3, 8, 100, 1024, 3001."""
    p = perm(case["Seed1"], case["Seed2"], case["N"])
    assert p.dtype == np.int64 and p.shape == (case["N"],)
    assert p.tolist() == case["Perm"]


def test_perm_negative() -> None:
    with pytest.raises(ValueError):
        perm(1, 2, -1)
