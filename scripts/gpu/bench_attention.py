#!/usr/bin/env python3
"""GPU attention benchmark: Mnemo's PTX kernels against the usual peers, in one process.

Two phases, because mnemoc runs where LLVM is and the kernels run on a GPU:

    python3 scripts/gpu/bench_attention.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
        [--mnemo-run MNEMOC_DIR/mnemo-run] [--target sm_90a] [--dtype f32|bf16] [--quick]

writes, for every benchmark case, a static-shape `mnemo.attention` model
(CASE.mlir), its artifact (CASE.mnemo, `mnemoc --target=...`, holding the
PTX), the artifact's launch plan as JSON (CASE.plan.json, `mnemo-run
CASE.mnemo --dump-plan`, read by plan.py) and OUT_DIR/cases.json. The cases
of a dynamic series ("dynamic": true) share one artifact instead, compiled
once from a model whose batch and sequence dims are `?` (dyn_*.mlir,
.mnemo, .plan.json), its plan read at each case's shapes. A case mnemoc
rejects, or whose plan cannot be dumped or read (at its shapes), is
recorded there with its error instead of stopping the run.

    python3 scripts/gpu/bench_attention.py run OUT_DIR [--out RESULTS_DIR] [--budget-s 480]
        [--peers flash,cudnn,...] [--only REGEX]

runs on the GPU machine (torch, CuPy, numpy; matplotlib for the plot). For each
case: fresh random normal inputs; Mnemo's output and temporaries poisoned with
NaN bytes; Mnemo's kernels (the PTX inside the artifact) launched as the plan
says, a dynamic plan evaluated at the case's shapes (CuPy RawModule, buffers
owned by torch, on torch's current stream; the kernels launched recorded,
since a dynamic plan's depend on the shape); the output checked against a
float32 reference in the same run (torch SDPA math backend, chunked, TF32
off): relative error ||out - ref|| / ||ref||, max |diff|, NaN fails; then
Mnemo and the peers timed on the same shapes: torch SDPA with the flash, cuDNN
and memory-efficient backends and FlexAttention in bf16, SDPA efficient and
math in float32 (Mnemo's dtype today). GQA peers get `enable_gqa=True` (K/V
expanded to Hq heads, outside the timing, for a backend that refuses it).

Timing follows the baselines method: CUDA events around each call, warm-up, median,
input sets rotated when one set is smaller than a few L2 sizes. Cases run
cheapest first; each gets the remaining budget over the remaining cases, and
an implementation whose call is predicted (from its rate on smaller cases,
calls of 1 ms or more) to take longer than its share is skipped and
reported as such, so a slow kernel costs repetitions, not the run.
FlexAttention, after an error, sits out the rest of that case's series.
FLOPs = 4*B*Hq*Sq*Skv*D, halved for causal (with a window, the keys each
query sees); bytes = Q + K + V + O once each in the implementation's dtype.
The softcap and window series (Gemma-2's 50, Mistral's 1024) run where the
dense causal series does, for the kernel's efficiency against it; only
FlexAttention among the peers takes them (the same score_mod and block
mask), the SDPA backends are skipped there. The decode series at B64 and
4k keys covers every KV head count from 32 down to MQA.
TFLOP/s is the prefill metric, GB/s the decode one; a ratio is Mnemo's speed
over the peer's (peer time / Mnemo time), the same for either metric's work.

Prints the device copy ceiling and one table (after it, the kernels each
dynamic case launched at its shape); writes RESULTS_DIR/results.json (each
Mnemo entry with the kernels it launched; after every case, so a killed run
leaves what it measured) and RESULTS_DIR/attention_throughput.png. Exits 1
when a Mnemo output fails its check or its kernels fail to run; a case
mnemoc could not compile, or one skipped for time, is reported but does not
fail the run.
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:  # plan.py, check_ptx.py, rowwise.py beside this script
    sys.path.insert(0, HERE)
CASES_FILE = "cases.json"
PLOT_FILE = "attention_throughput.png"
# Relative-error bound of Mnemo's output per input dtype (f32 arithmetic
# lands far below 1e-4; bf16 inputs are compared with a reference computed
# on the same bf16 values, so the bound covers bf16 intermediates).
RTOL = {"f32": 1e-4, "bf16": 2e-2, "f16": 5e-3}
ELEMENT_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "i64": 8}
PREFILL_SEQS = (1024, 2048, 4096, 8192, 16384)
# The lengths one dynamic artifact runs at: below one query tile, a few
# tiles, and the static series' 4096 (the same shape, compiled statically).
DYNAMIC_SEQS = (7, 40, 300, 4096)
DECODE_KV = (2048, 8192, 32768, 131072)
# Peers: name -> (dtype, SDPA backend name or "flex").
PEERS = {
    "flash": ("bf16", "FLASH_ATTENTION"),
    "cudnn": ("bf16", "CUDNN_ATTENTION"),
    "efficient": ("bf16", "EFFICIENT_ATTENTION"),
    "flex": ("bf16", "flex"),
    "f32_efficient": ("f32", "EFFICIENT_ATTENTION"),
    "f32_math": ("f32", "MATH"),
}


# --------------------------------------------------------------------------
# prepare (no GPU, no third-party modules)
# --------------------------------------------------------------------------

def make_case(name, series, kind, b, hq, hkv, sq, skv, d, causal, dtype, dynamic=False,
              softcap=None, window=None, mnemoc_args=()):
    """One manifest entry; `series` groups the cases drawn as one line;
    `dynamic`: run by the artifact with dynamic batch and sequence dims that
    the cases of the same heads, head dim and mask share (artifact_stem);
    `softcap`: scores capped as cap * tanh(s / cap) (Gemma-2's 50);
    `window`: a query sees the `window` most recent keys (Mistral's sliding
    window); `mnemoc_args`: extra options of the case's compile."""
    case = {"name": name, "series": series, "kind": kind, "B": b, "Hq": hq, "Hkv": hkv,
            "Sq": sq, "Skv": skv, "D": d, "causal": causal, "dtype": dtype, "dynamic": dynamic}
    if softcap is not None:
        case["softcap"] = softcap
    if window is not None:
        case["window"] = window
    if mnemoc_args:
        case["mnemoc_args"] = list(mnemoc_args)
    return case


def softcap_cases(dtype, seqs):
    """The GQA prefill series again with Gemma-2's softcap of 50, to set
    beside the same shapes without it (issue #18: at least 0.85 of their
    speed). Only FlexAttention among the peers caps scores."""
    return [make_case(f"prefill_gqa_causal_s{s}_softcap50",
                      "prefill GQA 32/8 causal softcap 50, B4 D128", "prefill", 4, 32, 8, s, s,
                      128, True, dtype, softcap=50.0) for s in seqs]


def group_cases(dtype, kv_heads):
    """Decode at B64 over 4k keys with 32 query heads and each number of KV
    heads down to MQA (issue #18: every group size at least 0.90 of the
    copy bandwidth)."""
    return [make_case(f"decode_b64_h32_kv{h}_ctx4096", "decode B64 ctx 4096, 32 query heads",
                      "decode", 64, 32, h, 1, 4096, 128, False, dtype) for h in kv_heads]


def window_cases(dtype, seqs, window=1024):
    """The GQA prefill series with Mistral's sliding window, to set beside
    dense causal per FLOP (issue #18: at least 0.95); FLOPs count the keys
    each query sees. Only FlexAttention among the peers takes a window."""
    return [make_case(f"prefill_gqa_causal_s{s}_window{window}",
                      f"prefill GQA 32/8 causal window {window}, B4 D128", "prefill", 4, 32, 8,
                      s, s, 128, True, dtype, window=window) for s in seqs]


def head_dim_cases(dtype):
    """Head dims 64 and 256 (Gemma-2's: 16 query and 8 KV heads), causal and
    not (issue #18: at least cuDNN's speed)."""
    cases = []
    for d, (hq, hkv), b in ((64, (32, 8), 8), (256, (16, 8), 4)):
        for s in (4096, 8192):
            for causal in (True, False):
                kind = "causal" if causal else "non-causal"
                cases.append(make_case(
                    f"prefill_gqa_{'causal_' if causal else ''}s{s}_d{d}",
                    f"prefill GQA {hq}/{hkv} {kind}, B{b} D{d}", "prefill", b, hq, hkv, s,
                    s, d, causal, dtype))
    return cases


def benchmark_cases(dtype, quick):
    """The benchmark's shapes (issue #6 item 5); `quick` keeps a small subset."""
    gqa = "prefill GQA 32/8 causal, B4 D128"
    decode = "decode GQA 32/8, B32 D128"
    dynamic = [make_case(f"prefill_dyn_gqa_causal_s{s}",
                         "prefill GQA 32/8 causal, B4 D128, one dynamic artifact", "prefill", 4,
                         32, 8, s, s, 128, True, dtype, dynamic=True)
               for s in ((300, 4096) if quick else DYNAMIC_SEQS)]
    if quick:
        return ([make_case(f"prefill_gqa_causal_s{s}", gqa, "prefill", 4, 32, 8, s, s, 128,
                           True, dtype) for s in (1024, 4096)]
                + dynamic
                + [make_case("decode_gqa_kv8192", decode, "decode", 32, 32, 8, 1, 8192, 128,
                             False, dtype),
                   make_case("decode_b1_gqa_kv8192", "decode GQA 32/8, B1 D128", "decode", 1,
                             32, 8, 1, 8192, 128, False, dtype)]
                + softcap_cases(dtype, (4096,)) + window_cases(dtype, (4096,))
                + group_cases(dtype, (1,)))
    mha = "prefill MHA causal, B4 H32 D128"
    cases = [make_case(f"prefill_mha_causal_s{s}", mha, "prefill", 4, 32, 32, s, s, 128, True,
                       dtype) for s in PREFILL_SEQS]
    cases.append(make_case("prefill_mha_s4096", "prefill MHA non-causal, B4 H32 D128", "prefill",
                           4, 32, 32, 4096, 4096, 128, False, dtype))
    cases += [make_case(f"prefill_gqa_causal_s{s}", gqa, "prefill", 4, 32, 8, s, s, 128, True,
                        dtype) for s in PREFILL_SEQS]
    cases += softcap_cases(dtype, (4096, 16384))
    cases += window_cases(dtype, (4096, 16384))
    cases += group_cases(dtype, (32, 8, 4, 2, 1))
    cases += dynamic
    cases.append(make_case("prefill_mha_d64_causal_s2048", "prefill MHA causal, B8 H16 D64",
                           "prefill", 8, 16, 16, 2048, 2048, 64, True, dtype))
    cases += head_dim_cases(dtype)
    cases += [make_case(f"decode_gqa_kv{n}", decode, "decode", 32, 32, 8, 1, n, 128, False,
                        dtype) for n in DECODE_KV]
    # One sequence: too few blocks for the GPU without split-KV.
    cases += [make_case(f"decode_b1_gqa_kv{n}", "decode GQA 32/8, B1 D128", "decode", 1, 32, 8,
                        1, n, 128, False, dtype) for n in DECODE_KV]
    return cases


def attention_mlir(case):
    """`func.func @main(%q, %k, %v)` computing one `mnemo.attention`: of the
    case's static shapes, or for a dynamic case with its batch and sequence
    dims `?`."""
    batch, sq, skv = ("?", "?", "?") if case.get("dynamic") else (case["B"], case["Sq"],
                                                                   case["Skv"])

    def tensor(heads, seq):
        return f"tensor<{batch}x{heads}x{seq}x{case['D']}x{case['dtype']}>"
    q, kv = tensor(case["Hq"], sq), tensor(case["Hkv"], skv)
    causal = " causal" if case["causal"] else ""
    if case.get("window") is not None:
        causal += f" window({case['window']})"
    if case.get("softcap") is not None:
        causal += f" softcap({case['softcap']!r})"
    return (f"func.func @main(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %r = mnemo.attention %q, %k, %v{causal} : {q}, {kv}, {kv} -> {q}\n"
            f"  return %r : {q}\n}}\n")


def input_shapes(case):
    """The shapes of the case's q, k and v."""
    return [[case["B"], case["Hq"], case["Sq"], case["D"]],
            [case["B"], case["Hkv"], case["Skv"], case["D"]],
            [case["B"], case["Hkv"], case["Skv"], case["D"]]]


def artifact_stem(case):
    """The name of the case's files without extension: the case's own, or
    for a dynamic case that of the artifact shared by the dynamic cases of
    the same model (heads, head dim, mask)."""
    if not case.get("dynamic"):
        return case["name"]
    return (f"dyn_h{case['Hq']}_kv{case['Hkv']}_d{case['D']}"
            + ("_causal" if case["causal"] else ""))


def compile_artifact(stem, case, out_dir, mnemoc, mnemo_run, target):
    """Writes STEM.mlir (the case's model), compiles it into STEM.mnemo and
    dumps its plan into STEM.plan.json (read at the case's shapes); returns
    None, or the error, the files then removed."""
    from plan import PlanError, dump_plan  # beside this script
    src = os.path.join(out_dir, stem + ".mlir")
    artifact = os.path.join(out_dir, stem + ".mnemo")
    plan_json = os.path.join(out_dir, stem + ".plan.json")
    with open(src, "w") as f:
        f.write(attention_mlir(case))
    for stale in (artifact, plan_json):
        if os.path.exists(stale):
            os.remove(stale)
    cmd = [mnemoc, src, f"--target={target}", "-o", artifact] + case.get("mnemoc_args", [])
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        error = None if r.returncode == 0 else (
            f"mnemoc exited {r.returncode}: " + (r.stderr.strip() or r.stdout.strip())[-2000:])
    except (OSError, subprocess.TimeoutExpired) as e:
        error = f"{type(e).__name__}: {e}"
    if error is None and not os.path.exists(artifact):
        error = "mnemoc wrote no artifact"
    if error is None:
        try:
            dump_plan(mnemo_run, artifact, plan_json, timeout=300, shapes=input_shapes(case))
        except PlanError as e:
            error = str(e)
    if error is not None:
        for path in (artifact, plan_json):
            if os.path.exists(path):
                os.remove(path)
    return error


def compile_case(case, out_dir, mnemoc, mnemo_run, target, built):
    """Compiles the case's artifact (compile_artifact; a dynamic case's only
    when `built`, {stem: error or None}, does not hold it yet) and reads its
    plan at the case's shapes; sets case['mlir'], case['artifact'],
    case['plan'] and case['code_bytes'], or case['error']."""
    from plan import PlanError, load_plan  # beside this script
    stem = artifact_stem(case)
    if stem not in built:
        built[stem] = compile_artifact(stem, case, out_dir, mnemoc, mnemo_run, target)
    case["mlir"] = stem + ".mlir"
    error = built[stem]
    if error is None:
        try:
            plan = load_plan(os.path.join(out_dir, stem + ".plan.json"),
                             shapes=input_shapes(case))
            case.update(artifact=stem + ".mnemo", plan=stem + ".plan.json",
                        code_bytes=plan["code"]["size"])
        except PlanError as e:
            error = str(e)
    if error is not None:
        case["error"] = error


def prepare(a):
    """`prepare`: writes the cases' MLIR, artifacts, plans and cases.json into a.cases."""
    os.makedirs(a.cases, exist_ok=True)
    cases, built = benchmark_cases(a.dtype, a.quick), {}
    for case in cases:
        compile_case(case, a.cases, a.mnemoc, a.mnemo_run, a.target, built)
        status = f"{case['code_bytes']} bytes of PTX" if "plan" in case else "FAILED"
        if case["dynamic"]:
            status += f" (dynamic: {artifact_stem(case)}.mnemo)"
        print(f"{case['name']:32} {status}", flush=True)
    with open(os.path.join(a.cases, CASES_FILE), "w") as f:
        json.dump({"target": a.target, "dtype": a.dtype, "cases": cases}, f, indent=1)
    total = sum(os.path.getsize(os.path.join(a.cases, n)) for n in os.listdir(a.cases)
                if os.path.isfile(os.path.join(a.cases, n)))
    failed = [c["name"] for c in cases if "error" in c]
    print(f"{len(cases) - len(failed)} of {len(cases)} cases compiled; {total / 2**20:.1f} MiB "
          f"in {a.cases}")
    for c in cases:
        if "error" in c:
            print(f"  {c['name']}: {c['error'].splitlines()[0]}")
    if total > 48 * 2**20:
        print("warning: the prepared files exceed 48 MiB; they may not travel to the GPU machine")


# --------------------------------------------------------------------------
# run (on the GPU)
# --------------------------------------------------------------------------

def torch_dtype(name):
    """The torch dtype of an MLIR element type name."""
    import torch
    return {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
            "i64": torch.int64}[name]


def work(case, dtype):
    """(FLOPs, bytes) of one call: 4*B*Hq*Sq*Skv*D (halved if causal; with a
    window W, 4*B*Hq*D times the keys the queries see, sum of min(i + 1, W)),
    Q+K+V+O once."""
    b, hq, hkv, sq, skv, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "Skv", "D"))
    flops = 4 * b * hq * sq * skv * d * (0.5 if case["causal"] else 1.0)
    w = case.get("window")
    if w is not None:  # causal, Sq == Skv
        seen = w * (w + 1) // 2 + (sq - w) * w if sq >= w else sq * (sq + 1) // 2
        flops = 4 * b * hq * d * seen
    elements = 2 * b * hq * sq * d + 2 * b * hkv * skv * d
    return flops, elements * ELEMENT_BYTES[dtype]


# GPU clock cycles of the sleep that keeps the device busy while the host
# enqueues a queued call (event_ms); doubled whenever it proved too short.
_queue_cycles = [1 << 20]


def event_ms(fn, i, queued=False):
    """Milliseconds of fn(i) on the current stream, by CUDA events.

    Unqueued, the time includes whatever the host spends launching fn's
    kernels while the device waits (tens of microseconds through Python,
    the whole time of a short kernel). Queued, a sleep kernel ahead of the
    start event keeps the device busy until fn's launches are all enqueued,
    as in a decode loop that runs ahead of the device, so the events time
    the device's work alone (its gaps between fn's kernels included). A
    sleep that ended before the host was done is detected (the start event
    already complete) and the call timed again behind a longer one.
    """
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    while True:
        if queued:
            torch.cuda._sleep(_queue_cycles[0])
        start.record()
        fn(i)
        end.record()
        if queued and start.query():  # the device may have waited for the host
            end.synchronize()
            _queue_cycles[0] *= 2
            continue
        end.synchronize()
        return start.elapsed_time(end)


def bench(fn, cap_s, last_ms=None, warmup=1, max_reps=30, queued=False):
    """Median time of fn(i) by CUDA events, i the call number (to rotate input sets);
    `queued`: the device's time alone (event_ms).

    The caller has made the cold call (loading, compiling, autotuning). If it
    was warm enough to count, last_ms is its time: it counts against cap_s and
    is the result when no further call fits. Calls stop once the next one
    (estimated by the fastest so far) would pass cap_s, or after warmup +
    max_reps calls; the first `warmup` are dropped when later ones exist.
    """
    samples, spent, estimate = [], last_ms or 0.0, last_ms
    while len(samples) < warmup + max_reps:
        if estimate is not None and spent + estimate > cap_s * 1e3:
            break
        t = event_ms(fn, len(samples) + 1, queued)
        samples.append(t)
        spent += t
        estimate = min(samples)
    if not samples:
        return {"ms": last_ms, "min_ms": last_ms, "max_ms": last_ms, "reps": 1,
                "note": "one call only (the checked one): no other fit its time share"}
    timed = samples[warmup:] or samples[-1:]
    return {"ms": statistics.median(timed), "min_ms": min(timed), "max_ms": max(timed),
            "reps": len(timed)}


def input_sets(case, dtype, l2_bytes):
    """Fresh random (q, k, v) sets; several when one set is smaller than 4x L2."""
    import torch
    b, hq, hkv, sq, skv, d = (case[k] for k in ("B", "Hq", "Hkv", "Sq", "Skv", "D"))
    one = (b * hq * sq * d + 2 * b * hkv * skv * d) * ELEMENT_BYTES[dtype]
    count = 1 if one >= 4 * l2_bytes else min(8, math.ceil(4 * l2_bytes / one))
    t = torch_dtype(dtype)
    return [(torch.randn(b, hq, sq, d, device="cuda", dtype=t),
             torch.randn(b, hkv, skv, d, device="cuda", dtype=t),
             torch.randn(b, hkv, skv, d, device="cuda", dtype=t)) for _ in range(count)]


def capped_attention(q, k, v, mask, g, softcap):
    """float32 attention with capped scores, cap * tanh(s / cap), written out
    (SDPA has no softcap); mask is True where a key is seen."""
    import torch
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    s = softcap * torch.tanh(s / softcap)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def reference(q, k, v, causal, softcap=None, window=None, budget_bytes=4 << 30):
    """float32 attention by torch's SDPA math backend (written out with a
    softcap), chunked over batch, KV heads and query rows so that scores and
    the expanded K/V stay within budget_bytes."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, hq, sq, d = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    g = hq // hkv
    heads = hkv  # KV heads per call; the math backend expands K/V to g heads each
    while heads > 1 and heads * g * skv * d * 8 > budget_bytes // 2:
        heads = max(h for h in range(1, heads) if hkv % h == 0)
    kv_bytes = heads * g * skv * d * 8
    rows = max(1, min(sq, (budget_bytes - kv_bytes) // max(1, heads * g * skv * 12)))
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    cols = torch.arange(skv, device=q.device)[None, :]
    with sdpa_kernel(SDPBackend.MATH):
        for bi in range(b):
            for h0 in range(0, hkv, heads):
                qs = q[bi:bi + 1, h0 * g:(h0 + heads) * g]
                ks = k[bi:bi + 1, h0:h0 + heads].float()
                vs = v[bi:bi + 1, h0:h0 + heads].float()
                for r0 in range(0, sq, rows):
                    r1 = min(sq, r0 + rows)
                    seen, mask = skv, None
                    if causal:  # rows r0..r1-1 see keys 0..r1-1
                        seen = min(skv, r1)
                        rows_i = torch.arange(r0, r1, device=q.device)[:, None]
                        mask = cols[:, :seen] <= rows_i
                        if window is not None:  # and only the last `window`
                            mask = mask & (rows_i - cols[:, :seen] < window)
                    rows_q = qs[:, :, r0:r1].float()
                    out[bi:bi + 1, h0 * g:(h0 + heads) * g, r0:r1] = (
                        capped_attention(rows_q, ks[:, :, :seen], vs[:, :, :seen], mask, g,
                                         softcap) if softcap is not None else
                        F.scaled_dot_product_attention(rows_q, ks[:, :, :seen], vs[:, :, :seen],
                                                       attn_mask=mask, enable_gqa=g > 1))
    return out


def check(out, q, k, v, causal, rtol, softcap=None, window=None):
    """Compares Mnemo's output with the float32 reference row by row (each
    query row of each head within rtol, rowwise.py); NaN or Inf fails."""
    import torch
    from rowwise import worst_row_torch  # beside this script
    ref = reference(q, k, v, causal, softcap, window)
    diff = out.float() - ref
    norm = torch.linalg.vector_norm(ref, dtype=torch.float64).item()
    whole = torch.linalg.vector_norm(diff, dtype=torch.float64).item() / max(norm, 1e-30)
    rel, row = worst_row_torch(out.float(), ref)
    finite = bool(torch.isfinite(out).all().item())
    max_abs = diff.abs().max().item()
    return {"rel": rel, "worst_row": list(row), "rel_whole": whole, "max_abs": max_abs,
            "finite": finite, "rtol": rtol, "ok": finite and rel <= rtol}


class MnemoPlan:
    """Mnemo's PTX module with its launch plan bound to torch-owned device buffers.

    The plan is CASE.plan.json (plan.py's load_plan: its `function`, by
    default the first; a dynamic plan at the input `shapes`, which every
    set has), the PTX the one inside the
    artifact; `kernels` names the kernels launched, in order. Inputs are the
    function's inputs in order (q, k, v) for each input set; temporaries (the
    output among them) are allocated once and shared by the sets, and
    weights (none in the benchmarks' cases) uploaded once from the artifact.
    Tensor map buffers are encoded once per input set, over that set's
    buffers, after the others exist; they are not temporaries and are never
    poisoned. Kernels take base addresses (bare pointers), passed as 64-bit
    integers.
    """

    def __init__(self, plan_path, sets, shapes=None, function=None):
        import numpy as np
        import torch
        from check_ptx import load_module, plan_launches  # beside this script
        from plan import buffer_weight_bytes, load_plan
        # Refuses a plan the runtime reports as unsupported, or a dynamic one
        # without shapes.
        plan = load_plan(plan_path, function=function, shapes=shapes)
        self.module = load_module(plan)
        self.kernels = [launch["kernel"] for launch in plan["launches"]]
        self.temporaries, self.weights = {}, {}
        for idx, buf in enumerate(plan["buffers"]):
            kind, size = buf["kind"], buf["bytes"]
            if kind == "temporary":
                self.temporaries[idx] = torch.empty(max(size, 1), dtype=torch.uint8,
                                                    device="cuda")
            elif kind == "weight":
                data = bytearray(buffer_weight_bytes(plan, idx))
                self.weights[idx] = torch.frombuffer(data, dtype=torch.uint8).to("cuda")
            elif kind == "input" and sets[0][buf["input"]].nbytes != size:
                raise RuntimeError(f"buffer {idx}: plan says {size} bytes, input "
                                   f"{buf['input']} has {sets[0][buf['input']].nbytes}")
        self.tensor_maps = []  # per input set: {index: 128-byte device tensor}
        self.launches = []  # per input set: [(kernel, grid, block, args, shared)]
        for inputs in sets:
            maps = self.encode_maps(plan, inputs)
            self.tensor_maps.append(maps)

            def buffer_arg(index, inputs=inputs, maps=maps):
                return np.uint64(self.buffer(plan, index, inputs, maps).data_ptr())
            self.launches.append(plan_launches(self.module, plan, buffer_arg))
        self.output_buffer = plan["output_buffers"][0]
        if self.output_buffer not in self.temporaries:
            raise RuntimeError("the output is not a temporary buffer")

    def buffer(self, plan, index, inputs, maps=None):
        """The device tensor of plan buffer `index` when running input set
        `inputs` with that set's tensor maps `maps`."""
        buf = plan["buffers"][index]
        if buf["kind"] == "input":
            return inputs[buf["input"]]
        if buf["kind"] == "tensor_map":
            return maps[index]
        return self.weights[index] if buf["kind"] == "weight" else self.temporaries[index]

    def encode_maps(self, plan, inputs):
        """The plan's tensor map buffers over input set `inputs`, the weights
        and the temporaries: {index: 128 encoded bytes on the device}."""
        import torch
        from check_ptx import encode_tensor_map  # beside this script
        from plan import tensor_map_source
        maps = {}
        for idx in plan["tensor_maps"]:
            src, desc = tensor_map_source(plan, idx)
            source = self.buffer(plan, src, inputs)
            encoded = encode_tensor_map(desc, source.data_ptr(), source.nbytes)
            maps[idx] = torch.frombuffer(bytearray(encoded), dtype=torch.uint8).to("cuda")
        return maps

    def poison(self):
        """Fills every temporary, the output included, with 0xFF bytes (NaN);
        tensor maps are left as encoded."""
        for t in self.temporaries.values():
            t.fill_(0xFF)

    def __call__(self, i):
        """Launches the plan's kernels in order on input set i (mod the sets)."""
        for kernel, grid, block, args, shared in self.launches[i % len(self.launches)]:
            kernel(grid, block, args, shared_mem=shared)

    def launch(self, i, k):
        """Launches only the plan's kernel k on input set i (mod the sets),
        to time the kernels one by one."""
        kernel, grid, block, args, shared = self.launches[i % len(self.launches)][k]
        kernel(grid, block, args, shared_mem=shared)

    def run_checked(self, i=0):
        """Launches the plan on input set i kernel by kernel, synchronizing
        after each, so that a failing kernel is named."""
        import torch
        for k, name in enumerate(self.kernels):
            self.launch(i, k)
            try:
                torch.cuda.synchronize()
            except Exception as e:
                raise RuntimeError(f"kernel {k} ({name}) failed: {e}") from None

    def kernel_times(self, i=0, reps=3):
        """Each kernel's median time (ms) over `reps` whole runs on input
        set i, by CUDA events recorded between its launches (a kernel
        launched alone, again and again, would read what its own earlier
        launches left: an accumulation in place)."""
        import statistics
        import torch
        runs = []
        for _ in range(reps):
            events = [torch.cuda.Event(enable_timing=True)
                      for _ in range(len(self.kernels) + 1)]
            for k in range(len(self.kernels)):
                events[k].record()
                self.launch(i, k)
            events[-1].record()
            events[-1].synchronize()
            runs.append([a.elapsed_time(b) for a, b in zip(events, events[1:])])
        return [statistics.median(r[k] for r in runs) for k in range(len(self.kernels))]

    def output(self, shape, dtype):
        """The output buffer viewed as a tensor of `shape` and `dtype`."""
        numel = math.prod(shape)
        nbytes = numel * ELEMENT_BYTES[dtype]
        return self.temporaries[self.output_buffer][:nbytes].view(torch_dtype(dtype)).view(shape)


class Predictor:
    """Predicts a call's time from the slowest rate an implementation showed on
    earlier cases of the same kind (FLOPs per millisecond). Calls shorter than
    MIN_MS are not recorded: launch costs dominate them (the dynamic series'
    few-token cases), and their rate would predict a long case far too slow."""

    MIN_MS = 1.0

    def __init__(self):
        self.rates = {}

    def predict_ms(self, impl, kind, flops):
        rate = self.rates.get((impl, kind))
        return None if rate is None else flops / rate

    def record(self, impl, kind, flops, ms):
        if ms < self.MIN_MS:
            return
        key = (impl, kind)
        self.rates[key] = min(self.rates.get(key, math.inf), flops / ms)


def metrics(case, dtype, stats):
    """Adds TFLOP/s and GB/s to a timing."""
    flops, nbytes = work(case, dtype)
    return {"dtype": dtype, **stats, "TFLOPs": flops / stats["ms"] / 1e9,
            "GBps": nbytes / stats["ms"] / 1e6}


def run_mnemo(case, cases_dir, sets, cap_s, predictor):
    """Checks and times Mnemo's kernels for one case; returns its result entry."""
    import torch
    flops, _ = work(case, case["dtype"])
    if "error" in case:  # a failure of Mnemo's, not a skip
        return {"error": "not compiled: " + case["error"].splitlines()[0][:300]}
    predicted = predictor.predict_ms("mnemo", case["kind"], flops)
    if predicted is not None and predicted > cap_s * 1e3:
        return {"skipped": f"predicted {predicted / 1e3:.0f} s per call, over its "
                           f"{cap_s:.0f} s share"}
    q, k, v = sets[0]
    shapes = [list(x.shape) for x in (q, k, v)] if case.get("dynamic") else None
    plan = MnemoPlan(os.path.join(cases_dir, case["plan"]), sets, shapes)
    plan.poison()
    torch.cuda.synchronize()
    first_ms = event_ms(plan, 0)  # the checked call, also the warm-up
    predictor.record("mnemo", case["kind"], flops, first_ms)
    out = plan.output(tuple(q.shape), case["dtype"])
    result = {"check": check(out, q, k, v, case["causal"], RTOL[case["dtype"]],
                             case.get("softcap"), case.get("window"))}
    result.update(metrics(case, case["dtype"],
                          bench(plan, cap_s, last_ms=first_ms, warmup=0)))
    result["launches"] = len(plan.launches[0])
    result["kernels"] = plan.kernels
    return result


def peer_function(name, case, sets, state):
    """fn(i) running peer `name` on input set i (its dtype already)."""
    import torch
    import torch.nn.functional as F
    gqa = case["Hq"] != case["Hkv"]
    if PEERS[name][1] != "flex":
        return lambda i: F.scaled_dot_product_attention(*sets[i % len(sets)],
                                                        is_causal=case["causal"], enable_gqa=gqa)
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    if "flex" not in state:
        state["flex"] = torch.compile(flex_attention, dynamic=False)
    flex, mask = state["flex"], None
    if case["causal"]:
        w = case.get("window")
        visible = ((lambda b, h, qi, ki: qi >= ki) if w is None else
                   (lambda b, h, qi, ki: (qi >= ki) & (qi - ki < w)))
        mask = create_block_mask(visible, None, None, case["Sq"], case["Skv"], device="cuda")
    score_mod = None
    if case.get("softcap") is not None:
        cap = case["softcap"]

        def score_mod(score, b, h, qi, ki):
            return cap * torch.tanh(score / cap)
    return lambda i: flex(*sets[i % len(sets)], block_mask=mask, score_mod=score_mod,
                          enable_gqa=gqa)


def run_peer(name, case, sets, cap_s, predictor, state):
    """Times one peer on one case (sets in the peer's dtype); returns its entry."""
    import contextlib
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dtype, backend = PEERS[name]
    flops, _ = work(case, dtype)
    if (name, case["series"]) in state["disabled"]:
        return {"skipped": state["disabled"][name, case["series"]]}
    if case.get("softcap") is not None and backend != "flex":
        return {"skipped": "SDPA has no softcap"}
    if case.get("window") is not None and backend != "flex":
        return {"skipped": "SDPA has no sliding window"}
    predicted = predictor.predict_ms(name, case["kind"], flops)
    if predicted is not None and predicted > cap_s * 1e3:
        return {"skipped": f"predicted {predicted / 1e3:.1f} s per call, over its "
                           f"{cap_s:.0f} s share"}
    if backend == "MATH":  # scores, their softmax and a temporary, in float32
        scores = 3 * 4 * case["B"] * case["Hq"] * case["Sq"] * case["Skv"]
        free = torch.cuda.mem_get_info()[0]
        if scores > 0.6 * free:
            return {"skipped": f"scores need {scores / 2**30:.0f} GiB, {free / 2**30:.0f} free"}
    note = None
    with (contextlib.nullcontext() if backend == "flex"
          else sdpa_kernel(getattr(SDPBackend, backend))):
        fn = peer_function(name, case, sets, state)
        try:
            fn(0)  # the cold call
        except RuntimeError as e:
            if (case["Hq"] == case["Hkv"] or backend == "flex"
                    or isinstance(e, torch.cuda.OutOfMemoryError)):
                raise
            g = case["Hq"] // case["Hkv"]
            sets = [(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)) for q, k, v in sets]
            fn = peer_function(name, dict(case, Hkv=case["Hq"]), sets, state)
            fn(0)
            note = "enable_gqa refused: K/V expanded to Hq heads (bytes counted at Hkv)"
        stats = bench(fn, cap_s)
    predictor.record(name, case["kind"], flops, stats["ms"])
    result = metrics(case, dtype, stats)
    if note:
        result["note"] = note
    return result


def copy_ceiling():
    """Device-to-device copy bandwidth (bytes read + written) of a 2 GiB buffer."""
    import torch
    x = torch.empty(1 << 30, device="cuda", dtype=torch.bfloat16).normal_()
    y = torch.empty_like(x)
    y.copy_(x)
    stats = bench(lambda i: y.copy_(x), cap_s=10, max_reps=20)
    x = y = None  # freed before the cases
    torch.cuda.empty_cache()
    return {"what": "d2d_copy_2GiB", "GBps": 2 * 2 * (1 << 30) / stats["ms"] / 1e6, **stats}


def run_case(case, a, cap_s, predictor, state, l2_bytes):
    """Mnemo and the peers on one case; errors are recorded per implementation.

    Mnemo gets 60% of the case's time share, each peer an equal part of the
    rest; peers left when the case has run past 1.5 times its share are skipped.
    """
    import torch
    t0 = time.monotonic()
    row = dict(case)
    sets = input_sets(case, case["dtype"], l2_bytes)
    row["input_sets"] = len(sets)
    try:
        row["mnemo"] = run_mnemo(case, a.cases, sets, 0.6 * cap_s, predictor)
    except Exception as e:  # record, keep going
        row["mnemo"] = {"error": f"{type(e).__name__}: {e}"[:500]}
        state["context_lost"] = not cuda_alive()
    row["peers"] = {}
    by_dtype = {case["dtype"]: sets}
    peer_cap = max(1.0, 0.4 * cap_s / max(1, len(a.peers)))
    for name in a.peers:
        if state["context_lost"]:
            break
        if time.monotonic() - t0 > 1.5 * cap_s:
            row["peers"][name] = {"skipped": "the case ran past its time share"}
            continue
        dtype = PEERS[name][0]
        try:
            if dtype not in by_dtype:
                by_dtype[dtype] = [tuple(x.to(torch_dtype(dtype)) for x in s) for s in sets]
            row["peers"][name] = run_peer(name, case, by_dtype[dtype], peer_cap, predictor,
                                          state)
        except Exception as e:  # record, keep going
            row["peers"][name] = {"error": f"{type(e).__name__}: {e}"[:500]}
            # FlexAttention's failures (compiling, mostly) recur at the same
            # kind of shape: it sits out the rest of the series, not the run
            # (torch 2.11's fails at 40 tokens, and not at 4096).
            if name == "flex" and not isinstance(e, torch.cuda.OutOfMemoryError):
                state["disabled"][name, case["series"]] = (f"disabled after an error in "
                                                          f"{case['name']}")
            state["context_lost"] = not cuda_alive()
        torch.cuda.empty_cache()
    del sets, by_dtype
    torch.cuda.empty_cache()
    return row


def cuda_alive():
    """False when the CUDA context is unusable (a sticky error from a kernel)."""
    import torch
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:
        return False


def fmt(x):
    """A number in 3 significant digits, without exponent from 100 up."""
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def primary(row, entry):
    """The case's metric of one implementation's entry: TFLOP/s, GB/s for decode."""
    if not entry or "ms" not in entry:
        return None
    return entry["GBps" if row["kind"] == "decode" else "TFLOPs"]


def print_table(rows, peers):
    """One line per case: Mnemo's metric and check, each peer's metric
    (Mnemo/peer); then the errors, skips and notes, and the kernels each
    dynamic case's plan launched at its shape."""
    dtypes = sorted({r["dtype"] for r in rows})
    print(f"Mnemo in {'/'.join(dtypes)}; " + ", ".join(f"{p} in {PEERS[p][0]}" for p in peers)
          + ". Peer cells: metric (Mnemo speed / peer speed); check: worst row's rel. error "
          "vs float32. A _dyn_ case runs the one artifact of dynamic batch and sequence.")
    head = f"{'case':30} {'unit':5} {'mnemo':>8} {'check':>13}"
    head += "".join(f" {p:>20}" for p in peers) + f" {'vs best':>9}"
    print(head)
    for row in rows:
        mnemo = row.get("mnemo", {})
        if "check" in mnemo:
            c = mnemo["check"]
            status = f"{'ok' if c['ok'] else 'FAIL'} {c['rel']:.1e}" if c["finite"] else "FAIL NaN"
        elif "error" in mnemo:
            status = "ERROR"
        else:
            status = "skipped"
        line = (f"{row['name']:30} {'GB/s' if row['kind'] == 'decode' else 'TF/s':5} "
                f"{fmt(primary(row, mnemo)):>8} {status:>13}")
        best = None
        for p in peers:
            entry = row.get("peers", {}).get(p)
            value = primary(row, entry)
            if value is None:
                cell = "err" if entry and "error" in entry else "-"
            else:
                best = entry if best is None or entry["ms"] < best["ms"] else best
                ratio = f" ({entry['ms'] / mnemo['ms']:.2g}x)" if "ms" in mnemo else ""
                cell = fmt(value) + ratio
            line += f" {cell:>20}"
        ratio = f"{best['ms'] / mnemo['ms']:.2g}x" if best and "ms" in mnemo else "-"
        print(line + f" {ratio:>9}")
    for row in rows:
        for impl, entry in [("mnemo", row.get("mnemo", {}))] + list(row.get("peers", {}).items()):
            for key in ("error", "skipped", "note"):
                if entry and key in entry:
                    print(f"  {row['name']} {impl} {key}: {entry[key]}")
        if row.get("dynamic") and "kernels" in row.get("mnemo", {}):
            print(f"  {row['name']} mnemo: {row['artifact']} at this shape launched "
                  f"{', '.join(row['mnemo']['kernels'])}")


def plot(rows, peers, path):
    """Throughput against sequence length, one panel per series of several lengths,
    one line per implementation (Mnemo's points where its check passed)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    series = {}
    for row in rows:
        series.setdefault(row["series"], []).append(row)
    series = {k: sorted(v, key=lambda r: r["Skv"]) for k, v in series.items() if len(v) > 1}
    if not series:
        return False
    fig, axes = plt.subplots(1, len(series), figsize=(6 * len(series), 4.8), squeeze=False)
    for ax, (title, rs) in zip(axes[0], series.items()):
        for impl in ["mnemo"] + peers:
            pts = [(r["Skv"], primary(r, r.get("mnemo") if impl == "mnemo"
                                      else r.get("peers", {}).get(impl))) for r in rs]
            pts = [(x, y) for (x, y), r in zip(pts, rs) if y is not None
                   and (impl != "mnemo" or r["mnemo"].get("check", {}).get("ok"))]
            if not pts:
                continue
            style = {"color": "black", "linewidth": 2.5} if impl == "mnemo" else {}
            label = impl if impl == "mnemo" or impl.startswith("f32") else f"{impl} (bf16)"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label, **style)
        decode = rs[0]["kind"] == "decode"
        ax.set_xscale("log", base=2)
        xs = sorted({r["Skv"] for r in rs})
        ax.set_xticks(xs, [f"{x // 1024}k" if x >= 1024 else str(x) for x in xs])
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("KV length" if decode else "sequence length")
        ax.set_ylabel("GB/s (Q+K+V+O)" if decode else "TFLOP/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def run(a):
    """`run`: checks and times every case of a.cases; writes results and the plot."""
    start = time.monotonic()
    import cupy as cp
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    warnings.filterwarnings("ignore", category=UserWarning)  # SDPA's "kernel not used" notes
    for limit in ("recompile_limit", "cache_size_limit"):  # FlexAttention: one graph per shape
        try:
            import torch._dynamo
            setattr(torch._dynamo.config, limit, 64)
        except (ImportError, AttributeError):
            pass
    seed = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(seed)
    torch.cuda.init()
    stream = torch.cuda.current_stream().cuda_stream
    if stream:  # Mnemo's launches go to torch's stream (0, the null stream, is CuPy's default)
        cp.cuda.ExternalStream(stream).use()
    with open(os.path.join(a.cases, CASES_FILE)) as f:
        manifest = json.load(f)
    cases = [c for c in manifest["cases"] if re.search(a.only, c["name"])]
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 << 20)
    os.makedirs(a.out, exist_ok=True)
    results = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda,
               "target": manifest.get("target"), "seed": seed, "budget_s": a.budget_s,
               "ceilings": [copy_ceiling()], "cases": []}
    print(f"device: {props.name}, torch {torch.__version__}, seed {seed}; "
          f"d2d copy {results['ceilings'][0]['GBps']:.0f} GB/s", flush=True)

    def cost(c):
        return (c["kind"] != "decode", work(c, c["dtype"])[0])
    order = sorted(range(len(cases)), key=lambda i: cost(cases[i]))
    rows = [None] * len(cases)
    predictor, state = Predictor(), {"disabled": {}, "context_lost": False}
    for n, i in enumerate(order):
        case = cases[i]
        if state["context_lost"]:
            rows[i] = dict(case, mnemo={"error": "not run: the CUDA context was lost"}, peers={})
            continue
        remaining = a.budget_s - (time.monotonic() - start)
        cap = max(1.0, remaining / (len(order) - n))
        t0 = time.monotonic()
        try:
            rows[i] = run_case(case, a, cap, predictor, state, l2_bytes)
        except Exception as e:  # e.g. no memory for the inputs: record, keep going
            rows[i] = dict(case, mnemo={"error": f"case failed: {type(e).__name__}: {e}"[:500]},
                           peers={})
            torch.cuda.empty_cache()
            state["context_lost"] = not cuda_alive()
        rows[i]["seconds"] = time.monotonic() - t0
        rows[i]["time_share_s"] = cap
        m = rows[i]["mnemo"]
        print(f"[{n + 1}/{len(order)}] {case['name']}: {rows[i]['seconds']:.1f} s, mnemo "
              + (f"{m['ms']:.3f} ms" if "ms" in m else m.get("error") or m.get("skipped")),
              flush=True)
        results["cases"] = [r for r in rows if r is not None]
        with open(os.path.join(a.out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
    print()
    print_table(rows, a.peers)
    try:
        if plot(rows, a.peers, os.path.join(a.out, PLOT_FILE)):
            print(f"plot: {os.path.join(a.out, PLOT_FILE)}")
    except Exception as e:  # the numbers matter more than the picture
        print(f"plot failed: {type(e).__name__}: {e}")
    failed = [r["name"] for r in rows
              if "error" in r["mnemo"] or not r["mnemo"].get("check", {"ok": True})["ok"]]
    print(f"bench_attention: {len(rows) - len(failed)} of {len(rows)} cases without a Mnemo "
          f"failure; {time.monotonic() - start:.0f} s; results in {a.out}")
    return 1 if failed else 0


def prepare_run_parser(doc, run_help, budget_s):
    """The `prepare OUT_DIR` (no GPU) / `run OUT_DIR` (GPU) command line the
    benchmark scripts share: (parser, prepare subparser, run subparser).
    After parsing, prepare_mnemo_run(args) fills in --mnemo-run's default."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    pp = sub.add_parser("prepare", help="write the cases' MLIR, artifacts, plan JSON and "
                        "cases.json (no GPU)")
    pp.add_argument("cases", metavar="OUT_DIR")
    pp.add_argument("--mnemoc", default=os.path.join(ROOT, "build", "bin", "mnemoc"))
    pp.add_argument("--mnemo-run", help="the mnemo-run that dumps each artifact's plan "
                    "(default: beside --mnemoc)")
    pp.add_argument("--target", default="sm_90a")
    pr = sub.add_parser("run", help=run_help)
    pr.add_argument("cases", metavar="OUT_DIR")
    pr.add_argument("--out", help="results folder (default: $OUT, else OUT_DIR)")
    pr.add_argument("--budget-s", type=float, default=budget_s,
                    help="wall-clock budget of the whole run, seconds")
    return p, pp, pr


def prepare_mnemo_run(a):
    """`prepare`'s arguments with --mnemo-run defaulting to the one beside --mnemoc."""
    from plan import default_mnemo_run  # beside this script
    a.mnemo_run = a.mnemo_run or default_mnemo_run(a.mnemoc)
    return a


def main():
    p, pp, pr = prepare_run_parser(__doc__, "check and time the prepared cases and the peers (GPU)",
                                   480.0)
    pp.add_argument("--dtype", default="f32", choices=sorted(RTOL))
    pp.add_argument("--quick", action="store_true", help="a small subset for a short run")
    pr.add_argument("--peers", default=",".join(PEERS),
                    help=f"comma-separated subset of {','.join(PEERS)}")
    pr.add_argument("--only", default="", help="regex: run the cases whose name matches")
    a = p.parse_args()
    if a.command == "prepare":
        prepare(prepare_mnemo_run(a))
        return 0
    a.out = a.out or os.environ.get("OUT") or a.cases
    a.peers = [x for x in a.peers.split(",") if x]
    unknown = [x for x in a.peers if x not in PEERS]
    if unknown:
        p.error(f"unknown peers: {', '.join(unknown)}")
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
