"""Speed of the vomc package against the command line, measured in one run
(ratios: the machine may be loaded).  Not a test: run it by hand,

    VOMC_LIB=libvomc.so python3 python/tests_vomc/bench_vomc.py --vomc ./vomc [--windows 1000 --N 512]

It prints: the per-call overhead of libvomc (a trivial call, through the
worker thread that makes Ctrl-C work, and bare ctypes); the round trip of a
pipe to a child process (what a long-lived vomc process speaking a binary
protocol would add per call, and per 12 MB array each way); vomc.predict
("ctw:D=5") on W windows of N against `vomc eval --methods ctw:D=5
--export` (the distributions the CLI writes, with its evaluation) and
against the same outputs in Python (predict + evaluate); vomc.evaluate on
(W, N, 3) arrays.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import vomc  # noqa: E402
from vomc import _lib  # noqa: E402


def best(f, repeat: int = 3) -> float:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def per_call(n: int = 2000) -> None:
    vomc.version()
    t = time.perf_counter()
    for _ in range(n):
        vomc.version()
    threaded = (time.perf_counter() - t) / n
    L = _lib.lib()
    t = time.perf_counter()
    for i in range(n):
        L.raw("version", b"{}", [], 10**9 + i)
    bare = (time.perf_counter() - t) / n
    print(f"libvomc per call (version): {threaded * 1e6:.0f} µs through vomc's call (worker thread, JSON), "
          f"{bare * 1e6:.0f} µs bare ctypes")


def pipe_round_trip(n: int = 2000) -> None:
    """A child echoing what it reads (cat): the least a call to a long-lived
    process costs, before any decoding."""
    p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    msg = b"x" * 64
    t = time.perf_counter()
    for _ in range(n):
        p.stdin.write(msg)
        got = b""
        while len(got) < len(msg):
            got += p.stdout.read(len(msg) - len(got))
    small = (time.perf_counter() - t) / n
    big = np.zeros(1000 * 512 * 3).tobytes()  # 12.3 MB: one (1000, 512, 3) float64 array
    t = time.perf_counter()
    import threading
    w = threading.Thread(target=lambda: p.stdin.write(big))
    w.start()
    got = 0
    while got < len(big):
        got += len(p.stdout.read(min(1 << 20, len(big) - got)))
    w.join()
    arr = time.perf_counter() - t
    p.stdin.close()
    p.wait()
    print(f"pipe to a child process: {small * 1e6:.0f} µs per 64-byte round trip; {arr * 1e3:.1f} ms to send and "
          f"receive one 12.3 MB array (a binary protocol's floor; the in-process library passes a pointer)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vomc", required=True, help="the vomc binary")
    ap.add_argument("--windows", type=int, default=1000)
    ap.add_argument("--N", type=int, default=512)
    a = ap.parse_args()
    print(f"libvomc {vomc.find_library()}, {os.cpu_count()} CPUs, load average {os.getloadavg()}")
    per_call()
    pipe_round_trip()
    tmp = Path(tempfile.mkdtemp(prefix="vomc-bench-"))
    data = tmp / "data"
    subprocess.run([a.vomc, "data", "-A", "3", "-D", "5", "-K", str(a.windows), "-N", str(a.N), "--seed", "1",
                    "--out", str(data)], check=True, capture_output=True)
    ds = vomc.Dataset.read(str(data))

    def cli():
        subprocess.run([a.vomc, "eval", "--data", str(data), "--methods", "ctw:D=5", "--export", str(tmp / "exp"),
                        "--out", str(tmp / "out"), "--force"], check=True, capture_output=True)

    def py_predict():
        vomc.predict("ctw:D=5", ds)

    def py_same_outputs():
        d = vomc.Dataset.read(str(data))
        p = vomc.predict("ctw:D=5", d)
        vomc.evaluate(d, {"ctw": p}, reference=None)
        np.save(tmp / "ctw.npy", p)

    probs = vomc.predict("ctw:D=5", ds)
    other = vomc.predict("markov:k=2", ds)

    def py_eval():
        vomc.evaluate(ds.symbols, {"mine": probs, "other": other}, reference="mine", alphabet=3)

    def py_eval_one():
        vomc.evaluate(ds.symbols, {"mine": probs}, reference=None, alphabet=3)

    t_cli = best(cli)
    t_pred = best(py_predict)
    t_same = best(py_same_outputs)
    t_eval1 = best(py_eval_one)
    t_eval2 = best(py_eval)
    W, N = ds.symbols.shape
    print(f"{W} windows of N={N}, A=3:")
    print(f"  vomc eval --methods ctw:D=5 --export (CLI, process and all): {t_cli:.3f} s")
    print(f"  vomc.predict('ctw:D=5'):                                 {t_pred:.3f} s  ({t_pred / t_cli:.2f}× the CLI)")
    print(f"  read + predict + evaluate + np.save (the CLI's outputs):   {t_same:.3f} s  ({t_same / t_cli:.2f}× the CLI)")
    print(f"  vomc.evaluate of one (W, N, 3) array:                     {t_eval1:.3f} s")
    print(f"  vomc.evaluate of two arrays, one the reference:           {t_eval2:.3f} s")


if __name__ == "__main__":
    main()
