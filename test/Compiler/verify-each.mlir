// The IR is verified once after each stage by default; --verify-each
// verifies it after every pass. On the most varied reference checkpoint
// (MLA in both forms, experts, generation steps) and the DeepSeek-V4 one
// (compressed memory, hyper-connections), for the host and for sm_90a, no
// pass leaves invalid IR, and the artifacts are the same either way.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mnemoc %S/../Frontend/Checkpoint/Inputs/refs_public/deepseek_mla --target=host --verify-each -o %t/each.mnemo
// RUN: mnemoc %S/../Frontend/Checkpoint/Inputs/refs_public/deepseek_mla --target=host -o %t/stage.mnemo
// RUN: cmp %t/each.mnemo %t/stage.mnemo
// RUN: mnemoc %S/../Frontend/Checkpoint/Inputs/refs_public/deepseek_mla --target=sm_90a --verify-each -o %t/each-gpu.mnemo
// RUN: mnemoc %S/../Frontend/Checkpoint/Inputs/refs_public/deepseek_mla --target=sm_90a -o %t/stage-gpu.mnemo
// RUN: cmp %t/each-gpu.mnemo %t/stage-gpu.mnemo
// RUN: mnemoc %S/../Frontend/Checkpoint/Inputs/refs_sparse_public/v4_csa_hca --target=host --verify-each -o %t/v4.mnemo
