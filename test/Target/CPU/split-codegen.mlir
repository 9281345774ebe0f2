// The host code object is optimized and generated in partitions on the
// compiler's threads (lib/Target/CPU/SplitCodegen.cpp); the artifact is the
// same byte for byte on one thread. The refs_public llama checkpoint has
// kernels enough for every partition.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: mnemoc %S/../../Frontend/Checkpoint/Inputs/refs_public/llama_gqa --generation=false -o %t/threads.mnemo --target=host
// RUN: mnemoc %S/../../Frontend/Checkpoint/Inputs/refs_public/llama_gqa --generation=false -o %t/one.mnemo --target=host --mlir-disable-threading
// RUN: cmp %t/threads.mnemo %t/one.mnemo
