#!/usr/bin/env python3
"""Times each kernel of a generation step (prefill, decode or append) on the GPU.

    python3 scripts/gpu/time_step.py MODEL.plan.json --function decode
        --batch B --context C [--tokens S] [--top N] [--reps R]

MODEL.plan.json is `mnemo-run MODEL.mnemo --dump-plan`'s JSON of an artifact
compiled for a GPU target with the generation steps. The step's plan is
evaluated at B sequences of S new tokens each (1 for decode) whose caches
already hold C tokens (0 for prefill): block tables naming distinct pages
of pools sized for C + S tokens a sequence, each sequence's context length
C + S and its new tokens at positions C.. C + S - 1, random token ids, and
the pools filled with normal values (a cache of zeros would make every
indexer score tie). Each launch of the plan is timed alone with CUDA events
(median of R runs after one warm-up; bench_attention's `bench`, device
time) and the kernels are printed slowest first, with their share of the
sum, then the slowest launches with their grids: where a step's time
goes. The timings are per launch, one after the
other, so they add up to the step's device time without the host's launch
cost.
"""

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def step_inputs(fn, batch, context, tokens, page, vocab, seed):
    """The step's inputs in order: (shapes, torch tensors on the device)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    total = context + tokens
    width = math.ceil(total / page)
    shapes, tensors = [], []
    dtypes = {"i64": torch.int64, "i32": torch.int32, "f32": torch.float32,
              "bf16": torch.bfloat16, "f16": torch.float16}
    for inp in fn["inputs"]:
        name, dtype, shape = inp["name"], inp["dtype"], inp["shape"]
        if name == "input_ids":
            t = torch.randint(0, vocab, (batch, tokens), generator=g)
        elif name == "positions":
            t = (context + torch.arange(tokens)).expand(batch, tokens).contiguous()
        elif name == "block_table":
            t = torch.arange(batch * width, dtype=torch.int32).view(batch, width)
        elif name == "context_lengths":
            t = torch.full((batch,), total, dtype=torch.int64)
        elif name.startswith("cache."):
            dims = [batch * width] + shape[1:]
            if dtype == "f8E4M3FN":
                t = torch.randn(dims, generator=g).to(torch.float8_e4m3fn)
            elif dtype in ("bf16", "f16", "f32"):
                t = torch.randn(dims, generator=g).to(dtypes[dtype])
            else:
                t = torch.rand(dims, generator=g).to(dtypes[dtype])
        else:
            raise SystemExit(f"input {name}: no rule to make it")
        shapes.append(list(t.shape))
        tensors.append(t.cuda())
    return shapes, tensors


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("plan")
    p.add_argument("--function", default="decode")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--context", type=int, default=0)
    p.add_argument("--tokens", type=int, default=1)
    p.add_argument("--page", type=int, default=16)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    import torch
    from bench_attention import MnemoPlan, bench
    with open(a.plan) as f:
        doc = json.load(f)
    fn = next(f for f in doc["functions"] if f["name"] == a.function)
    shapes, inputs = step_inputs(fn, a.batch, a.context, a.tokens, a.page, a.vocab, seed=1)
    plan = MnemoPlan(a.plan, [tuple(inputs)], shapes=shapes, function=a.function)
    plan(0)
    torch.cuda.synchronize()
    times, single = {}, []
    for k, name in enumerate(plan.kernels):
        ms = bench(lambda i, k=k: plan.launch(i, k), cap_s=2, max_reps=a.reps, queued=True)["ms"]
        base = name.rstrip("0123456789").rstrip("_") or name
        n, t = times.get(base, (0, 0.0))
        times[base] = (n + 1, t + ms)
        _, grid, block, _, shared = plan.launches[0][k]
        single.append((ms, k, name, grid, block, shared))
    whole = bench(plan, cap_s=3, max_reps=a.reps, queued=True)["ms"]
    total = sum(t for _, t in times.values())
    print(f"{torch.cuda.get_device_name()}: {a.function}, batch {a.batch}, context {a.context}, "
          f"{a.tokens} new token(s) each: {len(plan.kernels)} launches, "
          f"{total * 1e3:.1f} us launch by launch, {whole * 1e3:.1f} us the whole step")
    for base, (n, t) in sorted(times.items(), key=lambda kv: -kv[1][1])[:a.top]:
        print(f"  {t * 1e3:9.1f} us {100 * t / total:5.1f}%  {n:4d} x {base}")
    print("slowest launches:")
    for ms, k, name, grid, block, shared in sorted(single, reverse=True)[:a.top]:
        print(f"  {ms * 1e3:9.1f} us  #{k:<4d} {name:<24} grid {tuple(grid)} block "
              f"{tuple(block)} shared {shared}")


if __name__ == "__main__":
    main()
