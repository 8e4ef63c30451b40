"""The network of docs/model-format.md: a residual trunk with a policy head and either
the AlphaZero value head or the two PCN heads. Parameter names are the exported tensor
names, so ``state_dict()`` is the model file (BatchNorm's num_batches_tracked aside)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class _ConvBn(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=True)
        self.bn = nn.BatchNorm2d(cout, eps=1e-5)


class _Res(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.conv1 = nn.Conv2d(f, f, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(f, eps=1e-5)
        self.conv2 = nn.Conv2d(f, f, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(f, eps=1e-5)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + x)


class _Head(nn.Module):
    def __init__(self, f, n, out):
        super().__init__()
        self.conv = nn.Conv2d(f, 2, 1)
        self.bn = nn.BatchNorm2d(2, eps=1e-5)
        self.fc = nn.Linear(2 * n * n, out)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.bn(self.conv(x))), 1))


class _Value(nn.Module):
    def __init__(self, f, n, hidden=256):
        super().__init__()
        self.conv = nn.Conv2d(f, 1, 1)
        self.bn = nn.BatchNorm2d(1, eps=1e-5)
        self.fc1 = nn.Linear(n * n, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        h = torch.flatten(F.relu(self.bn(self.conv(x))), 1)
        return torch.tanh(self.fc2(F.relu(self.fc1(h))))


class Net(nn.Module):
    """kind 'pcn': forward -> (policy_logits, blackV_logits, whiteV_logits);
    kind 'alphazero': forward -> (policy_logits, value[B, 1])."""

    def __init__(self, game, board_size, planes, actions, blocks=5, filters=64,
                 kind="pcn", bins=500):
        super().__init__()
        self.cfg = dict(game=game, board_size=board_size, planes=planes, actions=actions,
                        blocks=blocks, filters=filters, kind=kind, bins=bins)
        n = board_size
        self.conv = nn.Conv2d(planes, filters, 3, padding=1)
        self.bn = nn.BatchNorm2d(filters, eps=1e-5)
        for r in range(1, blocks + 1):
            setattr(self, f"res{r}", _Res(filters))
        self.blocks = blocks
        self.policy = _Head(filters, n, actions)
        if kind == "pcn":
            self.blackV = _Head(filters, n, bins)
            self.whiteV = _Head(filters, n, bins)
        elif kind == "alphazero":
            self.value = _Value(filters, n)
        else:
            raise ValueError(f"unknown kind {kind!r}")

    def trunk(self, x):
        x = F.relu(self.bn(self.conv(x)))
        for r in range(1, self.blocks + 1):
            x = getattr(self, f"res{r}")(x)
        return x

    def forward(self, x):
        h = self.trunk(x)
        if self.cfg["kind"] == "pcn":
            return self.policy(h), self.blackV(h), self.whiteV(h)
        return self.policy(h), self.value(h)
