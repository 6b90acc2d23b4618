"""A tiny GRU language model for vomc's custom-architecture tests
(`vomc train --engine torch --arch gru.py:make`): the protocol of
python/vomc_torch/model.py, int64 tokens (B, T) to causal logits (B, T, A)."""
import torch.nn as nn


class GRU(nn.Module):
    def __init__(self, alphabet: int, embed: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(alphabet, embed)
        self.gru = nn.GRU(embed, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, alphabet)

    def forward(self, x):
        y, _ = self.gru(self.emb(x))
        return self.head(y)


def make(cfg: dict) -> nn.Module:
    """The factory: cfg is the run's config (alphabet, context, embed, hidden, layers)."""
    return GRU(cfg["alphabet"], cfg["embed"], cfg["hidden"], cfg["layers"])
