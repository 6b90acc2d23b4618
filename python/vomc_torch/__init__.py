"""vomc's PyTorch engine: vomc data sets, vomc's transformer (or any
nn.Module mapping int64 tokens (B, T) to logits (B, T, A)), trained with
vomc's TrainConfig semantics into vomc's run files, on the CPU or CUDA.

The names below are imported on first use (PEP 562), so that
`python -m vomc_torch` starts, and says clearly what is missing, on an
interpreter without numpy or torch."""
import importlib

_WHERE = {"DataError": "data", "Dataset": "data", "Windows": "data", "read_dataset": "data", "run_windows": "data",
          "split_by_tree": "data", "LSTMModel": "model", "VomcTransformer": "model", "build_model": "model",
          "EngineOptions": "train", "Trainer": "train", "learning_rate": "train", "run": "train"}

__all__ = list(_WHERE)
__version__ = "0.1.0"


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("." + _WHERE[name], __name__), name)
