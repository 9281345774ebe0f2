# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %S/Inputs/refgen_sparse %t %mnemo_run | FileCheck %s
# CHECK: v32_index8x24 forward: max |diff| {{.*}} ok
# CHECK: v32_index8x24 generation ragged row 0: tokens 12/12 match{{.*}}: ok
# CHECK: v32_index8x24 generation ragged row 1: tokens 12/12 match{{.*}}: ok
# CHECK: v32_topk_wide forward: max |diff| {{.*}} ok
# CHECK: v32_topk_wide generation ragged row 0: tokens 12/12 match{{.*}}: ok
# CHECK: v32_topk_wide generation ragged row 1: tokens 12/12 match{{.*}}: ok
# CHECK: v32_moe_yarn forward: max |diff| {{.*}} ok
# CHECK: v32_moe_yarn forward --topk-ties=lowest-index: max |diff| {{.*}} FAIL
# CHECK: v32_moe_yarn generation --topk-ties=lowest-index vs its own forward: 12 of 12 steps ok
"""DeepSeek-V3.2 checkpoints beside the shared reference (made by
scripts/refgen/sparse_checkpoints.py with transformers 5.17): 8 indexer
heads of 24 with top 12; a top-k wider than every row; three layers with
mixtures of experts, YaRN rope and 50 index rows whose scores tie at the
top-k boundary. Each compiled for the host: the forward's logits match
PyTorch's to 1e-4, greedy generation of the ragged batch (row 1 a 23-token
prompt) the recomputed references.

The tied model shows what the tie order decides: with the lowest-index order
its logits differ from PyTorch's CPU ones; and because PyTorch's CPU order
depends on the row's length, a recomputation over a longer sequence may
select other tokens for the same earlier rows, which no cached decode
follows. With --topk-ties=lowest-index (length-independent) the cached
decode equals the artifact's own forward recomputed at every step."""

import os
import subprocess
import sys

refs, tmp, mnemo_run = sys.argv[1], sys.argv[2], sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))
compare_logits = os.path.join(here, "..", "ONNX", "Inputs", "compare_logits.py")
generation = os.path.join(here, "Inputs", "generation.py")
py = sys.executable
mnemoc = os.path.join(os.environ.get("MNEMO_TOOLS_DIR", ""), "mnemoc")


def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout.strip()


def compile_run(name, art, *flags):
    ref = os.path.join(refs, name)
    run([mnemoc, ref, "--target=host", "-o", art, *flags])
    out = art + ".out"
    run(mnemo_run + [art, "--input", f"input_ids={ref}/input_ids.npy",
                     "--output-dir", out])
    return run([py, compare_logits, f"{out}/logits.npy", f"{ref}/logits.npy"],
               check=False)


for name in ("v32_index8x24", "v32_topk_wide", "v32_moe_yarn"):
    ref = os.path.join(refs, name)
    art = os.path.join(tmp, name + ".mnemo")
    print(f"{name} forward: {compile_run(name, art)}")
    if name == "v32_moe_yarn":
        lowest = os.path.join(tmp, name + ".lowest.mnemo")
        print(f"{name} forward --topk-ties=lowest-index: "
              f"{compile_run(name, lowest, '--topk-ties=lowest-index')}")
        out = os.path.join(tmp, name + ".gen")
        run(mnemo_run + [lowest, "--generate", "12", "--input",
                         f"input_ids={ref}/input_ids.npy", "--output-dir", out])
        lines = run([py, generation, "recompute", mnemo_run[-1], lowest, out,
                     f"{ref}/input_ids.npy"], check=False).splitlines()
        good = sum(l.endswith(": ok") for l in lines)
        print(f"{name} generation --topk-ties=lowest-index vs its own forward: "
              f"{good} of {len(lines)} steps ok")
        continue
    ragged = os.path.join(tmp, name + ".ragged.npy")
    lengths = run([py, generation, "ragged", ref, ragged])
    out = os.path.join(tmp, name + ".gen")
    run(mnemo_run + [art, "--generate", "12", "--input", f"input_ids={ragged}",
                     "--prompt-lengths", lengths, "--output-dir", out])
    for line in run([py, generation, "compare", out, ref, "--ragged"],
                    check=False).splitlines():
        print(f"{name} generation ragged {line}")
