#!/usr/bin/env python3
"""A mixture-of-experts layer on the GPU: `mnemo.experts` grouped by expert
into tensor-core GEMMs, against a float32 reference, eager PyTorch and the
bytes of the experts' weights.

Two phases, because mnemoc runs where LLVM is and the kernels run on a GPU:

    python3 scripts/gpu/bench_experts.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
        [--target sm_90a] [--only REGEX]

writes, for every case, a static-shape model of one layer (CASE.mlir: a
`mnemo.experts` over f32 tokens and bf16 expert weights given as inputs),
its artifact, its launch plan and OUT_DIR/cases.json. mnemoc groups the
layer's pairs (token, slot) by expert in parallel kernels and computes gate,
up and down as `mnemo.grouped_linear` GEMMs over blocks of 64 rows
(mnemo-group-experts group-rows=64; docs/GPU.md, "Mixture of experts").

    python3 scripts/gpu/bench_experts.py run OUT_DIR [--out RESULTS_DIR] [--only REGEX]

runs on the GPU machine (torch, CuPy). Weights, tokens and routings are made
there from fixed seeds (torch's CUDA generator). Every case is checked row
by row (a token's output row, relative L2 per row, rowwise.py) against a
float32 reference computed expert by expert from the same bf16 weights;
Mnemo's temporaries are poisoned with NaN first, so a row the sort leaves
unwritten shows. The "check" cases are small and no tile multiples, with
slots naming no expert (-1, E) and a skewed routing (one expert's rows over
several blocks). The "speed" cases are DeepSeek-V3's layer (256 experts of
hidden 7168 and width 2048, 8 a token) at 256 and 1024 tokens; decode
steps of 2 and 64 sequences (one token each) beside a sequence of as many
tokens; and its dense form at 256 tokens (every token through all 256 experts, routing
weights zero but for the same 8: the work of running every expert), timed
with CUDA events (the device's time) against:
- eager PyTorch as transformers' DeepSeek-V3 MoE runs it (a loop over the
  experts, bf16 F.linear on each one's tokens, index_add_), same process;
- the floor: the bytes of the experts the tokens select, read once at the
  device-to-device copy bandwidth measured in the same run.
Each speed case also lists its kernels' times (events between the
launches of whole runs).
Writes RESULTS_DIR/experts.json; exits 1 when a check fails.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cases  # noqa: E402

RTOL = 2e-2  # bf16 operands (the tokens and the SwiGLU rounded as staged)


def case(name, kind, e, k, h, i, t, skew=False, invalid=False, dense=False, batch=1):
    """T tokens: one sequence of T (a prefill), or `batch` sequences of
    T / batch (batch = T: a decode step's one token each)."""
    return {"name": name, "kind": kind, "E": e, "K": k, "H": h, "I": i, "T": t,
            "B": batch, "skew": skew, "invalid": invalid, "dense": dense}


def cases():
    return [
        case("check_e12_k3", "check", 12, 3, 264, 136, 77, invalid=True),
        case("check_skewed", "check", 8, 2, 128, 72, 300, skew=True),
        case("v3_decode_b2", "speed", 256, 8, 7168, 2048, 2, batch=2),
        case("v3_t2", "speed", 256, 8, 7168, 2048, 2),
        case("v3_decode_b64", "speed", 256, 8, 7168, 2048, 64, batch=64),
        case("v3_t64", "speed", 256, 8, 7168, 2048, 64),
        case("v3_t256", "speed", 256, 8, 7168, 2048, 256),
        case("v3_t1024", "speed", 256, 8, 7168, 2048, 1024),
        case("v3_t256_dense", "speed", 256, 8, 7168, 2048, 256, dense=True),
    ]


def slots(c):
    return c["E"] if c["dense"] else c["K"]


def case_mlir(c):
    e, h, i, s = c["E"], c["H"], c["I"], slots(c)
    b, t = c["B"], c["T"] // c["B"]
    x, gu, dn = f"tensor<{b}x{t}x{h}xf32>", f"tensor<{e}x{i}x{h}xbf16>", f"tensor<{e}x{h}x{i}xbf16>"
    idx, w = f"tensor<{b}x{t}x{s}xi64>", f"tensor<{b}x{t}x{s}xf32>"
    return (f'func.func @{c["name"]}(%x: {x} {{mnemo.name = "x"}}, %gate: {gu} {{mnemo.name = "gate"}}, '
            f'%up: {gu} {{mnemo.name = "up"}}, %down: {dn} {{mnemo.name = "down"}}, '
            f'%idx: {idx} {{mnemo.name = "indices"}}, %w: {w} {{mnemo.name = "weights"}}) '
            f'-> ({x} {{mnemo.name = "y"}}) {{\n'
            f'  %y = mnemo.experts %x, %gate, %up, %down, %idx, %w\n'
            f'      : {x}, {gu}, {gu}, {dn}, {idx}, {w} -> {x}\n'
            f'  return %y : {x}\n}}\n')


def prepare(a):
    bench_cases.prepare_cases(a, cases(), case_mlir)
    return 0


def make_inputs(c, seed):
    """x [1, T, H] f32, gate/up/down bf16 (1/sqrt(fan-in)), the routing
    (indices [T, K], softmax weights [T, K]) and the inputs the layer reads
    (its dense form: all E slots, weights zero but for the routing's)."""
    import torch
    g = torch.Generator(device="cuda").manual_seed(seed)
    e, k, h, i, t = (c[n] for n in ("E", "K", "H", "I", "T"))
    x = torch.randn(1, t, h, generator=g, device="cuda")

    def weight(shape, fan):
        return (torch.randn(*shape, generator=g, device="cuda", dtype=torch.bfloat16)
                .mul_(fan ** -0.5))
    gate, up, down = weight((e, i, h), h), weight((e, i, h), h), weight((e, h, i), i)
    if c["skew"]:  # expert 0 in most rows, then 5
        p = torch.full((e,), 1.0, device="cuda")
        p[0], p[5] = 40.0, 10.0
    else:
        p = torch.ones(e, device="cuda")
    idx = torch.multinomial(p.expand(t, e), k, replacement=False, generator=g)
    logits = torch.randn(t, k, generator=g, device="cuda")
    rw = torch.softmax(logits, -1)
    if c["invalid"]:  # slots naming no expert, skipped
        idx[3, 1], idx[t - 1, 0] = -1, e
    if c["dense"]:
        didx = torch.arange(e, device="cuda").expand(t, e).contiguous()
        dw = torch.zeros(t, e, device="cuda")
        dw.scatter_(1, idx, rw)
        layer_idx, layer_w = didx, dw
    else:
        layer_idx, layer_w = idx, rw
    shape = (c["B"], t // c["B"], -1)
    inputs = [x.view(shape), gate, up, down, layer_idx.reshape(shape).contiguous(),
              layer_w.reshape(shape).contiguous()]
    return inputs, (x[0], gate, up, down, idx, rw)


def reference(x, gate, up, down, idx, rw):
    """float32, expert by expert, from the same bf16 weights; slots naming
    no expert skipped."""
    import torch
    import torch.nn.functional as F
    out = torch.zeros_like(x)
    for e in range(gate.shape[0]):
        tok, slot = torch.nonzero(idx == e, as_tuple=True)
        if tok.numel() == 0:
            continue
        xe = x[tok]
        a = F.silu(xe @ gate[e].float().T) * (xe @ up[e].float().T)
        out.index_add_(0, tok, (a @ down[e].float().T) * rw[tok, slot, None])
    return out


def eager(x, gate, up, down, idx, rw):
    """transformers' DeepSeek-V3 MoE loop in bf16: the peer."""
    import torch
    import torch.nn.functional as F
    xb = x.to(torch.bfloat16)
    out = torch.zeros_like(xb)
    mask = F.one_hot(idx.clamp(0, gate.shape[0] - 1), gate.shape[0]).permute(2, 0, 1)
    for e in range(gate.shape[0]):
        tok, slot = torch.where(mask[e])
        if tok.numel() == 0:
            continue
        xe = xb[tok]
        a = F.silu(F.linear(xe, gate[e])) * F.linear(xe, up[e])
        out.index_add_(0, tok, F.linear(a, down[e]) * rw[tok, slot, None].to(xb.dtype))
    return out


def run_case(c, plan_dir, seed, copy_gbps):
    import torch
    from bench_attention import MnemoPlan, bench
    from rowwise import worst_row_torch
    torch.backends.cuda.matmul.allow_tf32 = False
    inputs, model = make_inputs(c, seed)
    plan = MnemoPlan(os.path.join(plan_dir, c["name"] + ".plan.json"), [tuple(inputs)])
    plan.poison()
    plan.run_checked()
    got = plan.output([c["T"], c["H"]], "f32").clone()
    ref = reference(*model)
    rel, row = worst_row_torch(got, ref)
    finite = bool(torch.isfinite(got).all())
    entry = {"case": c, "kernels": plan.kernels,
             "check": {"rows": c["T"], "rel": rel, "worst_row": list(row), "finite": finite,
                       "ok": finite and rel <= RTOL}}
    if c["kind"] == "speed":
        e, h, i = c["E"], c["H"], c["I"]
        idx = model[4]
        touched = int(torch.unique(idx[(idx >= 0) & (idx < e)]).numel())
        used = e if c["dense"] else touched
        floor_ms = used * 3 * h * i * 2 / copy_gbps / 1e6
        mine = bench(plan, cap_s=20, max_reps=10, queued=True)
        peer = bench(lambda _: eager(*model), cap_s=30, max_reps=5)
        per_kernel = [{"kernel": name, "ms": ms}
                      for name, ms in zip(plan.kernels, plan.kernel_times())]
        entry.update({"mnemo": mine, "eager": peer, "speedup": peer["ms"] / mine["ms"],
                      "experts_read": used, "floor_ms": floor_ms,
                      "of_floor": floor_ms / mine["ms"], "per_kernel": per_kernel})
    plan = inputs = model = None
    torch.cuda.empty_cache()
    return entry


def print_row(en):
    c, chk = en["case"], en["check"]
    line = (f"{c['name']}: E{c['E']} K{slots(c)} H{c['H']} I{c['I']} T{c['T']}: "
            f"worst row rel {chk['rel']:.2e} {'ok' if chk['ok'] else 'FAIL'}")
    if "mnemo" in en:
        line += (f"; mnemo {en['mnemo']['ms']:.3f} ms, eager {en['eager']['ms']:.3f} ms "
                 f"({en['speedup']:.1f}x), floor {en['floor_ms']:.3f} ms "
                 f"({en['experts_read']} experts' weights; {en['of_floor']:.2f} of it)")
    print(line, flush=True)
    for k in en.get("per_kernel", []):
        if k["ms"] >= 0.02:
            print(f"    {k['kernel']}: {k['ms']:.3f} ms")


def run(a):
    import torch
    from bench_attention import copy_ceiling
    with open(os.path.join(a.dir, "cases.json")) as f:
        todo = json.load(f)
    if a.only:
        import re
        todo = [c for c in todo if re.search(a.only, c["name"])]
    props = torch.cuda.get_device_properties(0)
    copy = copy_ceiling()
    print(f"device: {props.name}, torch {torch.__version__}; copy {copy['GBps']:.0f} GB/s")
    rows, failed = [], 0
    for n, c in enumerate(todo):
        try:
            en = run_case(c, a.dir, 100 + n, copy["GBps"])
            print_row(en)
            failed += not en["check"]["ok"]
        except Exception as e:  # recorded, the run goes on
            en = {"case": c, "check": {"ok": False}, "error": f"{type(e).__name__}: {e}"}
            print(f"{c['name']}: {en['error']}", flush=True)
            failed += 1
        rows.append(en)
        torch.cuda.empty_cache()
    dense = {r["case"]["T"]: r for r in rows if r["case"]["dense"] and "mnemo" in r}
    for r in rows:
        d = dense.get(r["case"]["T"])
        if d is not None and not r["case"]["dense"] and "mnemo" in r:
            print(f"dense form / routed at {r['case']['T']} tokens: "
                  f"{d['mnemo']['ms'] / r['mnemo']['ms']:.2f}x")
    out = a.out or a.dir
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "experts.json"), "w") as f:
        json.dump({"device": props.name, "torch": torch.__version__, "copy": copy,
                   "cases": rows}, f, indent=1)
    print(f"{len(rows) - failed} of {len(rows)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(bench_cases.main(__doc__, prepare, run))
