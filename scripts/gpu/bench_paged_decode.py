#!/usr/bin/env python3
"""Paged decode attention on the GPU: Mnemo's kernel against the copy bandwidth and the peers.

Two phases, because mnemoc runs where LLVM is and the kernels run on a GPU:

    python3 scripts/gpu/bench_paged_decode.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
        [--target sm_90a] [--quick] [--general-kernel]

writes, for every case, a static-shape `mnemo.paged_attention` model
(CASE.mlir: bf16 query, bf16 pools or FP8 E4M3 pools with their scales,
i32 block table), its artifact (CASE.mnemo) and launch plan
(CASE.plan.json), and OUT_DIR/cases.json.

    python3 scripts/gpu/bench_paged_decode.py run OUT_DIR [--out RESULTS_DIR] [--only REGEX]

runs on the GPU machine (torch, CuPy). Every case first checks Mnemo's
output row by row (each query row of each head, rowwise.py) against a
float32 reference computed here from the same pages: each sequence's keys
and values gathered through its block table, its own length, query
positions, causality, window, softcap and sink applied as the op defines
them (FP8 pages quantized as `mnemo.kv_cache_write` stores them, a scale
per row, and dequantized for the reference). The "check" cases are the
ragged ones (lengths that are not tile or
page multiples, padding queries at position -1, several query tokens,
windows, softcaps, sinks); the "speed" cases then time decode (one query
token per sequence, every sequence at the context length) on pages
scattered through the pool by a random permutation:

  - Mnemo: the plan's kernels (the attention and, with split-KV, its
    combine), on input sets whose block tables name disjoint pages of one
    pool, rotated so that the pages read exceed 4x the L2 cache;
  - the copy ceiling: a device-to-device copy of 2 GiB (bytes read and
    written over its time);
  - torch SDPA with the flash (FlashAttention-2) and cuDNN backends on the
    same shapes with contiguous caches [B, Hkv, ctx, D] (`enable_gqa`).

Every call is timed by CUDA events behind a sleep kernel that keeps the
device busy until the host has made the call's launches (bench_attention's
`event_ms`, queued), the peers' too: the times are the device's, as in a
decode loop that runs ahead of the device, not the host's launch cost
through Python (tens of microseconds). Mnemo's time with that cost in it
is in the JSON too (`with_launch_ms`).

Bytes of a call = the pages' rows actually read (B x Hkv x ctx x (D + Dv),
and FP8's 4-byte scales) + Q + O; the peers run bf16 caches beside the
bf16 cases only.

The "mla" cases are DeepSeek's absorbed MLA decode (`--only mla`): 128 (or
16) query heads over one latent row per token, D 576 (latent 512 + rope
64) against keys, Dv 512 (the latent) as values: the value pool is the key
pool's leading 512 features (`tensor.extract_slice`), as a compiled
DeepSeek checkpoint's cache is, so a token's bytes are its 576 values.
Their peer is eager PyTorch's absorbed MLA over one contiguous [B, ctx,
576] latent cache (scores and P V as bf16 matmuls, the softmax in f32). `--only REGEX` at prepare
compiles just the matching cases. A "dense" case checks the same shape as
one `mnemo.attention` (the absorbed form over a whole prompt, causal). The
"mla_sparse" cases are DeepSeek-V3.2's sparse decode: the same MLA over the
`topk` cached tokens each query's indices list (`indices(...)`: the
checks' lists shuffled, with -1 entries, a token past the length, a
negative one and a duplicate; the speed cases' `topk` distinct tokens
anywhere in the context), beside the dense MLA over the whole context;
their bytes are the selected rows', their peer eager PyTorch gathering
the selected rows of a contiguous cache first. Prints a table of GB/s,
Mnemo's fraction of the copy ceiling (and TFLOP/s for MLA) and the peers'
time over Mnemo's; writes RESULTS_DIR/paged_decode.json.
Exits 1 when a check fails.
"""

import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from bench_cases import main, prepare_cases  # noqa: E402

PAGE = 16
# DeepSeek-V3's softmax scale: 192^-1/2 times YaRN's mscale^2 (1.3796^2 at
# factor 40).
MLA_SCALE = 192 ** -0.5 * 1.3796 ** 2
KV_BYTES = {"bf16": 2, "fp8": 1}
L2_BYTES = 50 << 20
RTOL = 2e-2  # bf16 query and pages; the reference uses the same bf16 values


def speed_cases(quick):
    """Decode cases: (B, Hq, Hkv, context)."""
    grid = [(1, 2048), (1, 8192), (1, 32768), (1, 131072), (32, 2048), (32, 8192),
            (32, 32768), (128, 2048), (128, 8192)]
    if quick:
        grid = [(1, 8192), (32, 8192)]
    fp8_grid = [(1, 32768), (1, 131072), (32, 8192), (32, 32768), (128, 8192)]
    if quick:
        fp8_grid = [(1, 131072), (32, 8192)]
    cases = []
    for kv, sizes in (("bf16", grid), ("fp8", fp8_grid)):
        for hq in (32, 64):
            for b, ctx in sizes:
                cases.append(dict(name=f"speed_{kv}_b{b}_h{hq}_ctx{ctx}", kind="speed", kv=kv,
                                  B=b, Hq=hq, Hkv=8, Sq=1, D=128, capacity=ctx, causal=True))
    # Other page sizes at the two headline shapes: a page is one contiguous
    # run of P rows per KV head in the pool (P x 128 bytes of FP8 K, twice
    # that in bf16), so the page size sets how long the reads' runs are.
    for kv in ("bf16", "fp8"):
        for page in ((32,) if quick else (8, 32, 64)):
            for b, ctx in ((1, 131072), (32, 8192)):
                cases.append(dict(name=f"speed_{kv}_b{b}_h32_ctx{ctx}_page{page}",
                                  kind="speed", kv=kv, B=b, Hq=32, Hkv=8, Sq=1, D=128,
                                  capacity=ctx, causal=True, page=page))
    # DeepSeek-V3's absorbed MLA decode (issue #16): 128 heads over the
    # latent, B 64 at 4k and B 128 with two query tokens (MTP), B 1 long.
    mla = dict(kind="speed", kv="bf16", Hq=128, Hkv=1, D=576, Dv=512, scale=MLA_SCALE,
               causal=True, mla=True)
    for b, sq, ctx in ((64, 1, 4096), (128, 2, 4096), (1, 1, 32768), (8, 1, 16384)):
        if quick and (b, sq) != (64, 1):
            continue
        cases.append(dict(mla, name=f"speed_mla_b{b}_sq{sq}_ctx{ctx}", B=b, Sq=sq,
                          capacity=ctx))
    # The latent in FP8 (a scale a row): bytes read against the copy.
    for b, ctx in ((64, 4096),) if quick else ((64, 4096), (1, 32768)):
        cases.append(dict(mla, name=f"speed_mla_fp8_b{b}_sq1_ctx{ctx}", kv="fp8", B=b,
                          Sq=1, capacity=ctx))
    # V3.2's sparse decode (index_topk 2048) against the dense MLA over the
    # whole context, which it would replace (issue #16: the speed-up
    # against the bytes' ratio ctx / topk).
    sparse = ((64, 32768), (64, 131072), (1, 131072))
    for b, ctx in sparse[:1] if quick else sparse:
        for kv in ("bf16", "fp8"):
            tag = "" if kv == "bf16" else "fp8_"
            cases.append(dict(mla, name=f"speed_mla_sparse_{tag}b{b}_ctx{ctx}", kv=kv, B=b,
                              Sq=1, capacity=ctx, topk=2048, causal=False))
        if ctx > 4096:
            cases.append(dict(mla, name=f"speed_mla_b{b}_sq1_ctx{ctx}", B=b, Sq=1,
                              capacity=ctx))
    return cases


def check_cases():
    """Ragged cases: lengths drawn below the capacity, Sq query tokens at the
    end of each sequence (position -1 marks padding), optional window,
    softcap and sink."""
    base = dict(kind="check", Hkv=8, D=128, causal=True, kv="bf16")
    cases = [
        dict(base, name="check_ragged", B=5, Hq=32, Sq=1, capacity=1000),
        dict(base, name="check_gqa8_window", B=3, Hq=64, Sq=1, capacity=3000, window=700),
        dict(base, name="check_sq5_softcap_sink", B=4, Hq=16, Sq=5, capacity=520,
             softcap=30.0, sink=True, padding=True),
        dict(base, name="check_split_long", B=1, Hq=32, Sq=1, capacity=40000),
        dict(base, name="check_mha_d64", B=6, Hq=8, Hkv=8, Sq=2, D=64, capacity=300,
             padding=True),
        # Gemma's head dim (two resident blocks a multiprocessor).
        dict(base, name="check_d256", B=3, Hq=16, Sq=2, D=256, capacity=900, padding=True),
        # The decode kernel's other shapes (FP8): 16 query rows of one KV
        # head; pages of 8 keys (a warp's 16 keys on two pages) with two
        # query tokens; pages of 32 under a window.
        dict(base, name="check_mqa16", B=4, Hq=16, Hkv=1, Sq=1, capacity=2000),
        dict(base, name="check_page8", B=3, Hq=32, Sq=2, capacity=1500, page=8,
             padding=True),
        dict(base, name="check_page32_window", B=2, Hq=64, Sq=1, capacity=5000, page=32,
             window=1000),
    ]
    # Values past 2^7 * 448 (scales of 2^7 and more) take the FP8 kernel's
    # second dequantization path; keys stay small so that the scores do not
    # magnify bf16's rounding of them.
    large = dict(base, name="check_fp8_large_values", kv="fp8", B=3, Hq=16, Sq=1,
                 capacity=700, large_values=True)
    # Absorbed MLA (bf16 pools): two blocks of 64 heads a position at 128
    # heads, 4 positions a block at 16 (DeepSeek-V2-Lite), long enough for
    # split-KV; a smaller latent; and the same shape as one attention over a
    # whole prompt.
    mla = dict(base, Hkv=1, D=576, Dv=512, scale=MLA_SCALE, mla=True)
    mla_cases = [
        dict(mla, name="check_mla_h128", B=5, Hq=128, Sq=1, capacity=1000),
        dict(mla, name="check_mla_h128_sq2", B=3, Hq=128, Sq=2, capacity=700, padding=True),
        dict(mla, name="check_mla_h16_sq3", B=4, Hq=16, Sq=3, capacity=900, padding=True),
        dict(mla, name="check_mla_h128_split", B=1, Hq=128, Sq=1, capacity=20000),
        # A smaller latent (128 + rope 64): one warpgroup, values in the
        # keys' tile all the same.
        dict(mla, name="check_mla_d192_h32_sq2", B=3, Hq=32, Sq=2, D=192, Dv=128,
             capacity=800, padding=True),
        dict(mla, name="check_mla_dense_h128", kind="dense", B=1, Hq=128, Sq=150,
             capacity=150),
        # Selected keys (V3.2): fewer cached tokens than entries (-1 after
        # them), rows of several query tokens (a block a position), the
        # entries split over blocks, and the smaller latent.
        dict(mla, name="check_mla_sparse_h128", B=5, Hq=128, Sq=1, capacity=3000, topk=512,
             causal=False),
        dict(mla, name="check_mla_sparse_h16_sq3", B=4, Hq=16, Sq=3, capacity=900, topk=200,
             causal=False, padding=True),
        dict(mla, name="check_mla_sparse_split", B=1, Hq=128, Sq=1, capacity=40000,
             topk=2048, causal=False),
        dict(mla, name="check_mla_sparse_d192_h32_sq2", B=3, Hq=32, Sq=2, D=192, Dv=128,
             capacity=800, topk=100, causal=False, padding=True),
        # v32_dsa's latent (32 + rope 16): no whole 64-column panel, so
        # mma.sync on sm_90a too.
        dict(mla, name="check_mla_sparse_d48_h4_sq2", B=3, Hq=4, Sq=2, D=48, Dv=32,
             capacity=300, topk=8, causal=False, padding=True),
        # A prompt's sparse attention (mnemo.sparse_attention over
        # contiguous keys): the absorbed form at 128 heads, MQA 16/1 at D 128.
        dict(mla, name="check_mla_sparse_prompt_h128", kind="sparse_prompt", B=2, Hq=128,
             Sq=37, capacity=300, topk=64, causal=False),
        dict(mla, name="check_mla_sparse_prompt_mqa_d128", kind="sparse_prompt", B=2, Hq=16,
             Sq=37, D=128, Dv=128, capacity=300, topk=40, causal=False),
    ]
    mla_cases += [dict(c, name=c["name"].replace("check_mla", "check_mla_fp8"), kv="fp8")
                  for c in mla_cases if c["kind"] == "check"]
    return cases + [dict(c, name=c["name"].replace("check_", "check_fp8_"), kv="fp8")
                    for c in cases] + [large] + mla_cases


def pages_per_seq(case):
    return -(-case["capacity"] // case.get("page", PAGE))


def dv_of(case):
    return case.get("Dv", case["D"])


def dense_mlir(case):
    """The case's shape as one mnemo.attention over a whole prompt."""
    b, hq, hkv, sq, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D"))
    dv = dv_of(case)
    q, k = f"tensor<{b}x{hq}x{sq}x{d}xbf16>", f"tensor<{b}x{hkv}x{sq}x{d}xbf16>"
    v, o = f"tensor<{b}x{hkv}x{sq}x{dv}xbf16>", f"tensor<{b}x{hq}x{sq}x{dv}xbf16>"
    attrs = (" causal" if case["causal"] else "") + f" scale({case['scale']!r})"
    return (f"func.func @main(%q: {q}, %k: {k}, %v: {v}) -> {o} {{\n"
            f"  %o = mnemo.attention %q, %k, %v{attrs} : {q}, {k}, {v} -> {o}\n"
            f"  return %o : {o}\n}}\n")


def sparse_prompt_mlir(case):
    """The case's shape as one mnemo.sparse_attention over contiguous keys."""
    b, hq, hkv, sq, d, t = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D", "capacity"))
    dv, k = dv_of(case), case["topk"]
    q, kt = f"tensor<{b}x{hq}x{sq}x{d}xbf16>", f"tensor<{b}x{hkv}x{t}x{d}xbf16>"
    v, o = f"tensor<{b}x{hkv}x{t}x{dv}xbf16>", f"tensor<{b}x{hq}x{sq}x{dv}xbf16>"
    i = f"tensor<{b}x{sq}x{k}xi64>"
    return (f"func.func @main(%q: {q}, %k: {kt}, %v: {v}, %i: {i}) -> {o} {{\n"
            f"  %o = mnemo.sparse_attention %q, %k, %v, %i scale({case['scale']!r}) : "
            f"{q}, {kt}, {v}, {i} -> {o}\n"
            f"  return %o : {o}\n}}\n")


def input_sets(case):
    """How many disjoint page sets the timing rotates through."""
    if case["kind"] == "check":
        return 1
    kv = (case["B"] * case["Hkv"] * case["capacity"]
          * (case["D"] if case.get("mla") else case["D"] + dv_of(case)) * KV_BYTES[case["kv"]])
    return max(1, min(8, math.ceil(4 * L2_BYTES / kv)))


def paged_mlir(case):
    b, hq, hkv, sq, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D"))
    m = pages_per_seq(case)
    pages = input_sets(case) * b * m
    q = f"tensor<{b}x{hq}x{sq}x{d}xbf16>"
    o = f"tensor<{b}x{hq}x{sq}x{dv_of(case)}xbf16>"
    fp8 = case["kv"] == "fp8"
    page = case.get("page", PAGE)
    elem = 'f8E4M3FN' if fp8 else 'bf16'
    pool = f"tensor<{pages}x{hkv}x{page}x{d}x{elem}>"
    vpool = f"tensor<{pages}x{hkv}x{page}x{dv_of(case)}x{elem}>"
    scales = f"tensor<{pages}x{hkv}x{page}xf32>"
    table, lens, pos = f"tensor<{b}x{m}xi32>", f"tensor<{b}xi64>", f"tensor<{b}x{sq}xi64>"
    attrs = " causal" if case["causal"] else ""
    if case.get("scale"):
        attrs += f" scale({case['scale']!r})"
    if case.get("window"):
        attrs += f" window({case['window']})"
    if case.get("softcap"):
        attrs += f" softcap({case['softcap']})"
    sink_arg = f", %sink: tensor<{hq}xf32>" if case.get("sink") else ""
    if case.get("sink"):
        attrs += f" sink(%sink : tensor<{hq}xf32>)"
    scale_args = f", %ks: {scales}, %vs: {scales}" if fp8 else ""
    scale_use = f" scales(%ks, %vs : {scales}, {scales})" if fp8 else ""
    if fp8 and case.get("mla"):  # the values take their key row's scale
        scale_args = f", %ks: {scales}"
        scale_use = f" scales(%ks, %ks : {scales}, {scales})"
    # An MLA case's values are its keys' leading Dv features, one pool (as
    # a compiled DeepSeek checkpoint caches them).
    vp_arg, values = f", %vp: {vpool}", ""
    if case.get("mla"):
        vp_arg = ""
        values = (f"  %vp = tensor.extract_slice %kp[0, 0, 0, 0] [{pages}, {hkv}, {page}, "
                  f"{dv_of(case)}] [1, 1, 1, 1] : {pool} to {vpool}\n")
    idx_arg = ""
    if case.get("topk"):
        idx = f"tensor<{b}x{sq}x{case['topk']}xi64>"
        idx_arg = f", %idx: {idx}"
        attrs += f" indices(%idx : {idx})"
    return (f"func.func @paged(%q: {q}, %kp: {pool}{vp_arg}{scale_args}, "
            f"%table: {table}, %lens: {lens}, %pos: {pos}{sink_arg}{idx_arg}) -> {o} {{\n"
            f"{values}"
            f"  %o = mnemo.paged_attention %q, %kp, %vp{scale_use} table %table lengths %lens "
            f"positions %pos{attrs}\n"
            f"      : {q}, {pool}, {vpool}, {table}, {lens}, {pos} -> {o}\n"
            f"  return %o : {o}\n}}\n")


def prepare(a):
    def mlir_of(case):
        return (dense_mlir(case) if case["kind"] == "dense"
                else sparse_prompt_mlir(case) if case["kind"] == "sparse_prompt"
                else paged_mlir(case))

    def annotate(case):
        case["sets"] = input_sets(case)

    flags = ["--gpu-decode-kernel=false"] if a.general_kernel else []
    if a.decode_tma:
        flags.append("--gpu-decode-tma")
    prepare_cases(a, check_cases() + speed_cases(a.quick), mlir_of, flags, annotate)


def make_inputs(case, seed):
    """Pools, one block table per input set (disjoint pages, shuffled), lengths,
    positions and sink, as device tensors."""
    import torch
    g = torch.Generator(device="cpu").manual_seed(seed)
    gd = torch.Generator(device="cuda").manual_seed(seed)
    b, hq, hkv, sq, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D"))
    m, sets = pages_per_seq(case), case["sets"]
    pages = sets * b * m
    page = case.get("page", PAGE)
    kp = torch.randn(pages, hkv, page, d, generator=gd, device="cuda", dtype=torch.bfloat16)
    if case.get("mla"):  # the values are the keys' latent part
        vp = kp[..., :dv_of(case)]
    else:
        vp = torch.randn(pages, hkv, page, d, generator=gd, device="cuda",
                         dtype=torch.bfloat16)
    if case.get("large_values"):  # every third row's values near 2^17
        vp[:, :, ::3] *= 2.0 ** 17
    scales = None
    if case["kv"] == "fp8":  # as mnemo.kv_cache_write stores them
        kp, ks = quantize(kp)
        if case.get("mla"):  # one pool, one scale a row
            vp, vs = kp[..., :dv_of(case)], ks
        else:
            vp, vs = quantize(vp)
        scales = (ks, vs)
    perm = torch.randperm(pages, generator=g).to(torch.int32)
    tables = [perm[i * b * m:(i + 1) * b * m].reshape(b, m).cuda() for i in range(sets)]
    if case["kind"] == "speed":
        lens = torch.full((b,), case["capacity"], dtype=torch.int64)
    else:
        lens = torch.randint(sq, case["capacity"] + 1, (b,), generator=g)
        lens[0] = case["capacity"]
    pos = lens[:, None] - sq + torch.arange(sq)[None, :]
    if case.get("padding"):
        pos[-1, -1] = -1  # a padding query in the last sequence
        pos[0, 0] = -1
    q = torch.randn(b, hq, sq, d, generator=g).to(torch.bfloat16).cuda()
    sink = (torch.randn(hq, generator=g) * 2).float().cuda() if case.get("sink") else None
    idx = selections(case, lens, g) if case.get("topk") else None
    return q, kp, vp, tables, lens.cuda(), pos.cuda(), sink, scales, idx


def selections(case, lens, g):
    """[B, Sq, topk] int64 token indices. Speed: topk distinct tokens of the
    context, shuffled. Checks: up to topk distinct tokens below the
    sequence's length, -1 past them, then a token past the length, a
    negative one and a duplicate, shuffled."""
    import torch
    b, sq, k = case["B"], case["Sq"], case["topk"]
    idx = torch.full((b, sq, k), -1, dtype=torch.int64)
    for bi in range(b):
        n = int(lens[bi])
        for i in range(sq):
            row = torch.randperm(n, generator=g)[:k]
            idx[bi, i, :len(row)] = row
            if case["kind"] == "check" and k >= 8:
                idx[bi, i, 0] = n + 5
                idx[bi, i, 1] = -7
                idx[bi, i, 2] = idx[bi, i, 3]
            idx[bi, i] = idx[bi, i, torch.randperm(k, generator=g)]
    return idx.cuda()


def quantize(x):
    """FP8 E4M3 rows with a scale per row: max(amax / 448, 2^-126)."""
    import torch
    amax = x.float().abs().amax(dim=-1)
    scale = torch.clamp(amax / 448.0, min=2.0 ** -126)
    return (x.float() / scale[..., None]).to(torch.float8_e4m3fn), scale.contiguous()


def gathered(pool, scales, idx):
    """Pages `idx` of `pool` in float32 (FP8 times its scales; indexed as
    bytes, which every torch build can gather)."""
    import torch
    if scales is None:
        return pool[idx].float()
    raw = pool.view(torch.uint8)[idx].view(torch.float8_e4m3fn)
    return raw.float() * scales[idx][..., None]


def reference(case, q, kp, vp, table, lens, pos, sink, scales=None, indices=None):
    """float32 attention of each sequence over its gathered pages, as the op
    defines it (with `indices`, over the tokens each query lists)."""
    import torch
    b, hq, hkv, sq, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D"))
    dv = dv_of(case)
    g = hq // hkv
    scale = case.get("scale") or 1.0 / math.sqrt(d)
    out = torch.zeros(b, hq, sq, dv, dtype=torch.float32, device="cuda")
    for bi in range(b):
        n = int(lens[bi])
        idx = table[bi].long()
        ks, vs = scales if scales is not None else (None, None)
        k = gathered(kp, ks, idx)
        k = k.permute(1, 0, 2, 3).reshape(hkv, -1, d)[:, :n].float()
        v = gathered(vp, vs, idx)
        v = v.permute(1, 0, 2, 3).reshape(hkv, -1, dv)[:, :n].float()
        if indices is not None:
            out[bi] = selected_reference(case, q[bi], k, v, indices[bi], n, pos[bi], scale)
            continue
        # A KV head's g query heads as one [g Sq] block of rows (no copy of
        # K per query head: 38 GB for 128 heads at 128k).
        qg = q[bi].float().reshape(hkv, g * sq, d)
        s = torch.einsum("hqd,hkd->hqk", qg, k).reshape(hq, sq, n) * scale
        if case.get("softcap"):
            s = case["softcap"] * torch.tanh(s / case["softcap"])
        t = torch.arange(n, device="cuda")[None, :]
        p = pos[bi][:, None]
        seen = (p >= 0).expand(sq, n)
        if case["causal"]:
            seen = seen & (t <= p)
        if case.get("window"):
            seen = seen & (p - t < case["window"])
        s = s.masked_fill(~seen[None], float("-inf"))
        if sink is not None:
            s = torch.cat([s, sink[:, None, None].expand(hq, sq, 1)], dim=2)
        w = torch.softmax(s, dim=2).nan_to_num(0.0)
        if sink is not None:
            w = w[:, :, :n]
        o = torch.einsum("hqk,hkd->hqd", w.reshape(hkv, g * sq, n), v).reshape(hq, sq, dv)
        o[:, ~(p[:, 0] >= 0)] = 0.0
        out[bi] = o
    return out


def selected_reference(case, q, k, v, idx, n, pos, scale):
    """One sequence's attention over its queries' listed tokens: q [Hq, Sq,
    D], k [Hkv, n, D], v [Hkv, n, Dv], idx [Sq, topk]; entries outside
    [0, n) and padding queries see nothing; a token listed twice counts
    twice."""
    import torch
    g = case["Hq"] // case["Hkv"]
    valid = (idx >= 0) & (idx < n) & (pos[:, None] >= 0)
    safe = idx.clamp(0, n - 1)
    ks = k[:, safe].repeat_interleave(g, 0)  # [Hq, Sq, topk, D]
    vs = v[:, safe].repeat_interleave(g, 0)
    s = torch.einsum("hqd,hqkd->hqk", q.float(), ks) * scale
    s = s.masked_fill(~valid[None], float("-inf"))
    w = torch.softmax(s, dim=2).nan_to_num(0.0)
    return torch.einsum("hqk,hqkd->hqd", w, vs)


def check(case, plan, inputs):
    import torch
    from rowwise import worst_row_torch
    q, kp, vp, tables, lens, pos, sink, scales, idx = inputs
    plan.poison()
    plan(0)
    torch.cuda.synchronize()
    out = plan.output(list(q.shape[:3]) + [dv_of(case)], "bf16").float()
    ref = reference(case, q, kp, vp, tables[0], lens, pos, sink, scales, idx)
    rel, row = worst_row_torch(out, ref)
    finite = bool(torch.isfinite(out).all().item())
    # A padding query's row must be exactly zero.
    padding_zero = bool((out.permute(0, 2, 1, 3)[pos < 0] == 0).all().item())
    return {"rel": rel, "worst_row": list(row), "finite": finite, "padding_zero": padding_zero,
            "ok": finite and padding_zero and rel <= RTOL}


def dense_check(case, seed):
    """A "dense" case: its one attention against a float32 reference."""
    import torch
    from bench_attention import MnemoPlan
    from rowwise import worst_row_torch
    g = torch.Generator(device="cpu").manual_seed(seed)
    b, hq, hkv, sq, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D"))
    dv = dv_of(case)
    q = torch.randn(b, hq, sq, d, generator=g).to(torch.bfloat16).cuda()
    k = torch.randn(b, hkv, sq, d, generator=g).to(torch.bfloat16).cuda()
    v = k[..., :dv].contiguous()
    plan = MnemoPlan(os.path.join(case["dir"], case["name"] + ".plan.json"), [(q, k, v)])
    plan.poison()
    plan(0)
    torch.cuda.synchronize()
    out = plan.output([b, hq, sq, dv], "bf16").float()
    kf = k.float().repeat_interleave(hq // hkv, 1)
    vf = v.float().repeat_interleave(hq // hkv, 1)
    s = torch.einsum("bhqd,bhkd->bhqk", q.float(), kf) * case["scale"]
    if case["causal"]:
        s = s.masked_fill(torch.ones(sq, sq, device="cuda").triu(1).bool(), float("-inf"))
    ref = torch.einsum("bhqk,bhkd->bhqd", torch.softmax(s, -1), vf)
    rel, row = worst_row_torch(out, ref)
    finite = bool(torch.isfinite(out).all().item())
    return plan.kernels, {"rel": rel, "worst_row": list(row), "finite": finite,
                          "padding_zero": True, "ok": finite and rel <= RTOL}


def sparse_prompt_check(case, seed):
    """A "sparse_prompt" case: its one sparse attention against float32,
    over lists with -1, out-of-range, negative and duplicate entries."""
    import torch
    from bench_attention import MnemoPlan
    from rowwise import worst_row_torch
    g = torch.Generator(device="cpu").manual_seed(seed)
    b, hq, hkv, sq, d, t = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "D", "capacity"))
    dv, kk = dv_of(case), case["topk"]
    q = torch.randn(b, hq, sq, d, generator=g).to(torch.bfloat16).cuda()
    k = torch.randn(b, hkv, t, d, generator=g).to(torch.bfloat16).cuda()
    v = k[..., :dv].contiguous()
    idx = torch.stack([torch.stack([torch.randperm(t, generator=g)[:kk] for _ in range(sq)])
                       for _ in range(b)])
    idx[:, :, 0] = -1
    idx[:, ::3, 1] = t + 3
    idx[:, 1::3, 1] = -5
    idx[:, :, 2] = idx[:, :, 3]
    idx[0, 0, :] = -1  # a row without keys: zeros
    idx = idx.cuda()
    plan = MnemoPlan(os.path.join(case["dir"], case["name"] + ".plan.json"), [(q, k, v, idx)])
    plan.poison()
    plan(0)
    torch.cuda.synchronize()
    out = plan.output([b, hq, sq, dv], "bf16").float()
    ref = torch.zeros(b, hq, sq, dv, device="cuda")
    for bi in range(b):
        kf = k[bi].float()
        ref[bi] = selected_reference(case, q[bi], kf, kf[..., :dv], idx[bi], t,
                                     torch.zeros(sq, device="cuda"), case["scale"])
    rel, row = worst_row_torch(out, ref)
    finite = bool(torch.isfinite(out).all().item())
    empty_zero = bool((out[0, :, 0] == 0).all().item())
    return plan.kernels, {"rel": rel, "worst_row": list(row), "finite": finite,
                          "padding_zero": empty_zero,
                          "ok": finite and empty_zero and rel <= RTOL}


def run(a):
    import torch
    from bench_attention import MnemoPlan, bench, copy_ceiling
    out_dir = a.out or a.dir
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(a.dir, "cases.json")) as f:
        cases = [c for c in json.load(f) if not a.only or re.search(a.only, c["name"])]
    ceiling = copy_ceiling()
    print(f"copy ceiling: {ceiling['GBps']:.0f} GB/s", flush=True)
    results, failed = [], False
    for case in cases:
        entry = {"case": case}
        if case["kind"] in ("dense", "sparse_prompt"):
            checker = dense_check if case["kind"] == "dense" else sparse_prompt_check
            try:
                entry["kernels"], entry["check"] = checker(dict(case, dir=a.dir),
                                                           seed=len(results) + 1)
                failed |= not entry["check"]["ok"]
            except Exception as e:  # recorded, the run goes on
                entry["error"] = f"{type(e).__name__}: {e}"
                failed = True
            results.append(entry)
            print_row(entry, flush=True)
            continue
        inputs = make_inputs(case, seed=len(results) + 1)
        q, kp, vp, tables, lens, pos, sink, scales, idx = inputs
        pools = (kp,) if case.get("mla") else (kp, vp)
        scale_args = (scales[:1] if case.get("mla") else scales) if scales else ()
        sets = [(q,) + pools + scale_args + (t, lens, pos) +
                ((sink,) if sink is not None else ()) + ((idx,) if idx is not None else ())
                for t in tables]
        try:
            plan = MnemoPlan(os.path.join(a.dir, case["name"] + ".plan.json"), sets)
            entry["kernels"] = plan.kernels
            entry["check"] = check(case, plan, inputs)
            failed |= not entry["check"]["ok"]
            if case["kind"] == "speed":
                b, hq, hkv, d, ctx = (case[k] for k in ("B", "Hq", "Hkv", "D", "capacity"))
                dv, sq = dv_of(case), case["Sq"]
                row = ((d if case.get("mla") else d + dv) * KV_BYTES[case["kv"]]
                       + ((4 if case.get("mla") else 8) if case["kv"] == "fp8" else 0))
                keys = case.get("topk") or ctx  # the rows a query reads
                nbytes = b * hkv * keys * row + b * hq * sq * (d + dv) * 2
                stats = bench(plan, cap_s=5, max_reps=50, queued=True)
                entry["mnemo"] = dict(stats, GBps=nbytes / stats["ms"] / 1e6,
                                      of_copy=nbytes / stats["ms"] / 1e6 / ceiling["GBps"])
                if case.get("mla"):  # S and P V, causal or not: every key
                    entry["mnemo"]["TFLOPs"] = (2 * b * hq * sq * keys * (d + dv)
                                                / stats["ms"] / 1e9)
                # The same calls with the host's launch time in them (the
                # device idle until the launches are made).
                entry["mnemo"]["with_launch_ms"] = bench(plan, cap_s=2, max_reps=30)["ms"]
                # Each kernel alone (the attention, and with split-KV the
                # combine), so that the combine's share shows.
                if len(plan.kernels) > 1:
                    entry["mnemo"]["kernel_ms"] = [
                        bench(lambda i, k=k: plan.launch(i, k), cap_s=2, max_reps=30,
                              queued=True)["ms"]
                        for k in range(len(plan.kernels))]
                # The peers read bf16 caches (timed with the bf16 cases).
                if case.get("mla"):
                    entry["peers"] = mla_peers(case)
                else:
                    entry["peers"] = peers(case, nbytes) if case["kv"] == "bf16" else {}
        except Exception as e:  # recorded, the run goes on
            entry["error"] = f"{type(e).__name__}: {e}"
            failed = True
        results.append(entry)
        print_row(entry, flush=True)
        del inputs, sets
        torch.cuda.empty_cache()
        with open(os.path.join(out_dir, "paged_decode.json"), "w") as f:
            json.dump({"copy_ceiling": ceiling, "results": results}, f, indent=1)
    return 1 if failed else 0


def peers(case, nbytes):
    """torch SDPA (flash, cuDNN) on contiguous caches of the same shapes."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from bench_attention import bench
    b, hq, hkv, d, ctx = (case[k] for k in ("B", "Hq", "Hkv", "D", "capacity"))
    sets = max(1, min(8, math.ceil(4 * L2_BYTES / (2 * b * hkv * ctx * d * 2))))
    data = [(torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16),
             torch.randn(b, hkv, ctx, d, device="cuda", dtype=torch.bfloat16),
             torch.randn(b, hkv, ctx, d, device="cuda", dtype=torch.bfloat16))
            for _ in range(sets)]
    out = {}
    g = hq // hkv
    for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        note, sets_of = None, data
        try:
            with sdpa_kernel(backend):
                def fn(i):
                    return F.scaled_dot_product_attention(*sets_of[i % len(sets_of)],
                                                          enable_gqa=note is None)
                try:
                    fn(0)
                except RuntimeError:
                    # enable_gqa refused: K/V expanded to Hq heads outside the timing.
                    note = "enable_gqa refused: K/V expanded to Hq heads (bytes counted at Hkv)"
                    sets_of = [(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1))
                               for q, k, v in data[:1]]
                    fn(0)
                stats = bench(fn, cap_s=5, max_reps=50, queued=True)
            out[name] = dict(stats, GBps=nbytes / stats["ms"] / 1e6)
            if note:
                out[name]["note"] = note
        except RuntimeError as e:
            out[name] = {"error": str(e).splitlines()[0][:200]}
        sets_of = None
        torch.cuda.empty_cache()
    return out


def mla_peers(case):
    """Eager PyTorch's absorbed MLA decode over a contiguous latent cache
    [B, ctx, D] (the values its first Dv columns): S = Q C^T and O = P C_v
    as bf16 batched matmuls, the softmax in f32, as DeepSeek's reference
    code computes it; GB/s counted on the cache it reads (D values a
    token) + Q + O."""
    import torch
    from bench_attention import bench
    b, hq, sq, d, ctx = (case[k] for k in ("B", "Hq", "Sq", "D", "capacity"))
    dv, topk = dv_of(case), case.get("topk")
    sets = max(1, min(8, math.ceil(4 * L2_BYTES / (b * ctx * d * 2))))
    data = [(torch.randn(b, hq * sq, d, device="cuda", dtype=torch.bfloat16),
             torch.randn(b, ctx, d, device="cuda", dtype=torch.bfloat16))
            for _ in range(sets)]
    scale = case["scale"]
    # Sparse: each sequence's topk selected rows, gathered first (one query
    # token).
    sel = (torch.stack([torch.randperm(ctx, device="cuda")[:topk] for _ in range(b)])
           if topk else None)

    def fn(i):
        q, c = data[i % len(data)]
        if sel is not None:
            c = torch.gather(c, 1, sel[..., None].expand(-1, -1, d))
        s = torch.matmul(q, c.transpose(1, 2)).float() * scale
        p = torch.softmax(s, dim=-1).to(torch.bfloat16)
        return torch.matmul(p, c[..., :dv])
    nbytes = b * (topk or ctx) * d * 2 + b * hq * sq * (d + dv) * 2
    try:
        fn(0)
        stats = bench(fn, cap_s=5, max_reps=50, queued=True)
        out = {"eager_mla": dict(stats, GBps=nbytes / stats["ms"] / 1e6)}
    except RuntimeError as e:
        out = {"eager_mla": {"error": str(e).splitlines()[0][:200]}}
    del data
    torch.cuda.empty_cache()
    return out


def print_row(entry, flush=False):
    c = entry["case"]
    line = f"{c['name']:<28}"
    if "error" in entry:
        line += f" ERROR {entry['error'][:160]}"
    else:
        ch = entry["check"]
        line += f" check {'ok' if ch['ok'] else 'FAIL'} rel {ch['rel']:.1e}"
        if "mnemo" in entry:
            m = entry["mnemo"]
            line += f" | mnemo {m['ms'] * 1e3:8.1f} us {m['GBps']:6.0f} GB/s {m['of_copy']:.2f} of copy"
            if "TFLOPs" in m:
                line += f" {m['TFLOPs']:.0f} TFLOP/s"
            if "kernel_ms" in m:
                line += " (" + " + ".join(f"{t * 1e3:.1f}" for t in m["kernel_ms"]) + " us)"
            if "with_launch_ms" in m:
                line += f" [with launch {m['with_launch_ms'] * 1e3:.1f} us]"
            for name, p in entry["peers"].items():
                if "ms" in p:
                    line += f" | {name} {p['GBps']:6.0f} GB/s x{p['ms'] / m['ms']:.2f}"
                else:
                    line += f" | {name} error"
        line += f" [{' '.join(entry['kernels'])}]"
    print(line, flush=flush)


def prepare_options(p):
    p.add_argument("--quick", action="store_true")
    p.add_argument("--general-kernel", action="store_true",
                   help="FP8 pools' decode steps on the general kernel, not the decode "
                        "kernel (mnemoc --gpu-decode-kernel=false)")
    p.add_argument("--decode-tma", action="store_true",
                   help="the decode kernel copies FP8 pages by TMA boxes "
                        "(mnemoc --gpu-decode-tma)")


if __name__ == "__main__":
    sys.exit(main(__doc__.splitlines()[0], prepare, run, prepare_options))
