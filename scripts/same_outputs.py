#!/usr/bin/env python3
"""same_outputs.py — says whether two 'vomc reproduce' output directories
hold the same bytes but for what a run cannot repeat: wall times
(elapsed_s, elapsed_ns, tokens_per_s, seconds, the report's time columns),
dates, the binary's own key (exe …), and the hashes and checksums derived
from files that hold them (done.json's output hashes, a checkpoint's
vomc.data_sha256). A safetensors file's tensor bytes must be identical; its
header is compared with those fields masked. The report's stage table may
list the stages in another order (as they finished).

    scripts/same_outputs.py A B

Prints a count of files, byte-identical and identical-but-for-those, and
every file that differs; exits 1 when one does. Used for refactorings that
must not change outputs (ARCHITECTURE.md, History): build the binary before
and after (scripts/build_head.sh), run 'vomc reproduce --preset tiny --out
OUT --code-key K' with each into the same OUT path (moving the first away
before the second run), then compare.
"""
import os
import re
import struct
import sys

KEYS = rb"elapsed_ns|elapsed_s|tokens_per_s|seconds|Seconds|earlier_seconds|finished|started|computed_by|generated|output_hash|vomc\.data_sha256"
MASKS = [
    (re.compile(rb'(\\?"(?:' + KEYS + rb')\\?":\s*)("[^"]*"|\\"[^\\]*\\"|[-0-9.e+]+)'), rb"\1X"),
    (re.compile(rb"exe [0-9a-f]{64}"), b"exe X"),
    (re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"), b"T"),
    (re.compile(rb"\| [0-9.]+ s \|"), b"| X s |"),
    (re.compile(rb"(\| [0-9a-f]{16} \| )[0-9.]+"), rb"\1X"),
    (re.compile(rb"(<code>[0-9a-f]{16}</code></td><td>)[0-9.]+"), rb"\1X"),
    (re.compile(rb"<td>[0-9.]+ s</td>"), b"<td>X s</td>"),
    (re.compile(rb"Stages took \d+ s \([0-9.]+ h\)"), b"Stages took X s (X h)"),
]


def norm(b):
    for p, r in MASKS:
        b = p.sub(r, b)
    return b


def files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def same(f, a, b):
    """Whether a and b, the bytes of file f in the two runs, agree but for
    the masked fields; "order" when only the order of lines differs."""
    if f.endswith(".safetensors"):
        na, nb = struct.unpack("<Q", a[:8])[0], struct.unpack("<Q", b[:8])[0]
        return a[8 + na:] == b[8 + nb:] and norm(a[8:8 + na]).rstrip(b" ") == norm(b[8:8 + nb]).rstrip(b" ")
    if f.endswith("done.json"):  # the hashes of outputs that hold wall times
        a, b = (re.sub(rb'"[0-9a-f]{64}"', b'"H"', x) for x in (a, b))
    a, b = norm(a), norm(b)
    if a == b:
        return True
    if os.path.basename(f) in ("report.txt", "report.html") and sorted(a.split(b"\n")) == sorted(b.split(b"\n")):
        return "order"
    return False


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: scripts/same_outputs.py A B")
    A, B = sys.argv[1:]
    fa, fb = files(A), files(B)
    if fa != fb:
        print("the file lists differ:", sorted(set(fa) ^ set(fb)))
        sys.exit(1)
    identical, masked, order, bad = 0, 0, [], []
    for f in fa:
        a, b = open(os.path.join(A, f), "rb").read(), open(os.path.join(B, f), "rb").read()
        if a == b:
            identical += 1
            continue
        r = same(f, a, b)
        if r == "order":
            order.append(f)
        elif r:
            masked += 1
        else:
            bad.append(f)
    print(f"{len(fa)} files: {identical} byte-identical, {masked + len(order)} identical but for wall times, dates and the binary's key, {len(bad)} differ")
    for f in order:
        print("  the stage table lists the stages in another order (as they finished):", f)
    for f in bad:
        print("  differs:", f)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
