"""Whole-model generation on the GPU: Mnemo against Hugging Face transformers.

    bench_generation.py prepare DIR [--preset llama-1b] [--kv-dtypes bf16,fp8]
        (where mnemoc runs)
    bench_generation.py run DIR [--batches 1,32] [--prompt 128] [--new 64]
        [--kv-dtypes bf16,fp8]

`prepare` makes the checkpoint (scripts/make_checkpoint.py, random bf16
weights, reproducible byte for byte) in DIR/ckpt and compiles it for sm_90a
with `--dtype=bf16 --kv-dtype=bf16 --weights=reference` into DIR/model.mnemo
(a bf16 KV cache, as transformers keeps; each other cache type of
`--kv-dtypes` into DIR/model.KV.mnemo), which reads the
checkpoint in place (DIR/ckpt/model.safetensors, checked by size and CRC-32
at load): the artifact stays small enough to carry to the GPU machine, where
`run` makes the checkpoint again (the same bytes) when it is missing.

`run` times, for each batch size, B prompts of P random token ids (seeded)
and N greedy new tokens:
  - Mnemo: `mnemo-run DIR/model.mnemo --device=cuda --generate N --repeat 2`
    (the second run's time to first token, the prefill, and its median
    decode step; the first run's time to first token, which allocates the
    buffers and captures the graphs, beside it), and the same with each
    other cache type of `--kv-dtypes` (DIR/model.KV.mnemo);
  - transformers (eager attention, bf16, CUDA): `generate` of 1 and of N
    tokens (min_new_tokens = max_new_tokens), each after two warm-up calls;
    the first is the time to first token, the difference over N - 1 the
    time per output token;
  - with `--compile`: transformers with torch.compile
    (`cache_implementation="static"`, mode `--compile-mode`, default
    "default": "reduce-overhead" fails in the static cache's update with
    transformers 5.17 and torch 2.11), where it works.
Writes DIR/generation.json and DIR/generation.png (tokens/s against batch
size) and prints a table with the ratios.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def artifact(directory, kv):
    """The artifact of cache type `kv`: model.mnemo for bf16 (the cache
    transformers keeps), model.KV.mnemo for the others."""
    return os.path.join(directory, "model.mnemo" if kv == "bf16"
                        else f"model.{kv}.mnemo")


def prepare(args):
    ckpt = os.path.join(args.dir, "ckpt")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                                                 "make_checkpoint.py"),
                    ckpt, "--preset", args.preset], check=True)
    with open(os.path.join(args.dir, "preset"), "w") as f:
        f.write(args.preset)
    for kv in args.kv_dtypes:
        subprocess.run([os.path.join(ROOT, "build", "bin", "mnemoc"), ckpt,
                        "--target=sm_90a", "--dtype=bf16", f"--kv-dtype={kv}",
                        "--weights=reference",
                        f"--max-batch={args.max_batch}",
                        f"--max-seq-len={args.max_seq_len}",
                        "-o", artifact(args.dir, kv)], check=True)


def prompts(vocab, batch, length):
    rng = np.random.default_rng(batch * 1000 + length)
    return rng.integers(3, vocab, size=(batch, length), dtype=np.int64)


def run_mnemo(args, kv, ids_path, out):
    """(time to first token, time per output token, the first run's time
    to first token) in ms: the second of two generations over one
    generator (`--repeat 2`), as transformers' are timed after warm-up
    calls; the first allocates the device buffers and captures graphs."""
    os.makedirs(out, exist_ok=True)
    cmd = [args.mnemo_run, artifact(args.dir, kv),
           "--device=cuda", "--generate", str(args.new), "--repeat", "2",
           "--input", f"input_ids={ids_path}", "--output-dir", out]
    text = subprocess.run(cmd, check=True, capture_output=True,
                          text=True).stdout
    ttft = float(re.search(r"time to first token: ([0-9.e+-]+) ms", text)[1])
    tpot = float(re.search(r"time per output token: ([0-9.e+-]+) ms",
                           text)[1])
    cold = float(re.search(r"the first run's time to first token: "
                           r"([0-9.e+-]+) ms", text)[1])
    return ttft, tpot, cold


def run_transformers(model, ids, new, torch, compiled=False):
    """(time to first token, time per output token) in ms: `generate` of one
    token and of `new` tokens, each timed after two warm-up calls of the
    same kind (which compile, for torch.compile); the decode steps are the
    difference over new - 1 tokens."""
    x = torch.from_numpy(ids).cuda()
    mask = torch.ones_like(x)

    def timed(n):
        kw = dict(do_sample=False, min_new_tokens=n, max_new_tokens=n,
                  pad_token_id=0)
        if compiled:
            kw["cache_implementation"] = "static"
        with torch.no_grad():
            for _ in range(2):
                model.generate(x, attention_mask=mask, **kw)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            model.generate(x, attention_mask=mask, **kw)
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    first = timed(1)
    total = timed(new)
    return first * 1e3, (total - first) / (new - 1) * 1e3


def run(args):
    ckpt = os.path.join(args.dir, "ckpt")
    if not os.path.exists(os.path.join(ckpt, "model.safetensors")):
        preset = open(os.path.join(args.dir, "preset")).read().strip()
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts",
                                                     "make_checkpoint.py"),
                        ckpt, "--preset", preset], check=True)
    import torch
    import transformers as tf
    config = json.load(open(os.path.join(ckpt, "config.json")))
    vocab = config["vocab_size"]
    results = {"gpu": torch.cuda.get_device_name(), "prompt": args.prompt,
               "kv_dtypes": args.kv_dtypes,
               "new": args.new, "transformers": tf.__version__,
               "torch": torch.__version__, "rows": []}
    model = tf.AutoModelForCausalLM.from_pretrained(
        ckpt, dtype=torch.bfloat16, attn_implementation="eager").cuda().eval()
    model.generation_config.eos_token_id = None
    for batch in args.batches:
        ids = prompts(vocab, batch, args.prompt)
        ids_path = os.path.join(args.dir, f"ids_{batch}.npy")
        np.save(ids_path, ids)
        row = {"batch": batch}
        for kv in args.kv_dtypes:
            key = "mnemo" if kv == "bf16" else f"mnemo_{kv}"
            try:
                (row[f"{key}_ttft_ms"], row[f"{key}_tpot_ms"],
                 row[f"{key}_cold_ttft_ms"]) = run_mnemo(
                    args, kv, ids_path,
                    os.path.join(args.dir, f"out_{kv}_{batch}"))
            except subprocess.CalledProcessError as e:
                row[f"{key}_error"] = (e.stderr or "")[-400:]
        row["eager_ttft_ms"], row["eager_tpot_ms"] = run_transformers(
            model, ids, args.new, torch)
        results["rows"].append(row)
        print(json.dumps(row), flush=True)
    if args.compile:
        compiled = model
        compiled.forward = torch.compile(model.forward,
                                         mode=args.compile_mode)
        for row in results["rows"]:
            ids = prompts(vocab, row["batch"], args.prompt)
            try:
                row["compile_ttft_ms"], row["compile_tpot_ms"] = \
                    run_transformers(compiled, ids, args.new, torch, True)
            except Exception as e:  # noqa: BLE001 - reported, not fatal
                row["compile_error"] = str(e)[-300:]
            print(json.dumps(row), flush=True)
    with open(os.path.join(args.dir, "generation.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\n{results['gpu']}, prompt {args.prompt}, {args.new} new tokens "
          "(decode tokens/s over the batch; ratio = Mnemo / eager)")
    others = [kv for kv in args.kv_dtypes if kv != "bf16"]
    print("| batch | Mnemo TTFT ms (first run) | Mnemo tok/s | "
          + "".join(f"Mnemo {kv} cache tok/s | " for kv in others)
          + "eager TTFT ms | eager tok/s | compile tok/s | Mnemo / eager |")
    print("|---" * (7 + len(others)) + "|")
    for row in results["rows"]:
        b = row["batch"]
        tps = lambda k: b * 1e3 / row[k] if k in row else float("nan")
        print(f"| {b} | {row.get('mnemo_ttft_ms', float('nan')):.1f} "
              f"({row.get('mnemo_cold_ttft_ms', float('nan')):.1f}) | "
              f"{tps('mnemo_tpot_ms'):.0f} | "
              + "".join(f"{tps(f'mnemo_{kv}_tpot_ms'):.0f} | " for kv in others)
              + f"{row['eager_ttft_ms']:.1f} | "
              f"{tps('eager_tpot_ms'):.0f} | {tps('compile_tpot_ms'):.0f} | "
              f"{tps('mnemo_tpot_ms') / tps('eager_tpot_ms'):.2f} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        batches = [r["batch"] for r in results["rows"]]
        for key, label in (("mnemo_tpot_ms", "Mnemo"),
                           *((f"mnemo_{kv}_tpot_ms", f"Mnemo, {kv} cache")
                             for kv in others),
                           ("eager_tpot_ms", "transformers eager"),
                           ("compile_tpot_ms", "transformers torch.compile")):
            ys = [r["batch"] * 1e3 / r[key] if key in r else np.nan
                  for r in results["rows"]]
            if not all(np.isnan(ys)):
                plt.plot(batches, ys, marker="o", label=label)
        plt.xscale("log", base=2)
        plt.yscale("log")
        plt.xlabel("batch size")
        plt.ylabel("decode tokens/s")
        plt.title(f"{results['gpu']}: generation, prompt {args.prompt}")
        plt.legend()
        plt.savefig(os.path.join(args.dir, "generation.png"), dpi=120)
    except ImportError:
        print("no matplotlib: no plot")


def kv_list(text):
    kinds = text.split(",")
    for kv in kinds:
        if kv not in ("f32", "bf16", "f16", "fp8"):
            raise argparse.ArgumentTypeError(f"unknown cache type '{kv}'")
    return kinds


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("dir")
    p.add_argument("--preset", default="llama-1b")
    p.add_argument("--max-batch", type=int, default=32)
    p.add_argument("--max-seq-len", type=int, default=512)
    p.add_argument("--kv-dtypes", default="bf16", type=kv_list,
                   help="cache types to compile, comma-separated (bf16 first)")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--batches", default="1,32",
                   type=lambda s: [int(x) for x in s.split(",")])
    r.add_argument("--prompt", type=int, default=128)
    r.add_argument("--new", type=int, default=64)
    r.add_argument("--kv-dtypes", default="bf16", type=kv_list,
                   help="cache types to run (their artifacts prepared)")
    r.add_argument("--compile", action="store_true")
    # reduce-overhead (CUDA graphs) fails in transformers 5.17's static
    # cache update (its tensors overwritten by a later replay), then crashes.
    r.add_argument("--compile-mode", default="default")
    r.add_argument("--mnemo-run", default=os.path.join(ROOT, "build", "bin",
                                                       "mnemo-run"))
    args = ap.parse_args()
    (prepare if args.cmd == "prepare" else run)(args)


if __name__ == "__main__":
    main()
