"""vomc data sets, read from disk and split as vomc's Go engine splits them.

A data set (made by `vomc data`) is a directory with manifest.json (format
"vomc-dataset" version 1: parameters, the K trees, file names and SHA-256
checksums), symbols.bin (windows x N bytes, one symbol 0..A-1 per byte) and
tree_of.bin (the tree index of each window, int32 little-endian; window w
belongs to tree w // windows_per_tree).  read_dataset checks all of it.

Windows are what a run trains on, built from a run's data metadata exactly as
vomc's trainrun.Data builds them (see run_windows): the training set, a
validation set (another data set, or a fraction of the training trees drawn
as transformer.SplitByTree draws them), every window cut into windows of N
symbols, the training windows limited to the first max_windows.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np

from .gorand import perm

FORMAT_NAME = "vomc-dataset"
FORMAT_VERSION = 1


class DataError(ValueError):
    """A data set that cannot be used: missing, corrupt or inconsistent."""


@dataclass
class Dataset:
    """A data set: its manifest (without trees kept), symbols as a (W, N)
    uint8 array and the tree index of every window."""
    path: str
    manifest: dict
    symbols: np.ndarray  # (W, N) uint8
    tree_of: np.ndarray  # (W,) int32
    checksum: str  # SHA-256 of symbols.bin, as vomc's Dataset.Checksum

    @property
    def A(self) -> int:
        return int(self.manifest["prior"]["alphabet"])

    @property
    def N(self) -> int:
        return int(self.manifest["n"])

    @property
    def K(self) -> int:
        return int(self.manifest["k"])


def _read_exact(path: str, want: int, how: str) -> bytes:
    if not os.path.exists(path):
        raise DataError(f"{path} does not exist")
    if not os.path.isfile(path):
        raise DataError(f"{path} is not a regular file")
    got = os.path.getsize(path)
    if got != want:
        raise DataError(f"{path} is {'truncated' if got < want else 'too long'}: expected {want} bytes ({how}), got {got}")
    with open(path, "rb") as f:
        return f.read()


def read_dataset(path: str) -> Dataset:
    """Read and check the data set in directory path: the manifest's format,
    version and sizes, both files' lengths and SHA-256 checksums, every
    symbol below the alphabet size, and the tree index of every window."""
    mpath = os.path.join(path, "manifest.json")
    if not os.path.isdir(path):
        raise DataError(f"data set {path}: not a directory")
    try:
        with open(mpath, "rb") as f:
            m = json.load(f)
    except FileNotFoundError:
        raise DataError(f"data set {path}: no manifest.json (not a vomc data set)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"{mpath}: not valid JSON: {e}") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT_NAME:
        raise DataError(f"{mpath}: format {m.get('format') if isinstance(m, dict) else None!r}, want {FORMAT_NAME!r}")
    if m.get("version") != FORMAT_VERSION:
        raise DataError(f"{mpath}: version {m.get('version')!r}, this reader reads {FORMAT_VERSION}")
    try:
        A, N, K, W = int(m["prior"]["alphabet"]), int(m["n"]), int(m["k"]), int(m["windows_per_tree"])
        windows = int(m["windows"])
        sym_name, tree_name = m["symbols_file"], m["tree_of_file"]
        sym_sum, tree_sum = m["symbols_sha256"], m["tree_of_sha256"]
    except (KeyError, TypeError, ValueError) as e:
        raise DataError(f"{mpath}: missing or bad field {e}") from None
    if not (1 <= A <= 256 and N >= 1 and K >= 1 and W >= 1 and windows == K * W):
        raise DataError(f"{mpath}: inconsistent sizes A={A}, N={N}, K={K}, windows_per_tree={W}, windows={windows}")
    if sym_name != "symbols.bin" or tree_name != "tree_of.bin":
        raise DataError(f"{mpath}: file names {sym_name!r}, {tree_name!r}, want 'symbols.bin', 'tree_of.bin'")
    trees = m.pop("trees", None)
    if not isinstance(trees, list) or len(trees) != K:
        raise DataError(f"{mpath}: {len(trees) if isinstance(trees, list) else 'no'} trees, k = {K}")
    sym = _read_exact(os.path.join(path, sym_name), windows * N, f"k*floor(nk/n)*n = {K}*{W}*{N}")
    checksum = hashlib.sha256(sym).hexdigest()
    if checksum != sym_sum:
        raise DataError(f"{path}: symbols.bin is corrupt: SHA-256 {checksum}, manifest says {sym_sum}")
    raw = _read_exact(os.path.join(path, tree_name), 4 * windows, f"4 bytes x {windows} windows")
    if hashlib.sha256(raw).hexdigest() != tree_sum:
        raise DataError(f"{path}: tree_of.bin is corrupt: its SHA-256 differs from the manifest's")
    symbols = np.frombuffer(sym, dtype=np.uint8).reshape(windows, N)
    if A < 256:
        bad = np.flatnonzero(symbols.reshape(-1) >= A)
        if bad.size:
            i = int(bad[0])
            raise DataError(f"{path}: symbols.bin: symbol {sym[i]} at byte {i} (window {i // N}, position {i % N}) is outside the alphabet 0..{A - 1}")
    tree_of = np.frombuffer(raw, dtype="<i4")
    want = np.arange(windows, dtype=np.int64) // W
    if not np.array_equal(tree_of, want):
        w = int(np.flatnonzero(tree_of != want)[0])
        raise DataError(f"{path}: tree_of.bin: window {w} has tree index {tree_of[w]}, want {want[w]}")
    return Dataset(path=path, manifest=m, symbols=symbols, tree_of=tree_of, checksum=checksum)


def split_by_tree(ds: Dataset, val_fraction: float, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """transformer.SplitByTree: (training, validation) window indices, each
    in increasing order, such that no tree has windows on both sides.  A
    fraction round(val_fraction * K) of the trees (at least one when
    val_fraction > 0) is validation: the first ones of
    PCG(seed, 0x73706c6974).Perm(K)."""
    if not (0 <= val_fraction < 1):
        raise ValueError(f"validation fraction {val_fraction} outside [0, 1)")
    K = ds.K
    nv = min(int(math.floor(val_fraction * K + 0.5)), K)  # Go's math.Round (x >= 0)
    if val_fraction > 0 and nv == 0 and K > 0:
        nv = 1
    is_val = np.zeros(K, dtype=bool)
    is_val[perm(seed, 0x73706C6974, K)[:nv]] = True
    v = is_val[ds.tree_of]
    return np.flatnonzero(~v), np.flatnonzero(v)


class Windows:
    """Equal-length windows of one data set: window i is
    symbols[rows[i], offs[i] : offs[i] + n]."""

    def __init__(self, ds: Dataset, rows: np.ndarray, n: int, offs: Optional[np.ndarray] = None) -> None:
        self.ds, self.rows, self.n = ds, np.asarray(rows, dtype=np.int64), n
        self.offs = np.zeros_like(self.rows) if offs is None else np.asarray(offs, dtype=np.int64)
        if np.any(self.offs % n):
            raise ValueError(f"window offsets must be multiples of the window length {n}")
        # the data set as (window, piece, n) without a copy: window i is
        # piece offs[i] // n of data set window rows[i] (a row gather)
        N = ds.symbols.shape[1]
        self._pieces = np.lib.stride_tricks.as_strided(ds.symbols, (ds.symbols.shape[0], N // n, n), (N, n, 1),
                                                       writeable=False)
        self._piece = self.offs // n

    def __len__(self) -> int:
        return len(self.rows)

    def cut(self, n: int) -> "Windows":
        """Every window cut into floor(len/n) consecutive windows of n symbols
        (trainrun's cutWindows: window i is piece i % per of window i // per)."""
        per = self.n // n
        rows = np.repeat(self.rows, per)
        offs = np.repeat(self.offs, per) + np.tile(np.arange(per, dtype=np.int64) * n, len(self.rows))
        return Windows(self.ds, rows, n, offs)

    def first(self, k: int) -> "Windows":
        """The first k windows (all when k is 0 or at least their number)."""
        if k == 0 or k >= len(self):
            return self
        return Windows(self.ds, self.rows[:k], self.n, self.offs[:k])

    def batch(self, idx: np.ndarray) -> np.ndarray:
        """The windows idx as a (len(idx), n) uint8 array."""
        return self._pieces[self.rows[idx], self._piece[idx]]


def run_windows(meta: Dict[str, str]) -> Tuple[Windows, Optional[Windows], int, Dict[str, str]]:
    """The training and validation windows (None: no validation) and the
    alphabet size of a run's data metadata, as vomc's trainrun.Data: keys
    data, val, val_frac, N, split_seed and optionally max_windows.  The data
    sets' checksums are recorded in the returned copy of meta (data_checksum,
    val_checksum) and checked against those already there."""
    meta = dict(meta)
    ds = read_dataset(meta["data"])
    _check_sum(meta, "data_checksum", ds)
    A = ds.A
    try:
        frac = float(meta["val_frac"])
        assert 0 <= frac < 1
    except (KeyError, ValueError, AssertionError):
        raise DataError(f"run metadata: val_frac {meta.get('val_frac')!r} is not a number in [0, 1)") from None
    try:
        seed = int(meta["split_seed"])
        n = int(meta["N"])
        assert seed >= 0 and n >= 0
    except (KeyError, ValueError, AssertionError):
        raise DataError(f"run metadata: split_seed {meta.get('split_seed')!r} or N {meta.get('N')!r}") from None

    def cut(w: Windows, N: int) -> Windows:
        if n == 0 or n == N:
            return w
        if n < 2 or n > N:
            raise DataError(f"-N {n} outside 2..{N} (the data set's window length)")
        return w.cut(n)

    val = None
    if meta.get("val"):
        vds = read_dataset(meta["val"])
        _check_sum(meta, "val_checksum", vds)
        if vds.A != A or vds.N != ds.N:
            raise DataError(f"validation set {meta['val']} has A={vds.A}, N={vds.N}; the training set A={A}, N={ds.N}")
        train, val = Windows(ds, np.arange(len(ds.symbols)), ds.N), Windows(vds, np.arange(len(vds.symbols)), vds.N)
    elif frac > 0:
        tr, va = split_by_tree(ds, frac, seed)
        if len(tr) == 0:
            raise DataError(f"--val-frac {frac} leaves no training trees")
        train, val = Windows(ds, tr, ds.N), Windows(ds, va, ds.N)
    else:
        train = Windows(ds, np.arange(len(ds.symbols)), ds.N)
    train = cut(train, ds.N)
    if val is not None:
        val = cut(val, ds.N)
    if "max_windows" in meta:
        try:
            k = int(meta["max_windows"] or 0)
            assert k >= 0
        except (ValueError, AssertionError):
            raise DataError(f"run metadata: max_windows {meta['max_windows']!r}") from None
        train = train.first(k)
    return train, val, A, meta


def _check_sum(meta: Dict[str, str], key: str, ds: Dataset) -> None:
    old = meta.get(key)
    if old is not None and old != ds.checksum:
        raise DataError(f"data set {ds.path} has checksum {ds.checksum[:12]}..., the run was trained on {old[:12]}...")
    meta[key] = ds.checksum
