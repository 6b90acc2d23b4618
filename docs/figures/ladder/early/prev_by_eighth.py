"""Best layer-1 head's mean weight on key q-1, by eighth of the window.

Reads the ladder's profile stages (profile.json: per layer-1 head, the mean
attention weight on the previous key at each query position over the first
100 test windows) and prints, per model, the mean over each eighth of the
window of the best head's weight at each position (the window's last
position, which has no training target, left out), (B')'s least weight
over positions 448..510 with the heads that are best and >= 0.9 there, and
criterion (B) as written: the largest, over the heads, of a head's least
weight over positions 448..511 (>= 0.9: (B) holds), and the best head's
weight at position 511.

    python3 prev_by_eighth.py ../run/stages > prev_by_eighth.txt
"""
import glob
import json
import sys


def main(stages: str) -> None:
    files = sorted(glob.glob(f"{stages}/profile-*/profile.json"))
    if not files:
        raise SystemExit(f"prev_by_eighth.py: no profile-*/profile.json under {stages} (they are git-ignored: "
                         "run scripts/ladder.sh finish first)")
    print(f"{'model':30s} {'0-63 … 448-511 (best head, mean per eighth; 448-510 in the last)':66s} least 448..510  heads    (B) 448..511  at 511")
    for f in files:
        p = json.load(open(f))
        prev = p["prev"]
        n = len(prev[0])
        best = [max(h[q] for h in prev) for q in range(n)]
        arg = [1 + max(range(len(prev)), key=lambda h: prev[h][q]) for q in range(n)]
        size = n // 8
        eighths = []
        for e in range(8):
            qs = range(max(1, e * size), min((e + 1) * size, n - 1))  # not q = n-1: untrained
            eighths.append(sum(best[q] for q in qs) / len(qs))
        late = range(n - 64, n - 1)
        heads = sorted(set(arg[q] for q in late if best[q] >= 0.9))
        b = max(min(h[q] for q in range(n - 64, n)) for h in prev)
        print(f"{p['model']:30s} {' '.join(f'{x:.2f}' for x in eighths):66s} {min(best[q] for q in late):.3f}          {str(heads):8s} {b:.3f}         {best[n - 1]:.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: prev_by_eighth.py STAGES (e.g. docs/figures/ladder/run/stages)")
    main(sys.argv[1])
