"""Each layer-1 head's dominant relative offset by eighth of the window.

Usage (in a directory holding NAME/profile.csv, written by
`vomc attention --profile NAME/profile.csv`):
    python3 by_offset.py x4s0 x4s1

For every layer-1 head it prints, per eighth of the N = 512 positions, the
offset d (attention on key q−d, d = 0..6) with the largest mean mass and
that mass, and, per model, at how many query positions of 448..510 some
layer-1 head has a mean mass ≥ 0.9 on key q−1, and which heads.
"""
import csv
import sys

N = 512


def main(names: list[str]) -> None:
    for name in names:
        by: dict[tuple[int, int], list[dict[str, str]]] = {}
        for r in csv.DictReader(open(f"{name}/profile.csv")):
            by.setdefault((int(r["layer"]), int(r["head"])), []).append(r)
        heads = sorted(h for l, h in by if l == 1)
        print(name)
        for h in heads:
            rs = by[(1, h)]
            cells = []
            for e in range(8):
                seg = [r for r in rs if int(r["position"]) * 8 // N == e]
                mass = {d: sum(float(r[f"rel_{d}"]) for r in seg if r[f"rel_{d}"] != "") / len(seg) for d in range(7)}
                d = max(mass, key=mass.get)
                cells.append(f"d={d}:{mass[d]:.2f}")
            print(f"  layer 1 head {h}:", " ".join(cells))
        prev = {h: {int(r["position"]): float(r["rel_1"]) for r in by[(1, h)] if r["rel_1"] != ""} for h in heads}
        late = range(448, 511)
        held = {q: [h for h in heads if prev[h].get(q, 0) >= 0.9] for q in late}
        counts = {h: sum(1 for q in late if h in held[q]) for h in heads}
        print(f"  positions 448..510 with some layer-1 head ≥ 0.9 on q−1: {sum(1 for q in late if held[q])} of {len(late)};",
              "per head:", ", ".join(f"head {h} {c}" for h, c in counts.items()),
              f"| position 511: {max(prev[h].get(511, 0) for h in heads):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
