"""Item 2: errors are Python exceptions with vomc's message; a bad array or
a panic in Go never kills the interpreter; Ctrl-C stops a long call."""
from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import vomc
from vomc import _lib


@pytest.fixture(scope="module")
def ds():
    return vomc.Prior(A=3, depths=3).dataset(K=6, N=32, seed=3)


def test_bad_windows(ds):
    x = ds.symbols
    with pytest.raises(TypeError, match="dtype float64"):
        vomc.predict("ctw", x.astype(np.float64))
    with pytest.raises(ValueError, match="window 2 position 5: symbol 3 outside the alphabet 0..2"):
        y = x.copy()
        y[2, 5] = 3
        vomc.predict("ctw", y, alphabet=3)
    with pytest.raises(ValueError, match="symbol -1"):
        vomc.predict("ctw", x.astype(np.int64) - 1, alphabet=3)
    with pytest.raises(ValueError, match="shape"):
        vomc.predict("ctw", x[None], alphabet=3)
    # a non-contiguous view is copied, not read past its strides
    assert np.array_equal(vomc.predict("ctw", np.asfortranarray(x), alphabet=3), vomc.predict("ctw", x, alphabet=3))
    assert np.array_equal(vomc.predict("ctw", x[:, ::2], alphabet=3), vomc.predict("ctw", x[:, ::2].copy(), alphabet=3))


def test_bad_probabilities(ds):
    p = vomc.predict("ctw", ds)
    cases = [
        (p.astype(np.int64), TypeError, "dtype int64"),
        (p[:, :-1], ValueError, "shape"),
        (np.where(np.arange(3) == 0, np.nan, p), ValueError, "nan"),
        (p * 1.1, ValueError, "mine: window 0 position 0: the row sums to 1.1"),
    ]
    for arr, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            vomc.evaluate(ds, {"mine": arr}, reference="bayes")
    z = p.copy()
    z[1, 3, :] = 0
    z[1, 3, (ds.symbols[1, 3] + 1) % 3] = 1
    with pytest.raises(ValueError, match="probability 0 for the observed symbol"):
        vomc.evaluate(ds, {"mine": z})
    assert vomc.evaluate(ds, {"mine": p[:, :, :].T.copy().T}).windows == 6  # Fortran order: copied


def test_bad_attention(ds):
    a = np.full((6, 1, 2, 32, 32), 1 / 32, dtype=np.float32)
    with pytest.raises(ValueError, match="shape"):
        vomc.label_heads(ds, a[:, :, :, :, :-1])
    b = a.copy()
    b[0, 0, 1, 4, 2] = np.nan
    with pytest.raises(ValueError, match="not a"):
        vomc.label_heads(ds, b)
    with pytest.raises(ValueError, match="sums to"):
        vomc.label_heads(ds, a * 2)


def test_vomc_messages_and_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="none"):
        vomc.Dataset.read(str(tmp_path / "none"))
    with pytest.raises(FileNotFoundError):
        vomc.explore(str(tmp_path / "none"), str(tmp_path / "none"))
    with pytest.raises(ValueError, match="did you mean"):
        vomc.predict("markvo:k=2", np.zeros((1, 4), np.uint8), alphabet=2)


def test_panic_is_an_exception():
    with pytest.raises(vomc.VomcError, match="internal error in panic: assignment to entry in nil map"):
        _lib.call("panic", {})
    assert vomc.version()["go"].startswith("go")  # the library lives on


@pytest.mark.parametrize("where,message", [
    ("predict", "internal error in panic: distributions: panicky on window"),
    ("evaluate", "internal error in panic: eval: panic: assignment to entry in nil map"),
])
def test_panic_on_a_worker_is_an_exception(where, message):
    # a predictor's bug on a worker goroutine of methods.Distributions or
    # eval.Evaluate: the call raises, with the worker's stack, and the
    # interpreter lives on
    with pytest.raises(vomc.VomcError, match=message) as e:
        _lib.call("panic", {"in": where})
    assert "goroutine stack of the panic" in str(e.value) and "panicky.Predict" in str(e.value)
    assert vomc.predict("ctw", np.zeros((2, 8), np.uint8), alphabet=2).shape == (2, 8, 2)


def test_ctrl_c_stops_a_long_call():
    x = np.random.default_rng(0).integers(0, 3, size=(4000, 1024), dtype=np.uint8)
    t0 = time.monotonic()
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        vomc.predict("ctw:D=16", x, alphabet=3, workers=1)
    took = time.monotonic() - t0
    timer.cancel()
    assert took < 10, f"the call stopped {took:.1f} s after it began (Ctrl-C at 0.5 s)"
    assert vomc.predict("ctw", x[:2], alphabet=3).shape == (2, 1024, 3)
