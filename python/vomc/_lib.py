"""The door to vomc's Go core: libvomc, a shared library built from
cmd/libvomc (``go build -buildmode=c-shared``) and loaded with ctypes.

Every call is ``call(op, request, arrays)``: the request is JSON, the arrays
are numpy arrays passed by pointer (read, or written in place, during the
call only), and the answer is the JSON result plus byte blobs.  The call
runs in a worker thread while the calling thread waits in short steps, so
that Ctrl-C (KeyboardInterrupt) cancels the Go call's context and the call
returns; errors come back as Python exceptions carrying vomc's message.

The library is found, in order: $VOMC_LIB; libvomc.so inside this package
(``pip install ./python`` puts it there); or, in a checkout of vomc with
``go`` on PATH, built into the user cache (``go build``, which is quick
once Go's build cache is warm).
"""
from __future__ import annotations

import ctypes
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

LIBNAME = {"darwin": "libvomc.dylib", "win32": "vomc.dll"}.get(sys.platform, "libvomc.so")


class VomcError(RuntimeError):
    """An internal error of vomc's Go core (a recovered panic): a bug to
    report; the interpreter and the library stay usable."""


_KINDS = {
    "value": ValueError,
    "not_found": FileNotFoundError,
    "exists": FileExistsError,
    "permission": PermissionError,
    "internal": VomcError,
}


def _checkout_root() -> Optional[Path]:
    """The root of the vomc checkout this package lies in, if any."""
    root = Path(__file__).resolve().parents[2]
    gomod = root / "go.mod"
    try:
        if gomod.is_file() and gomod.read_text().startswith("module github.com/vomc/vomc"):
            return root
    except OSError:
        pass
    return None


def _build_from_checkout(root: Path) -> Path:
    go = shutil.which("go")
    if go is None:
        raise ImportError(f"vomc: no {LIBNAME} installed and no `go` on PATH to build it from {root} "
                          "(install with `pip install ./python`, or set VOMC_LIB to a built library)")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vomc" / "libvomc"
    cache.mkdir(parents=True, exist_ok=True)
    out = cache / LIBNAME
    r = subprocess.run([go, "build", "-buildmode=c-shared", "-o", str(out), "./cmd/libvomc"],
                       cwd=root, capture_output=True, text=True)
    if r.returncode != 0:
        raise ImportError(f"vomc: building {LIBNAME} from {root} failed:\n{r.stderr.strip()}")
    return out


def find_library() -> Path:
    """The path of libvomc (see the module's documentation)."""
    env = os.environ.get("VOMC_LIB")
    if env:
        p = Path(env)
        if not p.is_file():
            raise ImportError(f"vomc: VOMC_LIB={env}: no such file")
        return p
    here = Path(__file__).resolve().parent / LIBNAME
    if here.is_file():
        return here
    root = _checkout_root()
    if root is not None:
        return _build_from_checkout(root)
    raise ImportError(f"vomc: {LIBNAME} is missing from {here.parent}: reinstall with `pip install ./python` "
                      "from a vomc checkout (it needs `go` on PATH), or set VOMC_LIB")


class _Lib:
    def __init__(self, path: Path) -> None:
        self.path = path
        lib = ctypes.CDLL(str(path))  # CDLL: the GIL is released during calls
        lib.vomc_call.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_longlong,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_longlong),
                                  ctypes.c_int, ctypes.c_longlong]
        lib.vomc_call.restype = ctypes.c_longlong
        lib.vomc_result.argtypes = [ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p, ctypes.c_longlong]
        lib.vomc_result.restype = ctypes.c_longlong
        lib.vomc_release.argtypes = [ctypes.c_longlong]
        lib.vomc_release.restype = None
        lib.vomc_cancel.argtypes = [ctypes.c_longlong]
        lib.vomc_cancel.restype = None
        self.lib = lib
        self.ids = itertools.count(1)

    def _part(self, h: int, i: int) -> bytes:
        n = self.lib.vomc_result(h, i, None, 0)
        if n < 0:
            raise VomcError(f"vomc: answer {h} has no part {i}")
        buf = ctypes.create_string_buffer(max(n, 1))
        self.lib.vomc_result(h, i, buf, n)
        return buf.raw[:n]

    def raw(self, op: str, req: bytes, arrays: Sequence[np.ndarray], cid: int) -> Tuple[dict, List[bytes]]:
        """One call on this thread: the answer's JSON and its blobs."""
        n = len(arrays)
        ptrs = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in arrays])
        lens = (ctypes.c_longlong * max(n, 1))(*[a.nbytes for a in arrays])
        h = self.lib.vomc_call(op.encode(), req, len(req), ptrs, lens, n, cid)
        try:
            head = json.loads(self._part(h, 0))
            blobs = []
            i = 1
            while True:
                if self.lib.vomc_result(h, i, None, 0) < 0:
                    break
                blobs.append(self._part(h, i))
                i += 1
        finally:
            self.lib.vomc_release(h)
        return head, blobs


_lib: Optional[_Lib] = None
_lock = threading.Lock()
_workers = None


def _pool():
    """The worker threads of calls (one per concurrent call, reused)."""
    global _workers
    if _workers is None:
        from concurrent.futures import ThreadPoolExecutor
        with _lock:
            if _workers is None:
                _workers = ThreadPoolExecutor(max_workers=32, thread_name_prefix="vomc")
    return _workers


def lib() -> _Lib:
    global _lib
    with _lock:
        if _lib is None:
            _lib = _Lib(find_library())
        return _lib


def call(op: str, req: dict, arrays: Sequence[np.ndarray] = ()) -> Tuple[Any, List[bytes]]:
    """Run operation op of libvomc: its result and blobs, or an exception.

    Every array must be C-contiguous (the callers check dtype and shape);
    the arrays are kept alive until the Go call has returned.  Ctrl-C while
    waiting cancels the call and raises KeyboardInterrupt once it stopped.
    """
    for a in arrays:
        if not a.flags.c_contiguous:
            raise ValueError("vomc: internal: a non-contiguous array reached the library")
    L = lib()
    body = json.dumps(req, allow_nan=False).encode()
    cid = next(L.ids)
    box: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["answer"] = L.raw(op, body, arrays, cid)
        except BaseException as e:  # noqa: BLE001 — handed to the caller
            box["exc"] = e
        finally:
            done.set()

    # On a pooled worker thread while this thread waits on an Event (not
    # Thread.join, which an interrupt can leave looking finished in CPython
    # 3.11), so that Ctrl-C here reaches vomc_cancel.
    _pool().submit(run)
    interrupted = False
    while not done.is_set():
        try:
            done.wait(0.05)
        except KeyboardInterrupt:
            interrupted = True
            L.lib.vomc_cancel(cid)
    if "exc" in box:
        raise box["exc"]
    head, blobs = box["answer"]
    if "error" in head:
        kind, msg = head.get("kind", "value"), head["error"]
        if kind == "cancelled" or interrupted:
            raise KeyboardInterrupt(f"vomc: {op} cancelled")
        raise _KINDS.get(kind, ValueError)(msg)
    if interrupted:
        raise KeyboardInterrupt(f"vomc: {op} cancelled")
    return head.get("result"), blobs
