#!/usr/bin/env python3
"""DeepSeek-V3.2's key selection on the GPU: the lightning indexer and top-k kernels
against references, eager PyTorch and torch.topk.

Two phases, because mnemoc runs where LLVM is and the kernels run on a GPU:

    python3 scripts/gpu/bench_indexer_top_k.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
        [--target sm_90a] [--only REGEX]

writes, for every case, a static-shape model of one op (CASE.mlir: a
`mnemo.lightning_indexer` over bf16 queries and keys, or a `mnemo.top_k`),
its artifact (CASE.mnemo), its launch plan (CASE.plan.json) and
OUT_DIR/cases.json.

    python3 scripts/gpu/bench_indexer_top_k.py run OUT_DIR [--out RESULTS_DIR] [--only REGEX]

runs on the GPU machine (torch, CuPy).

The "ix" cases (the indexer) check every query row's scores against
float32 computed here from the same bf16 queries and keys (the -inf
entries, past the length, after the position or of a padding query at
position -1, must match exactly; the rest within a relative L2 of 1e-3
per row), on shapes that are not tile multiples. Their speed cases time
V3.2's decode shape (64 heads of 128, one query a sequence, every
sequence at the context length) and a prefill chunk, against eager
PyTorch (bf16 einsum, then the scale, ReLU and weighted head sum in
float32), in TFLOP/s of the visible keys' products. A "paged" case reads
its keys from a pool through a block table (`table(...)`, the pages
shuffled), as a decode step does; its reference and peer read the same
keys contiguous.

Every top-k case first checks Mnemo's
indices row by row against a reference made here: with `lowest_index`
ties the first k of the row's entries (its first `lengths[b]`, -inf
excluded) in the order (score descending, NaN first, index ascending), a
stable sort; with `introselect` ties the set PyTorch's CPU `torch.topk`
returns over the same entries (the op's definition). Both sorted
ascending and padded with -1 to k, as the op returns them. The check
cases' scores are made to tie: rounded to a coarse grid, runs of exact
zeros (ReLU's), -0 beside +0, -inf and NaN entries, rows shorter than k,
and lengths that are not multiples of anything. The "speed" cases then
time the kernel on float32 scores of V3.2's decode (a row per sequence,
top-k 2048 of 32k-128k scores) and of a DeepSeek-V3 router (8 of 256
experts per token), against `torch.topk(..., sorted=False)` on the same
scores in the same process (CUDA events, the device's time: bench_attention's
`bench(queued=True)`). Writes RESULTS_DIR/indexer_top_k.json; exits 1 when a
check fails.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_cases import main, prepare_cases  # noqa: E402

ELEM = {"f32": "f32", "bf16": "bf16"}
PAGE = 16  # the paged indexer cases' page size


def indexer_cases():
    """The indexer's: name, B, S, H, D, T, causal, positions, lengths."""
    def case(kind, name, b, s, h, d, t, causal, pos=None, lens=None, paged=False):
        return dict(name=f"{kind}_ix_{name}", kind=kind, op="indexer", B=b, S=s, H=h, D=d,
                    T=t, causal=causal, positions=pos, lengths=lens, paged=paged)
    return [
        case("check", "b2s3_h64d128_t300_pos_len", 2, 3, 64, 128, 300, True,
             pos=[[5, 150, 299], [-1, 0, 200]], lens=[300, 180]),
        case("check", "b1s37_h16d64_t1000", 1, 37, 16, 64, 1000, False),
        case("check", "b1s200_h32d32_t200_causal", 1, 200, 32, 32, 200, True),
        case("check", "b3s1_h128d128_t4099_len", 3, 1, 128, 128, 4099, False,
             lens=[4099, 77, 0]),
        case("check", "b3s2_h64d128_t1000_paged", 3, 2, 64, 128, 1008, True,
             pos=[[10, 999], [-1, 500], [0, 1]], lens=[1000, 600, 2], paged=True),
        case("speed", "b64s1_h64d128_t131072_paged", 64, 1, 64, 128, 131072, True,
             pos=[[131071]] * 64, lens=[131072] * 64, paged=True),
        case("speed", "b64s1_h64d128_t32768", 64, 1, 64, 128, 32768, True,
             pos=[[32767]] * 64, lens=[32768] * 64),
        case("speed", "b64s1_h64d128_t131072", 64, 1, 64, 128, 131072, True,
             pos=[[131071]] * 64, lens=[131072] * 64),
        case("speed", "b1s1_h64d128_t131072", 1, 1, 64, 128, 131072, True,
             pos=[[131071]], lens=[131072]),
        case("speed", "b1s1024_h64d128_t8192_prefill", 1, 1024, 64, 128, 8192, True,
             pos=[list(range(7168, 8192))], lens=[8192]),
    ]


def indexer_mlir(case):
    b, s, h, d, t = (case[x] for x in ("B", "S", "H", "D", "T"))
    q, k = f"tensor<{b}x{s}x{h}x{d}xbf16>", f"tensor<{b}x{t}x{d}xbf16>"
    w, o = f"tensor<{b}x{s}x{h}xf32>", f"tensor<{b}x{s}x{t}xf32>"
    if case["paged"]:  # a pool of B * T / PAGE pages, a table of T / PAGE each
        k = f"tensor<{b * t // PAGE}x1x{PAGE}x{d}xbf16>"
    args, opts = f"%q: {q}, %k: {k}, %w: {w}", ""
    if case["positions"]:
        args += f", %pos: tensor<{b}x{s}xi64>"
        opts += f" positions(%pos : tensor<{b}x{s}xi64>)"
    if case["lengths"]:
        args += f", %len: tensor<{b}xi64>"
        opts += f" lengths(%len : tensor<{b}xi64>)"
    if case["paged"]:
        args += f", %table: tensor<{b}x{t // PAGE}xi32>"
        opts += f" table(%table : tensor<{b}x{t // PAGE}xi32>)"
    if case["causal"]:
        opts += " causal"
    return (f"func.func @main({args}) -> {o} {{\n"
            f"  %s = mnemo.lightning_indexer %q, %k, %w{opts} : {q}, {k}, {w} -> {o}\n"
            f"  return %s : {o}\n}}\n")


def indexer_reference(q, k, w, pos, lens, causal, chunk=64):
    """float32 scores [B, S, T] of the op's definition, a few rows at a time."""
    import torch
    b, s, h, d = q.shape
    t = k.shape[1]
    scale = d ** -0.5
    out = torch.empty(b, s, t, device=q.device)
    ts = torch.arange(t, device=q.device)
    for bi in range(b):
        kf = k[bi].float()
        for s0 in range(0, s, chunk):
            qs = q[bi, s0:s0 + chunk].float()
            prod = torch.relu(torch.einsum("shd,td->sht", qs, kf) * scale)
            out[bi, s0:s0 + chunk] = torch.einsum("sht,sh->st", prod, w[bi, s0:s0 + chunk])
        limit = torch.full((s,), t, device=q.device)
        if lens is not None:
            limit = torch.clamp(limit, max=max(int(lens[bi]), 0))
        if causal:
            p = pos[bi] if pos is not None else torch.arange(s, device=q.device)
            limit = torch.minimum(limit, torch.clamp(p + 1, min=0))
        out[bi][ts[None, :] >= limit[:, None]] = float("-inf")
    return out


def eager_indexer(q, k, w, pos, lens, causal):
    """Eager PyTorch's indexer: bf16 products, f32 scale, ReLU and head sum."""
    import torch
    d, t = q.shape[-1], k.shape[1]
    prod = torch.einsum("bshd,btd->bsht", q, k).float().mul_(d ** -0.5).relu_()
    out = torch.einsum("bsht,bsh->bst", prod, w)
    ts = torch.arange(t, device=q.device)
    limit = torch.minimum(lens[:, None], pos + 1) if causal else lens[:, None]
    return out.masked_fill_(ts >= limit[..., None], float("-inf"))


def run_indexer(case, plan_dir, seed):
    import torch
    from bench_attention import MnemoPlan, bench
    from rowwise import worst_row_torch
    g = torch.Generator().manual_seed(seed)
    b, s, h, d, t = (case[x] for x in ("B", "S", "H", "D", "T"))
    q = torch.randn(b, s, h, d, generator=g).to(torch.bfloat16).cuda()
    k = torch.randn(b, t, d, generator=g).to(torch.bfloat16).cuda()
    w = (torch.randn(b, s, h, generator=g) * h ** -0.5).cuda()
    inputs = [q, k, w]
    table = None
    if case["paged"]:  # the same keys scattered over the pool's pages
        pages = b * t // PAGE
        table = torch.randperm(pages, generator=g).view(b, t // PAGE).to(torch.int32).cuda()
        pool = torch.empty(pages, 1, PAGE, d, dtype=torch.bfloat16, device="cuda")
        pool[table.flatten().long(), 0] = k.view(pages, PAGE, d)
        inputs[1] = pool
    pos = lens = None
    if case["positions"]:
        pos = torch.tensor(case["positions"], dtype=torch.int64, device="cuda")
        inputs.append(pos)
    if case["lengths"]:
        lens = torch.tensor(case["lengths"], dtype=torch.int64, device="cuda")
        inputs.append(lens)
    if table is not None:
        inputs.append(table)
    plan = MnemoPlan(os.path.join(plan_dir, case["name"] + ".plan.json"), [tuple(inputs)])
    plan.poison()
    plan(0)
    torch.cuda.synchronize()
    got = plan.output([b, s, t], "f32").clone()
    entry = {"case": case, "kernels": plan.kernels}
    rows = list(range(s)) if case["kind"] == "check" else [0, s - 1]
    ref = indexer_reference(q[:, rows], k, w[:, rows], None if pos is None else pos[:, rows],
                            lens, case["causal"])
    got_rows = got[:, rows]
    masked = torch.isneginf(ref)
    same_mask = bool(torch.equal(masked, torch.isneginf(got_rows)))
    finite = bool(torch.isfinite(got_rows[~masked]).all())
    rel, row = worst_row_torch(got_rows.masked_fill(masked, 0), ref.masked_fill(masked, 0))
    entry["check"] = {"rows": b * len(rows), "rel": rel, "worst_row": list(row),
                      "same_mask": same_mask, "finite": finite, "bad": 0 if same_mask else 1,
                      "bad_rows": [], "ok": same_mask and finite and rel <= 1e-3}
    if case["kind"] == "speed":
        visible = b * s * t if not case["causal"] else sum(
            min(case["lengths"][bi], p + 1) for bi in range(b) for p in case["positions"][bi])
        flops = 2 * h * d * visible
        mine = bench(plan, cap_s=3, max_reps=50, queued=True)
        posd = pos if pos is not None else torch.arange(s, device="cuda")[None].expand(b, s)
        lensd = lens if lens is not None else torch.full((b,), t, device="cuda")
        try:
            peer = bench(lambda i: eager_indexer(q, k, w, posd, lensd, case["causal"]),
                         cap_s=3, max_reps=20, queued=True)
        except torch.OutOfMemoryError:
            peer = None
        entry["mnemo"] = dict(mine, TFLOPs=flops / mine["ms"] / 1e9)
        if peer:
            entry["eager"] = dict(peer, TFLOPs=flops / peer["ms"] / 1e9)
            entry["speedup"] = peer["ms"] / mine["ms"]
    return entry


def check_cases():
    c = []
    for ties in ("lowest", "intro"):
        c.append(dict(name=f"check_{ties}_f32_b2s3_t1000_k64", B=2, S=3, T=1000, k=64,
                      dtype="f32", ties=ties, lengths=[700, 37], grid=0.25))
        c.append(dict(name=f"check_{ties}_bf16_b1s5_t5000_k2048", B=1, S=5, T=5000, k=2048,
                      dtype="bf16", ties=ties, lengths=[4999], grid=None))
        c.append(dict(name=f"check_{ties}_f32_b3s1_t131077_k2048", B=3, S=1, T=131077,
                      k=2048, dtype="f32", ties=ties, lengths=[131077, 90001, 2500],
                      grid=None))
        # Long rows split into chunks and merged (chunks of 20480, past the
        # shared-memory cache, and of 16384, cached): rows made so that the
        # chunks' candidates tie across the cut, that a chunk leaves out
        # keys equal to the row's k-th, with and without the merge taking
        # all its candidates, and a row of zeros.
        for t in (262147, 262000):
            c.append(dict(name=f"check_{ties}_f32_b1s4_t{t}_k512_chunks", B=1, S=4, T=t,
                          k=512, dtype="f32", ties=ties, lengths=None, grid=None,
                          rows="chunks"))
    # Dynamic shapes (a model's: the split chosen at run time), the kernels
    # of both forms in one function.
    for ties in ("lowest", "intro"):
        c.append(dict(name=f"check_{ties}_f32_b1s4_t262000_k512_chunks_dyn", B=1, S=4,
                      T=262000, k=512, dtype="f32", ties=ties, lengths=None, grid=None,
                      rows="chunks", dynamic=True))
        c.append(dict(name=f"check_{ties}_f32_b3s1_t131077_k2048_dyn", B=3, S=1, T=131077,
                      k=2048, dtype="f32", ties=ties, lengths=[131077, 90001, 2500],
                      grid=None, dynamic=True))
        c.append(dict(name=f"check_{ties}_f32_b2s3_t1000_k64_dyn", B=2, S=3, T=1000, k=64,
                      dtype="f32", ties=ties, lengths=[700, 37], grid=0.25, dynamic=True))
    c.append(dict(name="check_lowest_f32_b1s2_t100_k256", B=1, S=2, T=100, k=256,
                  dtype="f32", ties="lowest", lengths=None, grid=0.5))
    c.append(dict(name="check_lowest_f32_router_s4097_e256_k8", B=1, S=4097, T=256, k=8,
                  dtype="f32", ties="lowest", lengths=None, grid=0.125))
    for case in c:
        case["kind"], case["op"] = "check", "top_k"
    return c


def speed_cases():
    c = []
    for b, t in ((64, 32768), (64, 131072), (1, 131072), (1, 32768)):
        for ties in ("lowest", "intro"):
            c.append(dict(name=f"speed_{ties}_b{b}_t{t}_k2048", B=b, S=1, T=t, k=2048,
                          dtype="f32", ties=ties, lengths=None, grid=None))
    # V4-Flash's CSA decode: top-512 of context / 4 entries, 128k and 1M tokens.
    for b, t in ((1, 32768), (1, 262144), (4, 262144), (32, 8192)):
        c.append(dict(name=f"speed_lowest_b{b}_t{t}_k512", B=b, S=1, T=t, k=512,
                      dtype="f32", ties="lowest", lengths=None, grid=None))
    c.append(dict(name="speed_lowest_router_s4096_e256_k8", B=1, S=4096, T=256, k=8,
                  dtype="f32", ties="lowest", lengths=None, grid=None))
    for case in c:
        case["kind"], case["op"] = "speed", "top_k"
    return c


def case_mlir(case):
    b, s, t, k = (case[x] for x in ("B", "S", "T", "k"))
    if case.get("dynamic"):
        b = s = t = "?"
    scores = f"tensor<{b}x{s}x{t}x{ELEM[case['dtype']]}>"
    out = f"tensor<{b}x{s}x{k}xi64>"
    args, lens = f"%s: {scores}", ""
    if case["lengths"]:
        args += f", %len: tensor<{b}xi64>"
        lens = f" lengths(%len : tensor<{b}xi64>)"
    ties = " ties(introselect)" if case["ties"] == "intro" else ""
    return (f"func.func @main({args}) -> {out} {{\n"
            f"  %i = mnemo.top_k %s{lens} k({k}){ties} : {scores} -> {out}\n"
            f"  return %i : {out}\n}}\n")


def prepare(a):
    prepare_cases(a, indexer_cases() + check_cases() + speed_cases(),
                  lambda c: indexer_mlir(c) if c["op"] == "indexer" else case_mlir(c),
                  flags=lambda c: [f"--max-seq-len={c['T']}"] if c.get("dynamic") else [],
                  shapes_of=input_shapes)


def input_shapes(case):
    """A dynamic case's input shapes (the scores, the lengths), else None."""
    if not case.get("dynamic"):
        return None
    b = case["B"]
    return [[b, case["S"], case["T"]]] + ([[b]] if case["lengths"] else [])


def make_scores(case, seed):
    """[B, S, T] float32 scores on the CPU, tied as the case asks."""
    import torch
    g = torch.Generator().manual_seed(seed)
    b, s, t = case["B"], case["S"], case["T"]
    x = torch.randn(b, s, t, generator=g)
    if case["kind"] == "speed":
        return x
    if case.get("rows") == "chunks":
        return chunk_rows(x, case["k"], g)
    if case["grid"]:
        x = torch.round(x / case["grid"]) * case["grid"]
    # ReLU zeros: a run of exact zeros and of -0, wide enough to hold the
    # cut in the long rows.
    zeros = torch.rand(b, s, t, generator=g) < 0.5
    x = torch.where(zeros, torch.zeros_like(x), x.abs())
    x[..., ::7] = -0.0
    x[..., 3::11] = float("-inf")
    x[..., 5::997] = float("nan")
    x[0, 0, :] = float("-inf")
    if t > 40:
        x[0, 0, 10:40] = torch.randn(30, generator=g)  # a row of 30 listed entries
    return x


def chunk_rows(x, k, g):
    """Rows whose top k ties where a split select is weakest (the ones in
    the first chunk, the halves in the third or fourth)."""
    import torch
    x[0, 0] = torch.round(x[0, 0].abs())  # 0..5: the cut ties within the candidates
    x[0, 1:] = float("-inf")
    x[0, 1, 100:100 + k + 88] = 1.0  # one chunk leaves 88 ones out; the merge takes all
    x[0, 2, 30000:30000 + k + 88] = 1.0  # ... and takes k of k + 100 candidates
    x[0, 2, 50000:50100] = 0.5
    x[0, 3] = 0.0  # ReLU's zeros: every chunk ties
    x[0, 3, 7::5003] = -0.0
    return x


def reference_row(row, n, k, ties):
    """The op's indices of one CPU float32 row over its first n entries."""
    import numpy as np
    import torch
    r = row[:n]
    listed = ~torch.isneginf(r)
    if ties == "intro":
        m = min(k, n)
        idx = torch.topk(r, m).indices if m else torch.zeros(0, dtype=torch.long)
        idx = idx[listed[idx]]
    else:
        v = r.double().numpy()
        nan = np.isnan(v)
        order = np.lexsort((np.arange(n), -np.where(nan, 0.0, v), -nan.astype(np.int8)))
        order = order[listed.numpy()[order]][:k]
        idx = torch.from_numpy(order)
    out = torch.full((k,), -1, dtype=torch.long)
    out[:len(idx)] = torch.sort(idx).values
    return out


def run_case(case, plan_dir, seed):
    import torch
    from bench_attention import MnemoPlan, bench
    b, s, t, k = (case[x] for x in ("B", "S", "T", "k"))
    x = make_scores(case, seed)
    dtype = torch.bfloat16 if case["dtype"] == "bf16" else torch.float32
    x = x.to(dtype)
    inputs = [x.cuda()]
    lens = case["lengths"]
    if lens:
        inputs.append(torch.tensor(lens, dtype=torch.int64, device="cuda"))
    plan = MnemoPlan(os.path.join(plan_dir, case["name"] + ".plan.json"), [tuple(inputs)],
                     shapes=input_shapes(case))
    plan.poison()
    # Not -1 (0xFF bytes): an entry the kernel leaves unwritten must show.
    plan.temporaries[plan.output_buffer].fill_(0x7F)
    plan(0)
    torch.cuda.synchronize()
    got = plan.output([b, s, k], "i64").cpu()
    entry = {"case": case, "kernels": plan.kernels}
    # Row by row; a long speed case checks a sample of its rows.
    rows = [(bi, si) for bi in range(b) for si in range(s)]
    if case["kind"] == "speed" and len(rows) > 64:
        rows = rows[::len(rows) // 64]
    xf = x.float()
    bad = []
    for bi, si in rows:
        n = min(max(lens[bi], 0), t) if lens else t
        ref = reference_row(xf[bi, si], n, k, case["ties"])
        if not torch.equal(got[bi, si], ref):
            diff = int((got[bi, si] != ref).sum())
            bad.append({"row": [bi, si], "differing": diff})
    entry["check"] = {"rows": len(rows), "bad_rows": bad[:5], "bad": len(bad), "ok": not bad}
    if case["kind"] == "speed":
        nbytes = b * s * t * x.element_size() + b * s * k * 8
        mine = bench(plan, cap_s=3, max_reps=50, queued=True)
        xs = inputs[0]
        peer = bench(lambda i: torch.topk(xs, k, dim=-1, sorted=False), cap_s=3, max_reps=50,
                     queued=True)
        entry["mnemo"] = dict(mine, GBps=nbytes / mine["ms"] / 1e6)
        entry["torch_topk"] = dict(peer, GBps=nbytes / peer["ms"] / 1e6)
        entry["speedup"] = peer["ms"] / mine["ms"]
    return entry


def print_row(e):
    c = e["case"]
    line = f"{c['name']:<44}"
    if "error" in e:
        print(line + " ERROR " + e["error"], flush=True)
        return
    chk = e["check"]
    line += f" check {'ok' if chk['ok'] else 'FAILED'} ({chk['rows']} rows"
    line += f", {chk['bad']} differ {chk['bad_rows'][:2]})" if chk["bad"] else ")"
    if "rel" in chk:
        line += f" rel {chk['rel']:.1e}"
    if c["op"] == "indexer" and "mnemo" in e:
        m = e["mnemo"]
        line += f"  mnemo {m['ms'] * 1e3:8.1f} us {m['TFLOPs']:6.1f} TFLOP/s"
        if "eager" in e:
            line += f"  eager {e['eager']['ms'] * 1e3:8.1f} us  x{e['speedup']:.2f}"
    elif "mnemo" in e:
        m, p = e["mnemo"], e["torch_topk"]
        line += (f"  mnemo {m['ms'] * 1e3:8.1f} us {m['GBps']:6.0f} GB/s"
                 f"  torch.topk {p['ms'] * 1e3:8.1f} us  x{e['speedup']:.2f}")
    print(line, flush=True)


def run(a):
    import torch
    out_dir = a.out or a.dir
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(a.dir, "cases.json")) as f:
        cases = [c for c in json.load(f) if not a.only or re.search(a.only, c["name"])]
    print(f"device: {torch.cuda.get_device_name()}", flush=True)
    results, failed = [], False
    for i, case in enumerate(cases):
        try:
            runner = run_indexer if case["op"] == "indexer" else run_case
            entry = runner(case, a.dir, seed=i + 1)
            failed |= not entry["check"]["ok"]
        except Exception as e:  # recorded, the run goes on
            entry = {"case": case, "error": f"{type(e).__name__}: {e}"}
            failed = True
        results.append(entry)
        print_row(entry)
        torch.cuda.empty_cache()
        with open(os.path.join(out_dir, "indexer_top_k.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "results": results}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(__doc__, prepare, run))
