#!/usr/bin/env python3
"""Paired second-half comparisons of the ladder's models (docs/figures/ladder/README.md).

Reads every eval stage's results.json under STAGES (default: run/stages beside this
file), each method's per-window second-half mean log loss (nats/symbol,
``second_half_windows``), and prints, for every transformer, its excess over the exact
Bayes predictor and its paired differences from Markov(4) and CTW(D=5), then the
comparisons the write-up quotes between models. Each line: mean over the test windows
and its 95% t-interval (paired by window; t quantile for n - 1 degrees of freedom).
"""
import glob
import json
import math
import os
import sys
from statistics import NormalDist


def t_quantile(df: int, p: float = 0.975) -> float:
    """Student-t quantile by the Cornish-Fisher expansion (exact to ~1e-6 for df >= 30)."""
    z = NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / df + g2 / df**2 + g3 / df**3


def load(stages: str) -> dict[str, list[float]]:
    """Maps each method's name to its per-window second-half losses."""
    out: dict[str, list[float]] = {}
    for f in sorted(glob.glob(os.path.join(stages, "eval-*", "results.json"))):
        for m in json.load(open(f))["methods"]:
            out[m["name"]] = m["second_half_windows"]
    return out


def pair(a: list[float], b: list[float]) -> str:
    """Mean of a - b over the windows with its paired 95% t-interval."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"cannot pair {len(a)} windows with {len(b)}")
    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    mu = sum(d) / n
    h = t_quantile(n - 1) * math.sqrt(sum((x - mu) ** 2 for x in d) / (n - 1) / n)
    return f"{mu:+.4f} [{mu - h:+.4f}, {mu + h:+.4f}]"


def one(names: list[str], prefix: str) -> str:
    """The single method whose name starts with prefix."""
    hits = [n for n in names if n.startswith(prefix)]
    if len(hits) != 1:
        raise SystemExit(f"pairs.py: {len(hits)} methods start with {prefix!r}: {hits}")
    return hits[0]


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    stages = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "run", "stages")
    M = load(stages)
    if not M:
        raise SystemExit(f"pairs.py: no eval-*/results.json under {stages} (they are git-ignored: "
                         "run scripts/ladder.sh finish first, about 6 minutes)")
    names = sorted(M)
    bayes, ctw, mk4 = one(names, "Bayes"), one(names, "CTW"), one(names, "Markov(k=4")
    print(f"{len(M[bayes])} test windows; t = {t_quantile(len(M[bayes]) - 1):.4f}")
    print(f"{'method':34s} {'excess over Bayes':26s} {'- Markov(4)':26s} - CTW(D=5)")
    for n in names:
        if len(M[n]) != len(M[bayes]):
            print(f"{n:34s} ({len(M[n])} windows: not paired)")
        elif n != bayes:
            print(f"{n:34s} {pair(M[n], M[bayes]):26s} {pair(M[n], M[mk4]):26s} {pair(M[n], M[ctw])}")
    tf = [n for n in names if n.startswith("TF(")]
    print("\nbetween transformers (row - column):")
    for a in tf:
        for b in tf:
            if a < b:
                print(f"{a} - {b}: {pair(M[a], M[b])}")


if __name__ == "__main__":
    main()
