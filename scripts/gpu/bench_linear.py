#!/usr/bin/env python3
"""GPU linear-layer benchmark: Mnemo's tensor-core GEMM against cuBLAS, in one process.

    python3 scripts/gpu/bench_linear.py prepare OUT_DIR [--mnemoc build/bin/mnemoc]
        [--mnemo-run MNEMOC_DIR/mnemo-run] [--target sm_90a]

writes, for every case, a static-shape `mnemo.linear` (CASE.mlir: bf16 weight
[N, K] as PyTorch stores it, input bf16 or f32, both function inputs; or an
f32 weight and input, compiled with --precision=3xtf32, tf32 or f32), its
artifact (CASE.mnemo, holding the PTX), the artifact's launch plan as JSON
(CASE.plan.json, `mnemo-run CASE.mnemo --dump-plan`, read by plan.py) and
OUT_DIR/cases.json. A case mnemoc rejects, or whose plan cannot be dumped
or read, is recorded there with its error, and fails the run.

    python3 scripts/gpu/bench_linear.py run OUT_DIR [--out RESULTS_DIR] [--budget-s 120]

runs on the GPU machine (torch, CuPy). For each case: fresh random inputs
(several sets when one is smaller than 4x L2, so decode reads the weights
from memory); Mnemo's output poisoned with NaN, launched as the plan says
(bench_attention.MnemoPlan) and checked against a float32 reference
(x @ w^T with TF32 off): relative error ||out - ref|| / ||ref|| per row <=
2e-2 (f32 weights: 3xTF32 and the CUDA cores 2e-5, TF32 5e-3); then Mnemo
and the peer timed with CUDA events (median). The peer is
torch.nn.functional.linear in bf16 (cuBLAS); for an f32 input it gets the
input already in bf16 (converted outside the timing). For f32 weights the
peer is the same call in f32, TF32 off (cuBLAS's f32 GEMM) for 3xTF32 and
the CUDA cores and on for TF32, and the other mode is timed too
("cublas_other"). TFLOP/s = 2*M*N*K/t; GB/s counts the input, the weight
and the output once (decode's metric).

Prints one table; writes RESULTS_DIR/linear.json. Exits 1 when a Mnemo
output fails its check or its kernel fails to run.
"""

import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # bench_attention.py beside this script
    sys.path.insert(0, HERE)
RTOL = {"bf16": 2e-2, "3xtf32": 2e-5, "f32": 2e-5, "tf32": 5e-3}
BYTES = {"f32": 4, "bf16": 2}


def cases():
    """(name, kind, M, K, N, input dtype): Llama-3-8B's projections."""
    out = []
    for m, kind in ((4096, "prefill"), (1, "decode"), (32, "decode")):
        for k, n in ((4096, 4096), (4096, 14336), (14336, 4096)):
            out.append((f"{kind}_m{m}_k{k}_n{n}", kind, m, k, n, "bf16"))
    out.append(("prefill_f32in_m4096_k4096_n4096", "prefill", 4096, 4096, 4096, "f32"))
    out.append(("decode_f32in_m1_k4096_n14336", "decode", 1, 4096, 14336, "f32"))
    cases = [dict(zip(("name", "kind", "M", "K", "N", "dtype"), c), wdtype="bf16",
                  precision="bf16") for c in out]
    # f32 weights (an f32 checkpoint's layers): 3xTF32 (the default; also
    # its sm_80 form, mma.sync, run on the same GPU), one TF32 product, and
    # the CUDA cores (--precision=f32; a single row takes them anyway).
    f32 = [("prefill", 4096, 4096, 4096, ("3xtf32", "3xtf32-sm_80", "tf32", "f32")),
           ("prefill", 4096, 4096, 14336, ("3xtf32",)),
           ("prefill", 4096, 14336, 4096, ("3xtf32",)),
           ("decode", 1, 4096, 14336, ("f32",)),
           ("decode", 2, 4096, 14336, ("3xtf32", "f32")),
           ("decode", 32, 4096, 14336, ("3xtf32", "f32"))]
    for kind, m, k, n, modes in f32:
        for mode in modes:
            precision, _, target = mode.partition("-")
            cases.append(dict(name=f"{kind}_w32_{mode.replace('-', '_')}_m{m}_k{k}_n{n}",
                              kind=kind, M=m, K=k, N=n, dtype="f32", wdtype="f32",
                              precision=precision, **({"target": target} if target else {})))
    return cases


def prepare(a):
    from plan import PlanError, dump_plan  # beside this script
    os.makedirs(a.cases, exist_ok=True)
    manifest = []
    for c in cases():
        x = f"tensor<{c['M']}x{c['K']}x{c['dtype']}>"
        w = f"tensor<{c['N']}x{c['K']}x{c['wdtype']}>"
        y = f"tensor<{c['M']}x{c['N']}x{c['dtype']}>"
        src = os.path.join(a.cases, c["name"] + ".mlir")
        with open(src, "w") as f:
            f.write(f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
                    f"  %r = mnemo.linear %x, %w layout(out_in) : {x}, {w} -> {y}\n"
                    f"  return %r : {y}\n}}\n")
        artifact = os.path.join(a.cases, c["name"] + ".mnemo")
        flags = [] if c["wdtype"] == "bf16" else [f"--precision={c['precision']}"]
        target = c.get("target", a.target)
        r = subprocess.run([a.mnemoc, src, f"--target={target}", "-o", artifact] + flags,
                           capture_output=True, text=True)
        if r.returncode:
            c["error"] = r.stderr.strip()
        else:
            try:
                plan_json, _ = dump_plan(a.mnemo_run, artifact)
                c["artifact"] = os.path.basename(artifact)
                c["plan"] = os.path.basename(plan_json)
            except PlanError as e:
                c["error"] = str(e)
        manifest.append(c)
    with open(os.path.join(a.cases, "cases.json"), "w") as f:
        json.dump({"target": a.target, "cases": manifest}, f, indent=1)
    print(f"{len(manifest)} cases in {a.cases}")


def run_case(c, a, cap_s, l2_bytes):
    import torch
    import torch.nn.functional as F
    from bench_attention import MnemoPlan, bench, event_ms  # beside this script
    from rowwise import worst_row_torch
    m, k, n = c["M"], c["K"], c["N"]
    types = {"f32": torch.float32, "bf16": torch.bfloat16}
    xt, wt = types[c["dtype"]], types[c["wdtype"]]
    one = (m * k * BYTES[c["dtype"]]) + n * k * BYTES[c["wdtype"]]
    count = 1 if one >= 4 * l2_bytes else min(8, math.ceil(4 * l2_bytes / one))
    sets = [(torch.randn(m, k, device="cuda", dtype=xt),
             (torch.randn(n, k, device="cuda") / math.sqrt(k)).to(wt))
            for _ in range(count)]
    flops = 2 * m * n * k
    nbytes = (m * k + m * n) * BYTES[c["dtype"]] + n * k * BYTES[c["wdtype"]]
    row = dict(c, input_sets=count)

    def metrics(stats):
        return {**stats, "TFLOPs": flops / stats["ms"] / 1e9, "GBps": nbytes / stats["ms"] / 1e6}
    plan = MnemoPlan(os.path.join(a.cases, c["plan"]), sets)
    plan.poison()
    torch.cuda.synchronize()
    first = event_ms(plan, 0)
    x, w = sets[0]
    out = plan.output((m, n), c["dtype"]).float()
    ref = x.float() @ w.float().T
    # Every output row within RTOL (rowwise.py), not only the whole matrix.
    rel, worst = worst_row_torch(out, ref)
    ok = bool(torch.isfinite(out).all().item()) and rel <= RTOL[c["precision"]]
    row["mnemo"] = {"check": {"ok": ok, "rel": rel, "worst_row": list(worst)},
                    "launches": len(plan.launches[0]),
                    **metrics(bench(plan, 0.6 * cap_s, last_ms=first, warmup=0))}
    del plan
    peer_sets = [(x.to(w.dtype), w) for x, w in sets]

    def peer(tf32, share):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        F.linear(*peer_sets[0])
        try:
            return metrics(bench(lambda i: F.linear(*peer_sets[i % len(peer_sets)]),
                                 share * cap_s))
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
    if c["wdtype"] == "bf16":
        row["cublas"] = peer(False, 0.4)
    else:
        # The peer of the same precision; the other mode beside it.
        row["cublas"] = peer(c["precision"] == "tf32", 0.2)
        row["cublas_other"] = peer(c["precision"] != "tf32", 0.2)
    return row


def run(a):
    import cupy as cp
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.init()
    stream = torch.cuda.current_stream().cuda_stream
    if stream:
        cp.cuda.ExternalStream(stream).use()
    with open(os.path.join(a.cases, "cases.json")) as f:
        manifest = json.load(f)
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 << 20)
    os.makedirs(a.out, exist_ok=True)
    start, rows, failed = time.monotonic(), [], 0
    todo = manifest["cases"]
    for i, c in enumerate(todo):
        cap = max(1.0, (a.budget_s - (time.monotonic() - start)) / (len(todo) - i))
        try:
            if "error" in c:
                raise RuntimeError("not compiled: " + c["error"].splitlines()[0][:300])
            row = run_case(c, a, cap, l2_bytes)
        except Exception as e:  # record, keep going
            row = dict(c, mnemo={"error": f"{type(e).__name__}: {e}"[:500]})
        rows.append(row)
        torch.cuda.empty_cache()
        with open(os.path.join(a.out, "linear.json"), "w") as f:
            json.dump({"device": props.name, "torch": torch.__version__, "cases": rows}, f,
                      indent=1)
    print(f"device: {props.name}, torch {torch.__version__}")
    print(f"{'case':40} {'mnemo':>10} {'cuBLAS':>10} {'ratio':>6} {'row err':>8}  unit"
          f"  (f32 weights: cuBLAS of the same precision, TF32 or f32; then the other)")
    for r in rows:
        mn = r["mnemo"]
        if "error" in mn:
            failed += 1
            print(f"{r['name']:40} error: {mn['error']}")
            continue
        unit = "GBps" if r["kind"] == "decode" else "TFLOPs"
        ok = mn["check"]["ok"]
        failed += not ok
        peer = r.get("cublas", {})
        ratio = peer["ms"] / mn["ms"] if "ms" in peer else float("nan")
        other = r.get("cublas_other")
        extra = f"  other cuBLAS {other[unit]:.1f}" if other else ""
        print(f"{r['name']:40} {mn[unit]:10.1f} {peer.get(unit, float('nan')):10.1f} "
              f"{ratio:5.2f}x {mn['check']['rel']:8.1e}  {unit}{'' if ok else '  FAILED'}{extra}")
    print(f"bench_linear: {len(rows) - failed} of {len(rows)} cases without a Mnemo failure; "
          f"{time.monotonic() - start:.0f} s")
    return 1 if failed else 0


def main():
    from bench_attention import prepare_mnemo_run, prepare_run_parser  # beside this script
    p, _, _ = prepare_run_parser(__doc__, "check and time the prepared cases (GPU)", 120.0)
    a = p.parse_args()
    if a.command == "prepare":
        prepare(prepare_mnemo_run(a))
        return 0
    a.out = a.out or os.environ.get("OUT") or a.cases
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
