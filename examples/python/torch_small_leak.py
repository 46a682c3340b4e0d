#!/usr/bin/env python3
"""A small transformer training loop that keeps one 64 KiB tensor per step on the GPU
(a list of losses never moved to the host), for GPU validation of `--tensors`,
allocator-aware sites and NVTX steps (scripts/gpu-validate.sh, docs/gpu-validation.md).

    build/bin/vramtrace run -- python3 examples/python/torch_small_leak.py
    build/bin/vramtrace run --tensors -- python3 examples/python/torch_small_leak.py
    build/bin/vramtrace run --step-range step -- python3 examples/python/torch_small_leak.py --no-mark

Each step is an NVTX range named "step" (torch.cuda.nvtx); with --mark (default) the
step is also marked with vramtrace_step() when the preload is present. The leak is
KEEP_LINE below: 16,384 float32 = 65,536 bytes per step. Prints "ms/step N" (the
median step time after 5 warm-up steps) and "kept N tensors".
"""
import argparse
import ctypes
import statistics
import time

import torch

try:
    _step = ctypes.CDLL(None).vramtrace_step
    _step.restype = None
except AttributeError:
    _step = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--no-mark", action="store_true", help="mark steps with NVTX ranges only")
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True),
        num_layers=4).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    losses = []
    times = []
    for i in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        t0 = time.perf_counter()
        x = torch.randn(16, 128, 256, device=dev)
        loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(torch.empty(16384, device=dev).fill_(loss.detach()))  # KEEP_LINE: 64 KiB per step
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        torch.cuda.nvtx.range_pop()
        if _step is not None and not args.no_mark:
            _step()
    print("ms/step %.3f" % (1000 * statistics.median(times[5:] or times)))
    print("kept %d tensors" % len(losses))


if __name__ == "__main__":
    main()
