# scripts/bench_moe.py end to end on small shapes (16 experts, 2 a token, 40
# tokens, hidden 64, width 32): the routed layer and its dense form compiled
# for the host, run in alternating rounds, their outputs compared (the
# script exits non-zero when they differ by more than 1e-3 relative L2), with
# the weights as inputs (the per-token lowering) and as constants (grouped by
# expert, mnemo-group-experts).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %mnemo_src/scripts/bench_moe.py prepare %t/in --experts 16 --top 2 --hidden 64 --inter 32 --tokens 40 --mnemoc mnemoc | FileCheck %s --check-prefix=PREP
# RUN: %python %mnemo_src/scripts/bench_moe.py run %t/in --rounds 1 --repeat 1 --threads 2 --mnemo-run %mnemo_run | FileCheck %s
# RUN: %python %mnemo_src/scripts/bench_moe.py prepare %t/const --experts 16 --top 2 --hidden 64 --inter 32 --tokens 40 --constant-weights --mnemoc mnemoc | FileCheck %s --check-prefix=PREP
# RUN: %python %mnemo_src/scripts/bench_moe.py run %t/const --rounds 1 --repeat 1 --threads 2 --mnemo-run %mnemo_run | FileCheck %s
# PREP: prepared {{.*}}: sparse.mnemo, dense.mnemo (host)
# CHECK: MoE layer: 16 experts of hidden 64 and width 32, 2 per token, 40 tokens
# CHECK: | 1 | {{[0-9.]+}} | {{[0-9.]+}} | {{[0-9.]+}} |
# CHECK: dense / sparse: {{.*}}; outputs agree
