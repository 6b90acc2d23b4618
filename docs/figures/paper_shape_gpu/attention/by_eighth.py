"""Summarise `vomc attention --profile` CSVs by eighth of the window.

Usage (in a directory holding NAME/profile.csv for each model):
    python3 by_eighth.py tf88 tf88-3000 tf88sin tf8888

For each model it prints the layer-1 head with the most attention on the
previous position (rel_1) and that mass per eighth of the window, and the
last layer's head with the most mass on length-2 suffix matches (offset 1)
with its mass on suffix matches of length 1, 2 and 3 per eighth.
"""
import csv
import sys

N = 1536  # window length of these models


def table(path: str) -> dict[tuple[int, int], list[dict[str, str]]]:
    """Rows of a profile CSV grouped by (layer, head)."""
    by: dict[tuple[int, int], list[dict[str, str]]] = {}
    for r in csv.DictReader(open(path)):
        by.setdefault((int(r["layer"]), int(r["head"])), []).append(r)
    return by


def eighths(rows: list[dict[str, str]], col: str) -> list[float]:
    """Mean of column col over the query positions of each eighth."""
    vals: list[list[float]] = [[] for _ in range(8)]
    for r in rows:
        if r[col] != "":
            vals[int(r["position"]) * 8 // N].append(float(r[col]))
    return [sum(v) / len(v) if v else float("nan") for v in vals]


def best(by: dict[tuple[int, int], list[dict[str, str]]], layer: int, col: str) -> int:
    """The head of layer with the largest mean of col over the eighths."""
    return max((sum(eighths(rs, col)) / 8, h) for (l, h), rs in by.items() if l == layer)[1]


def main(names: list[str]) -> None:
    for name in names:
        by = table(f"{name}/profile.csv")
        last = max(l for l, _ in by)
        h1 = best(by, 1, "rel_1")
        print(f"{name}: layer 1 head {h1}, mass on i-1 by eighth of the window:",
              " ".join(f"{x:.2f}" for x in eighths(by[(1, h1)], "rel_1")))
        h2 = best(by, last, "suffix1_2")
        for k in (1, 2, 3):
            print(f"{name}: layer {last} head {h2}, mass on suffix matches k={k} (offset 1) by eighth:",
                  " ".join(f"{x:.2f}" for x in eighths(by[(last, h2)], f"suffix1_{k}")))


if __name__ == "__main__":
    main(sys.argv[1:])
