#!/usr/bin/env python3
"""The growing "excess over Bayes against training tokens" table and figure of a paper-shape run.

    python3 docs/figures/paper_shape_gpu/device/curve.py RUN [--windows 57000] [--N 1536]

RUN is a run directory of continue.sh (docs/figures/paper_shape_gpu/ckpt/NAME): its evals/step-S/ and
evals/final/ hold `vomc eval` outputs (results.json, format vomc-eval/1), one per device call. This
script only reads those numbers — every loss, interval and paired excess is vomc's — and writes beside
them RUN/curve.csv, RUN/curve.md (the table) and RUN/curve.svg (the figure). Units: nats/symbol.

Tokens at step S: the windows seen by S optimiser steps of batch B over an epoch of W windows (the
last batch of an epoch holds what is left), times the window length N; B is read from the run's
train_config.json, W and N are the data set's (57,000 training windows of 1,536 symbols for the
paper-shape data). The final model (best validation parameters) is placed at the run's last step.
"""
import argparse
import csv
import glob
import json
import math
import os
import sys


def windows_seen(step: int, batch: int, windows: int) -> int:
    """Windows consumed by `step` steps of `batch` over epochs of `windows` windows."""
    per_epoch = -(-windows // batch)
    full, rest = divmod(step, per_epoch)
    return full * windows + min(rest * batch, windows)


def last_step(run: str) -> int:
    step = 0
    with open(os.path.join(run, "train.jsonl")) as f:
        for line in f:
            line = line.strip()
            if line:
                step = max(step, int(json.loads(line)["step"]))
    return step


def read_eval(path: str) -> dict:
    with open(path) as f:
        r = json.load(f)
    if r.get("format") != "vomc-eval/1":
        raise SystemExit(f"{path}: not a vomc eval results file (format {r.get('format')!r})")
    if not r["config"]["reference"].startswith("Bayes"):
        raise SystemExit(f"{path}: the reference is {r['config']['reference']!r}, not the Bayes predictor")
    return r


def rows_of(run: str, batch: int, windows: int, n: int) -> list:
    rows = []
    for d in sorted(glob.glob(os.path.join(run, "evals", "*"))):
        name = os.path.basename(d)
        if name.startswith("step-"):
            step, kind = int(name[5:]), "checkpoint"
        elif name == "final":
            step, kind = last_step(run), "final (best validation)"
        else:
            continue
        r = read_eval(os.path.join(d, "results.json"))
        ms = {m["name"]: m for m in r["methods"]}
        tf = [m for m in r["methods"] if m["name"].startswith("TF(")]
        if len(tf) != 1:
            raise SystemExit(f"{d}: want one transformer among the methods, found {len(tf)}")
        row = {"step": step, "kind": kind, "tokens": windows_seen(step, batch, windows) * n,
               "model": tf[0]["name"]}
        for label, m in [("tf", tf[0])] + [(k, v) for k, v in ms.items() if not k.startswith(("TF(", "Bayes"))]:
            e = m["excess_second_half"]
            key = "tf" if label == "tf" else label.split("(")[0].lower() + ("" if "k=" not in label else label.split("k=")[1].split(",")[0])
            row[key] = e["mean"]
            if label == "tf":
                row["tf_lo"], row["tf_hi"] = e["lo"], e["hi"]
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], r["kind"]))
    return rows


def write_table(run: str, rows: list) -> None:
    refs = [k for k in rows[0] if k not in ("step", "kind", "tokens", "model", "tf", "tf_lo", "tf_hi")]
    with open(os.path.join(run, "curve.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "kind", "tokens", "tf_excess", "tf_lo", "tf_hi"] + [r + "_excess" for r in refs])
        for r in rows:
            w.writerow([r["step"], r["kind"], r["tokens"], repr(r["tf"]), repr(r["tf_lo"]), repr(r["tf_hi"])] +
                       [repr(r[k]) for k in refs])
    with open(os.path.join(run, "curve.md"), "w") as f:
        f.write(f"Second-half excess over the Bayes predictor (nats/symbol, 95% interval across the test windows) of "
                f"{rows[-1]['model'].split('@')[0]} in {os.path.basename(os.path.normpath(run))}, by training tokens; "
                f"the references' excess on the same windows: " +
                ", ".join(f"{k} {rows[-1][k]:.4f}" for k in refs) + ". Written by device/curve.py.\n\n")
        f.write("| step | evaluated | tokens | excess over Bayes |\n|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['step']} | {r['kind']} | {r['tokens']:.3e} | {r['tf']:.4f} [{r['tf_lo']:.4f}, {r['tf_hi']:.4f}] |\n")


def write_svg(run: str, rows: list) -> None:
    W, H, L, R, T, B = 640, 400, 70, 150, 30, 50
    xs = [math.log10(r["tokens"]) for r in rows if r["tokens"] > 0]
    refs = [k for k in rows[0] if k not in ("step", "kind", "tokens", "model", "tf", "tf_lo", "tf_hi")]
    ys = [r["tf_hi"] for r in rows] + [r["tf_lo"] for r in rows] + [rows[-1][k] for k in refs] + [0.0]
    x0, x1 = (min(xs) - 0.1, max(xs) + 0.1) if xs else (0, 1)
    y0, y1 = min(ys), max(ys) * 1.05 + 1e-9
    px = lambda v: L + (v - x0) / (x1 - x0) * (W - L - R)
    py = lambda v: H - B - (v - y0) / (y1 - y0) * (H - T - B)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="13">{os.path.basename(os.path.normpath(run))}: '
           f'second-half excess over Bayes against training tokens</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">training tokens (log scale)</text>',
           f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 16 {(T + H - B) / 2})">'
           f'excess over Bayes (nats/symbol)</text>']
    for e in range(math.floor(x0), math.ceil(x1) + 1):  # ticks at 1, 2, 5 × 10^e
        for m in (1, 2, 5):
            v = e + math.log10(m)
            if x0 <= v <= x1:
                out.append(f'<line x1="{px(v):.1f}" y1="{H - B}" x2="{px(v):.1f}" y2="{H - B + 4}" stroke="black"/>'
                           f'<text x="{px(v):.1f}" y="{H - B + 16}" text-anchor="middle">{m}e{e}</text>')
    for i in range(6):
        v = y0 + (y1 - y0) * i / 5
        out.append(f'<text x="{L - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.3f}</text>'
                   f'<line x1="{L}" y1="{py(v):.1f}" x2="{W - R}" y2="{py(v):.1f}" stroke="#ddd"/>')
    for k in refs:  # the references' levels (the latest evaluation's numbers)
        v = rows[-1][k]
        out.append(f'<line x1="{L}" y1="{py(v):.1f}" x2="{W - R}" y2="{py(v):.1f}" stroke="#888" stroke-dasharray="4 3"/>'
                   f'<text x="{W - R + 4}" y="{py(v) + 4:.1f}" fill="#555">{k}</text>')
    pts = [(px(math.log10(r["tokens"])), r) for r in rows if r["tokens"] > 0]
    if len(pts) > 1:
        out.append('<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="' +
                   " ".join(f"{x:.1f},{py(r['tf']):.1f}" for x, r in pts) + '"/>')
    for x, r in pts:
        c = "#d62728" if r["kind"].startswith("final") else "#1f77b4"
        out.append(f'<line x1="{x:.1f}" y1="{py(r["tf_lo"]):.1f}" x2="{x:.1f}" y2="{py(r["tf_hi"]):.1f}" stroke="{c}"/>'
                   f'<circle cx="{x:.1f}" cy="{py(r["tf"]):.1f}" r="3" fill="{c}"/>')
    out.append("</svg>\n")
    with open(os.path.join(run, "curve.svg"), "w") as f:
        f.write("\n".join(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", help="run directory with evals/ and train_config.json")
    ap.add_argument("--windows", type=int, default=57000, help="training windows per epoch")
    ap.add_argument("--N", type=int, default=1536, help="window length (symbols)")
    a = ap.parse_args()
    try:
        with open(os.path.join(a.run, "train_config.json")) as f:
            batch = int(json.load(f)["train"]["batch_size"])
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"curve.py: {a.run}: cannot read the batch size from train_config.json: {e}")
    rows = rows_of(a.run, batch, a.windows, a.N)
    if not rows:
        sys.exit(f"curve.py: {a.run}: no evaluations under evals/ (continue.sh writes them)")
    write_table(a.run, rows)
    write_svg(a.run, rows)
    print(f"wrote {a.run}/curve.csv, curve.md, curve.svg ({len(rows)} evaluations)")


if __name__ == "__main__":
    main()
