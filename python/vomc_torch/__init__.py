"""vomc's PyTorch engine: vomc data sets, vomc's transformer (or any
nn.Module mapping int64 tokens (B, T) to logits (B, T, A)), trained with
vomc's TrainConfig semantics into vomc's run files, on the CPU or CUDA."""
from .data import DataError, Dataset, Windows, read_dataset, run_windows, split_by_tree
from .model import LSTMModel, VomcTransformer, build_model
from .train import EngineOptions, Trainer, learning_rate, run

__all__ = ["DataError", "Dataset", "Windows", "read_dataset", "run_windows", "split_by_tree", "LSTMModel",
           "VomcTransformer", "build_model", "EngineOptions", "Trainer", "learning_rate", "run"]
__version__ = "0.1.0"
