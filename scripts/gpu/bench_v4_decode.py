#!/usr/bin/env python3
"""DeepSeek-V4's decode attention on the GPU, layer by layer, against dense
decode over the whole context (issue #17 item 5).

Two phases, because mnemoc runs where LLVM is and the kernels run on a GPU:

    python3 scripts/gpu/bench_v4_decode.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
        [--target sm_90a] [--only REGEX]

writes, for every case, a static-shape model of one decode step's attention
(CASE.mlir), its artifact (CASE.mnemo), its launch plan (CASE.plan.json)
and OUT_DIR/cases.json.

    python3 scripts/gpu/bench_v4_decode.py run OUT_DIR [--out RESULTS_DIR] [--only REGEX]

runs on the GPU machine (torch, CuPy). The layers are V4-Flash-shaped (64
query heads on one K = V head of 512, a window of 128 raw keys; CSA: an
entry per 4 tokens, a lightning indexer of 64 heads of 128 choosing 512;
HCA: an entry per 128 tokens, all attended), every sequence at the context
length, one query a sequence, synthetic bf16 values, the entries on pages
of 64 scattered by a permutation. Per case:

- "csa": `mnemo.compressed_attention` over the window's raw keys and the
  512 listed entries, read through the entries' block table. The listings
  come from a `mnemo.top_k` (of scores that are -inf but at the 512
  entries drawn), as a model's do, so that the attention takes the form a
  model's step takes (listings known distinct); the top-k's kernels are
  timed apart and left out of the CSA time (the "index" case has them);
- "hca": the same without indices over every entry;
- "index": `mnemo.lightning_indexer` over the paged indexer keys, then
  `mnemo.top_k` (512 of context / 4);
- "dense": `mnemo.attention` of the same queries over every token's K = V
  row (what a cache without compression reads), and SDPA's cuDNN backend on
  the same tensors where it takes a head dim of 512.

The csa and hca outputs are checked row by row against float32 computed
here from the same bf16 values (the sink in the denominator). The table
gives each time, and for each compressed layer the measured speed-up over
dense beside the speed-up its bytes allow: dense reads context x 512 x 2
bytes a sequence; CSA reads the indexer's keys (context / 4 x 128 x 2),
the listed entries and the window; HCA every entry and the window. Writes
RESULTS_DIR/v4_decode.json; exits 1 when a check fails.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_cases import main, prepare_cases  # noqa: E402

H, D, WINDOW, TOPK = 64, 512, 128, 512
INDEX_HEADS, INDEX_DIM = 64, 128
CSA_RATE, HCA_RATE = 4, 128
PAGE = 64            # entries a page
RAW = WINDOW + 16    # the raw rows a step gathers (its window's pages)


def cases():
    out = []
    for b, ctx in ((1, 32768), (32, 32768), (1, 131072), (8, 131072), (1, 1048576),
                   (4, 1048576)):
        for kind in ("csa", "hca", "index", "dense"):
            out.append(dict(name=f"{kind}_b{b}_ctx{ctx}", kind=kind, B=b, C=ctx))
    out.append(dict(name="check_csa_b3_ctx5000", kind="csa", B=3, C=5000, check_only=True))
    out.append(dict(name="check_hca_b3_ctx70000", kind="hca", B=3, C=70000, check_only=True))
    return out


def t(shape, elem):
    return "tensor<" + "x".join(str(x) for x in shape) + "x" + elem + ">"


def entries_of(case):
    rate = CSA_RATE if case["kind"] in ("csa", "index") else HCA_RATE
    n = case["C"] // rate
    return n, -(-n // PAGE)


def case_mlir(case):
    b, c = case["B"], case["C"]
    q, pos, start = t((b, H, 1, D), "bf16"), t((b, 1), "i64"), t((b,), "i64")
    if case["kind"] == "dense":
        kv = t((b, 1, c, D), "bf16")
        return (f"func.func @main(%q: {q}, %kv: {kv}) -> {q} {{\n"
                f"  %o = mnemo.attention %q, %kv, %kv : {q}, {kv}, {kv} -> {q}\n"
                f"  return %o : {q}\n}}\n")
    n, width = entries_of(case)
    pages = b * width + 1
    table = t((b, width), "i32")
    if case["kind"] == "index":
        iq, pool = t((b, 1, INDEX_HEADS, INDEX_DIM), "bf16"), t((pages, 1, PAGE, INDEX_DIM), "bf16")
        w, lens, scores = t((b, 1, INDEX_HEADS), "f32"), t((b,), "i64"), t((b, 1, width * PAGE), "f32")
        idx = t((b, 1, TOPK), "i64")
        return (f"func.func @main(%q: {iq}, %k: {pool}, %w: {w}, %pos: {pos}, %lens: {lens}, "
                f"%tab: {table}) -> {idx} {{\n"
                f"  %s = mnemo.lightning_indexer %q, %k, %w positions(%pos : {pos}) "
                f"lengths(%lens : {lens}) table(%tab : {table}) causal : {iq}, {pool}, {w} -> "
                f"{scores}\n"
                f"  %i = mnemo.top_k %s lengths(%lens : {lens}) k({TOPK}) : {scores} -> {idx}\n"
                f"  return %i : {idx}\n}}\n")
    raw, pool, sink = t((b, 1, RAW, D), "bf16"), t((pages, 1, PAGE, D), "bf16"), t((H,), "f32")
    idx = t((b, 1, TOPK), "i64")
    args = f"%q: {q}, %raw: {raw}, %e: {pool}, %pos: {pos}, %start: {start}, %tab: {table}"
    attrs = f" raw_start(%start : {start})"
    listing = ""
    if case["kind"] == "csa":
        sel = t((b, 1, n), "f32")
        args += f", %sel: {sel}"
        attrs += f" indices(%idx : {idx})"
        listing = f"  %idx = mnemo.top_k %sel k({TOPK}) : {sel} -> {idx}\n"
    rate = CSA_RATE if case["kind"] == "csa" else HCA_RATE
    return (f"func.func @main({args}, %sink: {sink}) -> {q} {{\n{listing}"
            f"  %o = mnemo.compressed_attention %q, %raw, %e positions(%pos){attrs} "
            f"entry_table(%tab : {table}) sink(%sink : {sink}) window({WINDOW}) rate({rate}) : "
            f"{q}, {raw}, {pool}, {pos} -> {q}\n  return %o : {q}\n}}\n")


def prepare(a):
    prepare_cases(a, cases(), case_mlir)


def make_inputs(case, g):
    """The step's inputs (torch, on the GPU) and what the reference needs."""
    import torch
    b, c = case["B"], case["C"]
    bf = torch.bfloat16
    pos = torch.full((b, 1), c - 1, dtype=torch.int64)
    if case["kind"] == "dense":
        q = torch.randn(b, H, 1, D, generator=g).to(bf)
        kv = torch.randn(b, 1, c, D, generator=g).to(bf)
        return [q.cuda(), kv.cuda()], {}
    n, width = entries_of(case)
    pages = b * width + 1
    table = torch.randperm(pages, generator=g)[:b * width].view(b, width).to(torch.int32)
    if case["kind"] == "index":
        q = torch.randn(b, 1, INDEX_HEADS, INDEX_DIM, generator=g).to(bf)
        pool = torch.randn(pages, 1, PAGE, INDEX_DIM, generator=g).to(bf)
        w = torch.randn(b, 1, INDEX_HEADS, generator=g) * INDEX_HEADS ** -0.5
        lens = torch.full((b,), n, dtype=torch.int64)
        vis = torch.full((b, 1), n - 1, dtype=torch.int64)  # (t + 1) / rate - 1
        return [x.cuda() for x in (q, pool, w, vis, lens, table)], {}
    q = torch.randn(b, H, 1, D, generator=g).to(bf)
    raw = torch.randn(b, 1, RAW, D, generator=g).to(bf)
    pool = torch.randn(pages, 1, PAGE, D, generator=g).to(bf)
    start = torch.full((b,), c - RAW, dtype=torch.int64)
    sink = torch.randn(H, generator=g)
    inputs = [q, raw, pool, pos, start, table]
    ref = dict(q=q, raw=raw, pool=pool, table=table, sink=sink, n=n)
    if case["kind"] == "csa":
        idx = torch.stack([torch.randperm(n, generator=g)[:TOPK] for _ in range(b)])[:, None]
        sel = torch.full((b, 1, n), float("-inf"))
        sel.scatter_(2, idx, 1.0)
        inputs.append(sel)
        ref["idx"] = idx
    inputs.append(sink)
    return [x.cuda() for x in inputs], ref


def reference(case, r):
    """float32 [B, H, 1, D]: each sequence's query over its window's raw keys
    and its entries (listed, or all), the sink in the denominator."""
    import torch
    outs = []
    for bi in range(case["B"]):
        win = r["raw"][bi, 0, RAW - WINDOW:].float()          # positions C-W .. C-1
        w = r["idx"][bi, 0] if "idx" in r else torch.arange(r["n"])
        rows = r["pool"][r["table"][bi, w // PAGE].long(), 0, w % PAGE].float()
        keys = torch.cat([win, rows]).cuda()
        q = r["q"][bi, :, 0].float().cuda()
        s = q @ keys.T * D ** -0.5
        s = torch.cat([s, r["sink"].cuda()[:, None]], 1)
        p = torch.softmax(s, 1)[:, :-1]
        outs.append((p @ keys)[:, None])
    return torch.stack(outs)


def v4_bytes(case):
    b, c = case["B"], case["C"]
    window = WINDOW * D * 2
    if case["kind"] == "csa":
        return b * (c // CSA_RATE * INDEX_DIM * 2 + TOPK * D * 2 + window)
    return b * (c // HCA_RATE * D * 2 + window)


def run(a):
    import torch
    from bench_attention import MnemoPlan, bench
    from rowwise import worst_row_torch
    todo = json.load(open(os.path.join(a.dir, "cases.json")))
    todo = [c for c in todo if not a.only or re.search(a.only, c["name"])]
    print(torch.cuda.get_device_name(), flush=True)
    results, failed = {}, 0
    for case in todo:
        g = torch.Generator().manual_seed(17)
        inputs, ref = make_inputs(case, g)
        plan = MnemoPlan(os.path.join(a.dir, case["name"] + ".plan.json"), [tuple(inputs)])
        plan(0)
        torch.cuda.synchronize()
        entry = {"case": case, "kernels": plan.kernels}
        if case["kind"] in ("csa", "hca"):
            got = plan.output([case["B"], H, 1, D], "bf16").float()
            want = reference(case, ref)
            rel, row = worst_row_torch(got.reshape(-1, D), want.reshape(-1, D))
            entry["check"] = {"rel": rel, "worst_row": list(row), "ok": rel <= 2e-2}
            failed += rel > 2e-2
        if not case.get("check_only"):
            entry["mnemo"] = bench(plan, cap_s=3, max_reps=30, queued=True)
            # Each kernel alone, so that the small ones' share shows.
            if len(plan.kernels) > 1:
                entry["mnemo"]["kernel_ms"] = [
                    bench(lambda i, k=k: plan.launch(i, k), cap_s=1, max_reps=20,
                          queued=True)["ms"] for k in range(len(plan.kernels))]
            if case["kind"] == "csa":  # the listings' top-k is the index case's
                listing = sum(ms for name, ms in zip(plan.kernels, entry["mnemo"]["kernel_ms"])
                              if name.startswith("top_k"))
                entry["mnemo"]["listing_ms"] = listing
                entry["mnemo"]["attention_ms"] = entry["mnemo"]["ms"] - listing
            if case["kind"] == "dense":
                q, kv = inputs
                try:
                    from torch.nn.attention import SDPBackend, sdpa_kernel
                    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                        call = lambda i: torch.nn.functional.scaled_dot_product_attention(
                            q, kv.expand(-1, H, -1, -1), kv.expand(-1, H, -1, -1))
                        call(0)
                        entry["cudnn"] = bench(call, cap_s=3, max_reps=30, queued=True)
                except Exception as e:  # noqa: BLE001 - the peer's refusal is a result
                    entry["cudnn_error"] = str(e).splitlines()[0][:200]
        results[case["name"]] = entry
        ms = entry.get("mnemo", {}).get("ms")
        line = f"{case['name']:24s} {entry['kernels']}"
        if ms:
            line += f" {ms * 1e3:9.1f} us"
            if "attention_ms" in entry["mnemo"]:
                line += f" (attention {entry['mnemo']['attention_ms'] * 1e3:.1f} us)"
            if "kernel_ms" in entry["mnemo"]:
                line += " (" + " + ".join(f"{x * 1e3:.1f}" for x in entry["mnemo"]["kernel_ms"]) + ")"
        if "check" in entry:
            line += f" check rel {entry['check']['rel']:.1e} {'ok' if entry['check']['ok'] else 'FAIL'}"
        if "cudnn" in entry:
            line += f" cudnn {entry['cudnn']['ms'] * 1e3:.1f} us"
        if "cudnn_error" in entry:
            line += f" cudnn: {entry['cudnn_error'][:80]}"
        print(line, flush=True)
        plan = inputs = ref = None  # the next case's tensors need the memory
        torch.cuda.empty_cache()
    # Speed-ups over dense, measured and from bytes.
    print("\n| B | context | dense us | CSA: index + attention us | speed-up | from bytes | share "
          "| HCA us | speed-up | from bytes | share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for b, c in sorted({(r["case"]["B"], r["case"]["C"]) for r in results.values()
                        if "mnemo" in r}):
        get = lambda k: results.get(f"{k}_b{b}_ctx{c}", {}).get("mnemo", {}).get(
            "attention_ms" if k == "csa" else "ms")
        dense, csa, index, hca = get("dense"), get("csa"), get("index"), get("hca")
        if not (dense and csa and index and hca):
            continue
        dense_bytes = b * c * D * 2
        row = [b, c, f"{dense * 1e3:.1f}", f"{index * 1e3:.1f} + {csa * 1e3:.1f}"]
        for ms, kind in ((index + csa, "csa"), (hca, "hca")):
            got = dense / ms
            ideal = dense_bytes / v4_bytes(dict(kind=kind, B=b, C=c))
            if kind == "hca":
                row.append(f"{hca * 1e3:.1f}")
            row += [f"{got:.1f}x", f"{ideal:.1f}x", f"{got / ideal:.2f}"]
        print("| " + " | ".join(str(x) for x in row) + " |")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "v4_decode.json"), "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(__doc__, prepare, run))
