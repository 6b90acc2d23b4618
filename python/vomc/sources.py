"""Priors over context trees, trees, generation and data sets — vomc's
source and dataset packages through libvomc."""
from __future__ import annotations

import json
from typing import Iterable, List, Optional, Sequence, Union

import numpy as np

from . import _arrays
from ._lib import call


class Prior:
    """The prior π_CTW(D, λ, α) over context trees (vomc's source.Prior).

    A: alphabet size (2..256); depths: the maximum depth D, or a list drawn
    from uniformly per tree; lam: the STOP probability λ of a node above
    depth D; alpha: the Dirichlet parameter(s) of the leaves (one value or
    A); leaves: "dirichlet", "sparse" or "mixed" (sparse_zero, sparse_frac
    as 'vomc data').  Checked by vomc as `vomc data` checks its flags.
    """

    def __init__(self, A: int = 3, depths: Union[int, Sequence[int]] = 3, lam: float = 0.15,
                 alpha: Union[float, Sequence[float]] = 0.5, leaves: str = "dirichlet",
                 sparse_zero: Optional[float] = None, sparse_frac: Optional[float] = None) -> None:
        ds = [int(depths)] if np.isscalar(depths) else [int(d) for d in depths]
        al = [float(alpha)] if np.isscalar(alpha) else [float(a) for a in alpha]
        req = {"A": int(A), "depths": ds, "lambda": float(lam), "alpha": al, "leaves": leaves,
               "sparse_zero": sparse_zero, "sparse_frac": sparse_frac}
        self.json, _ = call("prior", req)

    @classmethod
    def from_json(cls, js: dict) -> "Prior":
        """The prior of a manifest's "prior" object."""
        p = cls.__new__(cls)
        p.json = dict(js)
        return p

    @property
    def A(self) -> int:
        return self.json["alphabet"]

    @property
    def depths(self) -> List[int]:
        return list(self.json["depths"])

    @property
    def D(self) -> int:
        """The largest depth."""
        return max(self.json["depths"])

    @property
    def lam(self) -> float:
        return self.json["lambda"]

    @property
    def alpha(self) -> List[float]:
        return list(self.json.get("alpha") or [])

    def sample(self, K: int = 1, seed: int = 1) -> List["Tree"]:
        """K trees, tree i drawn with vomc's source.RNG(seed, i): the trees of
        a data set made with this seed, and tree 0 that of `vomc tree sample
        --seed`."""
        trees, _ = call("sample", {"prior": self.json, "K": int(K), "seed": int(seed)})
        return [Tree(t) for t in trees]

    def dataset(self, K: int, N: int = 256, NK: int = 0, fresh: bool = True, seed: int = 1,
                workers: int = 0) -> "Dataset":
        """A data set built in memory, the same as `vomc data` with these
        settings (fresh: every window from the dummy context, a test set)."""
        return Dataset._answer(call("data_build", _data_req(self, K, N, NK, fresh, seed, workers)))

    def __repr__(self) -> str:
        return f"vomc.Prior({json.dumps(self.json)})"


def _data_req(prior: Prior, K, N, NK, fresh, seed, workers) -> dict:
    return {"prior": prior.json, "K": int(K), "N": int(N), "NK": int(NK), "fresh": bool(fresh),
            "seed": int(seed), "workers": int(workers)}


def make_dataset(out: str, prior: Prior, K: int, N: int = 256, NK: int = 0, fresh: bool = True, seed: int = 1,
                 npy: bool = False, force: bool = False, workers: int = 0) -> "Dataset":
    """Write a data set into directory out exactly as `vomc data` does (the
    same bytes for the same settings) and return it."""
    req = _data_req(prior, K, N, NK, fresh, seed, workers)
    req.update(dir=str(out), npy=bool(npy), force=bool(force))
    return Dataset._answer(call("data_make", req))


class Tree:
    """A context-tree source (vomc's source.Tree), held as its JSON form."""

    def __init__(self, js: Union[dict, str]) -> None:
        self.json = json.loads(js) if isinstance(js, str) else dict(js)

    @classmethod
    def read(cls, path: str) -> "Tree":
        """A tree file written by `vomc tree sample --out FILE.json`."""
        with open(path, encoding="utf-8") as f:
            return cls(json.load(f))

    @property
    def A(self) -> int:
        return self.json["alphabet"]

    @property
    def D(self) -> int:
        return self.json["max_depth"]

    @property
    def leaves(self) -> list:
        """The leaves: {"suffix": [...], "p": [...]} (suffixes in time order)."""
        return self.json["leaves"]

    def generate(self, n: int, seed: int = 1) -> np.ndarray:
        """n symbols (uint8) from the dummy context: the bytes of `vomc
        generate TREE --raw -n n --seed seed`."""
        _, blobs = call("generate", {"tree": self.json, "n": int(n), "seed": int(seed)})
        return np.frombuffer(blobs[0], dtype=np.uint8).copy()

    def __repr__(self) -> str:
        return f"vomc.Tree(A={self.A}, D={self.D}, {len(self.leaves)} leaves)"


class Dataset:
    """A vomc data set: the manifest (prior, settings, checksums, trees),
    symbols (W, N) uint8 and tree_of (W,) int32."""

    def __init__(self, manifest: dict, symbols: np.ndarray, tree_of: np.ndarray, path: Optional[str] = None) -> None:
        self._manifest, self.symbols, self.tree_of, self.path = manifest, symbols, tree_of, path

    @property
    def manifest(self) -> dict:
        """The manifest with its trees (read from path when needed)."""
        if not self._manifest.get("trees") and self.path is not None:
            self._manifest = call("data_read", {"dir": self.path, "trees": True})[0]
        return self._manifest

    @classmethod
    def _answer(cls, answer, path: Optional[str] = None) -> "Dataset":
        m, blobs = answer
        W, N = m["windows"], m["n"]
        syms = np.frombuffer(blobs[0], dtype=np.uint8).reshape(W, N).copy()
        tree_of = np.frombuffer(blobs[1], dtype="<i4").astype(np.int32)
        return cls(m, syms, tree_of, path)

    @classmethod
    def read(cls, path: str, trees: bool = False) -> "Dataset":
        """Read a data set directory (checksums verified): its windows, and
        its trees now with trees=True, else when first used (reading many
        deep trees takes seconds; `vomc eval` does not read them)."""
        return cls._answer(call("data_read", {"dir": str(path), "trees": bool(trees)}), str(path))

    def write(self, path: str, force: bool = False) -> None:
        """Write the data set into directory path in vomc's format (an
        existing non-empty directory only with force)."""
        syms = _arrays.windows(self.symbols, self.A, "symbols")
        tree_of = np.ascontiguousarray(self.tree_of, dtype="<i4")
        call("data_write", {"manifest": self.manifest, "dir": str(path), "force": bool(force)}, [syms, tree_of])

    @property
    def prior(self) -> Prior:
        return Prior.from_json(self._manifest["prior"])

    @property
    def A(self) -> int:
        return self._manifest["prior"]["alphabet"]

    @property
    def N(self) -> int:
        return self._manifest["n"]

    @property
    def trees(self) -> List[Tree]:
        return [Tree(t) for t in self.manifest["trees"]]

    def __len__(self) -> int:
        return self.symbols.shape[0]

    def __repr__(self) -> str:
        m = self._manifest
        return f"vomc.Dataset({m['windows']} windows of N={m['n']} from {m['k']} trees, prior {json.dumps(m['prior'])})"
