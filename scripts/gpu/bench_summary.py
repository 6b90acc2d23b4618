"""Summarise cpu_bench16.sh's reports: median tokens/s per engine, ratio, paired ratios.

Reads DIR/t{T}-{go,torch}-r{R}.json (each a `vomc bench train --json` list of
reports) and prints one row per (threads, config): the Go engine's and the
torch engine's median tokens/s over their repetitions, the ratio of the
medians, and the smallest and largest ratio of the runs paired by repetition
(rep r of Go against rep r of torch, run one after the other).
"""
import json
import statistics
import sys
from pathlib import Path


def load(d: Path) -> dict[tuple[int, str, str], dict[int, tuple[float, float]]]:
    """Map (threads, config, engine) to {rep: (tokens/s over the mean step, over the fastest step)}."""
    out: dict[tuple[int, str, str], dict[int, tuple[float, float]]] = {}
    for f in sorted(d.glob("t*-*-r*.json")):
        try:
            t, engine, rep = f.stem.split("-")
            key, r = int(t[1:]), int(rep[1:])
            pairs = tokens_per_s(json.loads(f.read_text()))
        except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
            print(f"skipping {f.name}: {e!r}")
            continue
        for cfg, tps in pairs:
            out.setdefault((key, cfg, engine), {})[r] = tps
    return out


def tokens_per_s(reports: list[dict]) -> list[tuple[str, tuple[float, float]]]:
    """(config, (tokens/s of the mean step, of the fastest step)) of each
    report: the Go engine's reports name the config and give tokens_per_s,
    mean_step_ns and min_step_ns; the torch engine's give per config a list
    of reports by mode, of which the engine's own ("engine") is taken, with
    mean_step_s and min_step_s."""
    out = []
    for r in reports:
        if "name" in r:
            tps = float(r["tokens_per_s"])
            out.append((r["name"], (tps, tps * r["mean_step_ns"] / r["min_step_ns"])))
            continue
        for m in r.get("reports", []):
            if m.get("mode") == "engine":
                tps = float(m["tokens_per_s"])
                out.append((r["config"], (tps, tps * m["mean_step_s"] / m["min_step_s"])))
    return out


def summarise(runs: dict[tuple[int, str, str], dict[int, tuple[float, float]]]) -> list[str]:
    """Rows of the table, by threads then config: medians of the tokens/s
    over the mean step, their ratio, the range of the paired ratios, and
    the ratio of the fastest steps of all repetitions."""
    rows = ["threads config  go tokens/s (n)   torch tokens/s (n)  go/torch  paired min..max  fastest steps"]
    for t, cfg in sorted({(t, c) for t, c, _ in runs}):
        go, pt = runs.get((t, cfg, "go"), {}), runs.get((t, cfg, "torch"), {})
        if not go or not pt:
            rows.append(f"{t:7d} {cfg:6s}  incomplete (go {len(go)}, torch {len(pt)} runs)")
            continue
        mg, mp = statistics.median(v[0] for v in go.values()), statistics.median(v[0] for v in pt.values())
        paired = [go[r][0] / pt[r][0] for r in sorted(go) if r in pt]
        rng = f"{min(paired):.2f}..{max(paired):.2f}" if paired else "-"
        best = max(v[1] for v in go.values()) / max(v[1] for v in pt.values())
        rows.append(f"{t:7d} {cfg:6s} {mg:12,.0f} ({len(go)}) {mp:14,.0f} ({len(pt)}) {mg / mp:8.2f}×  {rng:15s} {best:.2f}×")
    return rows


if __name__ == "__main__":
    print("\n".join(summarise(load(Path(sys.argv[1])))))
