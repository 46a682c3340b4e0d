#!/usr/bin/env python3
"""A small real PyTorch training loop with a planted leak, for GPU validation.

Run under the tracer on a machine with a GPU and PyTorch:
    build/bin/vramtrace run -o vt-torch -- python3 examples/python/torch_train.py
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True build/bin/vramtrace run -- python3 examples/python/torch_train.py
    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync build/bin/vramtrace run -- python3 examples/python/torch_train.py

The leak: every step keeps a detached 4 MiB copy of the activations in a list.
Steps are marked with vramtrace_step() when the preload is present. PyTorch caches
memory, so what vramtrace sees are the segments its allocator reserves: the leak
shows as a site that keeps growing, the model and optimizer as plateau/stable.
"""
import argparse
import ctypes

import torch

try:
    _step = ctypes.CDLL(None).vramtrace_step
    _step.restype = None
except AttributeError:
    _step = None

kept = []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        x = torch.randn(256, 1024, device=dev)
        y = model(x)
        loss = (y - x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        kept.append(torch.empty(1024 * 1024, device=dev))  # BUG: 4 MiB kept per step
        torch.cuda.synchronize()
        if _step is not None:
            _step()
    print(f"torch_train: {args.steps} steps, allocated {torch.cuda.memory_allocated() >> 20} MiB, "
          f"reserved {torch.cuda.memory_reserved() >> 20} MiB")


if __name__ == "__main__":
    main()
