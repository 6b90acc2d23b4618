"""The training CLI (`python -m vomc_torch train`), run as a child process:
a run killed by SIGKILL, or stopped by SIGINT / SIGTERM, resumes to exactly
the parameters and log of an uninterrupted run; a diverging run exits 3
keeping its last checkpoint; bad flags and data exit 2 leaving --out as it
was; vomc (Go) reads the model the engine writes."""
from __future__ import annotations

import json
import math
import signal
import subprocess
import time
from pathlib import Path
from typing import List

import numpy as np
import pytest
import torch

from conftest import DS, cli, cli_popen
from vomc_torch import stfile
from vomc_torch.__main__ import main
from vomc_torch.train import load_model_file

STEPS = 300
# A transformer of 1 layer, E=8 on testdata/ds (11 training trees, 44 windows: 11 steps an epoch),
# logs and checkpoints at steps coprime with the epoch, so that checkpoints hold partial sums.
TRAIN = ["--data", str(DS), "--layers", "1", "--heads", "2", "-E", "8", "--batch", "4", "--warmup", "5",
         "--max-steps", str(STEPS), "--log-every", "3", "--checkpoint-every", "7", "--seed", "3"]
ENGINE = ["--threads", "1", "--device", "cpu", "--quiet"]


def ckpt_state(out: Path) -> dict:
    """The state of out's checkpoint ({} when there is none yet)."""
    try:
        meta, _ = stfile.load(str(out / "checkpoint.safetensors"))
    except FileNotFoundError:
        return {}
    return json.loads(meta["state"])


def log_steps(out: Path) -> List[dict]:
    """The entries of train.jsonl without their timings (and without the engine's lines)."""
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s")} for r in rows if "step" in r]


def model_tensors(out: Path) -> dict:
    return stfile.load(str(out / "model.safetensors"))[1]


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of TRAIN."""
    out = tmp_path_factory.mktemp("ref") / "run"
    r = cli("train", "--out", out, *TRAIN, *ENGINE)
    assert r.returncode == 0, r.stderr
    return out


def test_reference_run(reference_run: Path) -> None:
    """The run stopped early (patience 15) before STEPS, logged every third
    step and every epoch end, and its model, vomc's transformer file, holds
    the best parameters."""
    st = ckpt_state(reference_run)
    assert st["stopped"] and st["step"] < STEPS and st["since_best"] == 15
    steps = log_steps(reference_run)
    assert [e["step"] for e in steps if not e.get("epoch_end")] == [s for s in range(3, st["step"], 3) if s % 11]
    assert [e["step"] for e in steps if e.get("epoch_end")] == list(range(11, st["step"] + 1, 11))
    assert steps[-1]["train_loss"] < steps[0]["train_loss"]  # it learned something
    model, cfg = load_model_file(str(reference_run / "model.safetensors"))
    assert cfg["layers"] == 1 and cfg["alphabet"] == 3 and cfg["context"] == 16
    _, ct = stfile.load(str(reference_run / "checkpoint.safetensors"))
    flat = np.concatenate([t.reshape(-1) for t in model_tensors(reference_run).values()])
    assert np.array_equal(flat, ct["best_params"]) and not np.array_equal(flat, ct["params"])


def stop_at(out: Path, step: int, sig: signal.Signals) -> subprocess.Popen:
    """Start TRAIN in out, send sig once its checkpoint reaches step, wait for the end."""
    p = cli_popen("train", "--out", out, *TRAIN, *ENGINE)
    deadline = time.monotonic() + 120
    while ckpt_state(out).get("step", -1) < step:
        if p.poll() is not None:
            pytest.fail(f"the run ended (status {p.returncode}) before step {step}: {p.stderr.read()}")
        if time.monotonic() > deadline:
            p.kill()
            pytest.fail(f"no checkpoint at step {step} within 120 s")
        time.sleep(0.005)
    p.send_signal(sig)
    p.wait(120)
    p.stderr_text = p.stderr.read()
    p.stderr.close()
    return p


@pytest.mark.parametrize("sig,status,step", [(signal.SIGKILL, -signal.SIGKILL, 14), (signal.SIGINT, 130, 56),
                                             (signal.SIGTERM, 130, 126)], ids=["SIGKILL", "SIGINT", "SIGTERM"])
def test_stop_and_resume(tmp_path: Path, reference_run: Path, sig: signal.Signals, status: int, step: int) -> None:
    """Stopped mid-run (mid-epoch; at 56 and 126 with epochs since the best
    validation loss) and resumed with --resume: the same model, bit for bit,
    and the same log as the uninterrupted run (CPU torch is deterministic
    for these operations)."""
    out = tmp_path / "run"
    p = stop_at(out, step, sig)
    assert p.returncode == status, p.stderr_text
    st = ckpt_state(out)
    assert step <= st["step"] < ckpt_state(reference_run)["step"], "not stopped mid-run"
    assert not (out / "model.safetensors").exists()
    if sig != signal.SIGKILL:
        assert f"interrupted ({sig.name})" in p.stderr_text and "--resume" in p.stderr_text
    r = cli("train", "--out", out, "--resume", *ENGINE)
    assert r.returncode == 0, r.stderr
    want, got = model_tensors(reference_run), model_tensors(out)
    assert list(got) == list(want)
    for name in want:
        assert np.array_equal(got[name], want[name]), name
    assert (out / "model.safetensors").read_bytes() == (reference_run / "model.safetensors").read_bytes()
    assert log_steps(out) == log_steps(reference_run)
    assert not [f.name for f in out.iterdir() if f.name.startswith(".")]  # no temporaries left


def test_diverged(tmp_path: Path) -> None:
    """lr 1e30 without LayerNorm or clipping overflows float32 at the second
    step: exit 3, the checkpoint of the last good step is kept, no model."""
    out = tmp_path / "run"
    r = cli("train", "--out", out, "--data", DS, "--layers", "1", "--heads", "2", "-E", "8", "--batch", "4",
            "--no-layernorm", "--lr", "1e30", "--min-lr", "0", "--wd", "0", "--clip", "0", "--warmup", "0",
            "--max-steps", "50", "--checkpoint-every", "1", *ENGINE)
    assert r.returncode == 3, r.stderr
    assert "training diverged at step" in r.stderr and "last good checkpoint" in r.stderr
    at = int(r.stderr.split("training diverged at step ")[1].split(":")[0])
    st = ckpt_state(out)
    assert st["step"] == at - 1 >= 1
    _, t = stfile.load(str(out / "checkpoint.safetensors"))
    assert np.isfinite(t["params"]).all() and np.abs(t["params"]).max() > 1e20
    assert not (out / "model.safetensors").exists()


BAD = [
    (["--val-frac", "1.5"], "--val-frac 1.5 outside"),
    (["--val-frac", "0.99"], "leaves no training trees"),
    (["--heads", "3"], "heads [3]"),
    (["--batch", "0"], "batch_size 0"),
    (["--lr", "-1"], "lr -1"),
    (["--min-lr", "1"], "min_lr 1"),
    (["--epochs", "0"], "epochs 0"),
    (["-N", "1"], "-N 1 outside 2..16"),
    (["-N", "17"], "-N 17 outside 2..16"),
    (["--arch", "nosuch"], "unknown arch 'nosuch'"),
    (["--amp", "fp8"], "--amp 'fp8'"),
    (["--checkpoint-every", "-1"], "--checkpoint-every -1"),
    (["--device", "tpu"], "--device 'tpu'"),
    (["--data", "/nonexistent/ds"], "/nonexistent/ds: not a directory"),
]


@pytest.mark.parametrize("flags,message", BAD, ids=[" ".join(f) for f, _ in BAD])
def test_bad_flags(tmp_path: Path, capsys: pytest.CaptureFixture, flags: List[str], message: str) -> None:
    """Exit status 2, a message naming the problem, nothing in --out (in process: main())."""
    out = tmp_path / "run"
    base = ["--data", str(DS), "--layers", "1", "--heads", "2", "-E", "8", "--batch", "4", "--max-steps", "2", "--quiet"]
    assert main(["train", "--out", str(out), *base, *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_bad_flag_keeps_existing_out(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A failing start in an existing directory leaves it as it was."""
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["train", "--out", str(out), "--data", str(DS), "-N", "40", "--quiet"]) == 2
    assert [f.name for f in out.iterdir()] == ["notes.txt"]


def test_argparse_error(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["train", "--out", str(tmp_path / "run"), "--act", "tanh"])
    assert e.value.code == 2 and "--act" in capsys.readouterr().err


def test_corrupt_data_child(tmp_path: Path, ds_copy: Path) -> None:
    """The child process exits 2 on a corrupt data set, naming it, writing nothing."""
    b = bytearray((ds_copy / "symbols.bin").read_bytes())
    b[0] = (b[0] + 1) % 3
    (ds_copy / "symbols.bin").write_bytes(bytes(b))
    out = tmp_path / "run"
    r = cli("train", "--out", out, "--data", ds_copy, *ENGINE)
    assert r.returncode == 2
    assert "symbols.bin is corrupt" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_existing_run_refused(reference_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A new run into a run directory is refused without --force, touching nothing."""
    out = tmp_path / "run"
    out.mkdir()
    for f in ("config.json", "model.safetensors"):
        (out / f).write_bytes((reference_run / f).read_bytes())
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    assert main(["train", "--out", str(out), "--data", str(DS), "--quiet"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before


def test_go_reads_the_model(reference_run: Path, vomc_bin: Path) -> None:
    """vomc (Go) loads the engine's model.safetensors, checksum verified, and
    computes the same logits (`vomc bench logits`, within 1e-5)."""
    x = [0, 2, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2, 2, 0, 1, 1]
    r = subprocess.run([str(vomc_bin), "bench", "logits", "--model", str(reference_run / "model.safetensors"),
                        "--input", ",".join(map(str, x))], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr
    go = np.array(json.loads(r.stdout)["logits"], dtype=np.float32)
    model, _ = load_model_file(str(reference_run / "model.safetensors"))
    with torch.no_grad():
        torch_logits = model(torch.tensor([x])).numpy()[0]
    assert go.shape == (16, 3)
    assert np.abs(go - torch_logits).max() <= 1e-5
