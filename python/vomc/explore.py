"""The explorer inline: `vomc explore --static`'s page as an object that
Jupyter displays."""
from __future__ import annotations

import html
import os
from typing import Optional, Sequence, Union

from ._lib import call
from .sources import Dataset


class Page:
    """A self-contained HTML page (html): Jupyter shows it in an iframe;
    save(path) writes it."""

    def __init__(self, page: str, height: int = 900) -> None:
        self.html, self.height = page, height

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width:100%;height:{self.height}px;'
                'border:1px solid #ccc" sandbox="allow-scripts"></iframe>')

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)

    def __len__(self) -> int:
        return len(self.html)


def _model_path(m) -> str:
    p = getattr(m, "vomc_path", m)
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"explore shows vomc models: a run directory of `vomc train` or vomc.load_model's module, "
                        f"not {type(m).__name__} (evaluate any other model with vomc.evaluate)")
    return os.fspath(p)


def explore(model: Union[str, Sequence[str], object], data: Union[str, Dataset], window: int = 0, t: int = -1,
            methods: str = "", train: Optional[str] = None, head_windows: int = 0, mean_windows: int = 0,
            max_k: int = 0, seed: int = 1, height: int = 900) -> Page:
    """The `vomc explore --static` page of one window: the loss at every
    position, every method's distribution, CTW's ω, the MAP context and every
    head's attention with its label, for vomc model(s) (run directories or
    vomc.load_model modules) on a data set directory."""
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    if isinstance(data, Dataset):
        raise TypeError("explore reads the data set from its directory: write it first (Dataset.write(DIR)) and pass DIR")
    req = {"Models": ",".join(_model_path(m) for m in models), "Data": os.fspath(data), "Train": train or "",
           "Methods": methods, "Window": int(window), "T": int(t), "head_windows": int(head_windows),
           "mean_windows": int(mean_windows), "max_k": int(max_k), "seed": int(seed)}
    _, blobs = call("explore_static", req)
    return Page(blobs[0].decode(), height)
