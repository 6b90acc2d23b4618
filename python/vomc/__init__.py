"""vomc in Python: numpy in and out, vomc's Go core behind it.

Every algorithm runs in vomc's Go code, in this process, through the shared
library libvomc (cmd/libvomc; loaded with ctypes): priors and trees,
generation, data sets, every predictor of `vomc eval --methods`, CTW's
weights, the in-context evaluation with its intervals and paired excess,
and the null-tested head labels give the same numbers as the command line.

    import vomc
    prior = vomc.Prior(A=3, depths=[1, 2, 3, 4, 5], lam=0.15, alpha=0.5)
    test = prior.dataset(K=500, N=256, seed=12)
    p = vomc.predict("ctw:D=5", test)                   # (W, N, A) float64
    res = vomc.evaluate(test, {"mine": p}, reference="bayes", methods="ctw,markov:k=3")
    print(res.table)

numpy is the only requirement; vomc.load_model needs torch.
"""
from ._lib import VomcError, find_library
from .explore import Page, explore
from .heads import HeadLabels, attention_maps, label_heads
from .methods import EvalResult, Interval, MethodResult, ctw_weights, evaluate, model_probs, predict
from .sources import Dataset, Prior, Tree, make_dataset


def version() -> dict:
    """The Go core's version: {"vomc", "go", "tool"}."""
    from ._lib import call
    return call("version", {})[0]


def load_model(path: str, device: str = "cpu"):
    """A vomc model file (a run directory of `vomc train`, or its
    model.safetensors) as a torch nn.Module with TransformerLens-style hook
    points and run_with_cache (vomc.hooked.HookedVomcTransformer).  Needs
    torch."""
    from .hooked import load_model as _load
    return _load(path, device)


def save_model(model, path: str) -> str:
    """Write vomc's transformer (a torch module) as a vomc model directory
    (model.safetensors): what vomc eval, attention, explore and load_model
    read (vomc.hooked.save_model).  Needs torch."""
    from .hooked import save_model as _save
    return _save(model, path)


__all__ = ["Prior", "Tree", "Dataset", "make_dataset", "predict", "ctw_weights", "evaluate", "EvalResult",
           "MethodResult", "Interval", "model_probs", "attention_maps", "label_heads", "HeadLabels", "explore",
           "Page", "load_model", "save_model", "version", "VomcError", "find_library"]
