// One line each (an object file is refused before any code is generated).
// RUN: not mnemoc %s --target=sm_80 --emit=obj -o %t.o 2>&1 | FileCheck %s --check-prefix=OBJ
// RUN: not mnemoc %s --target=sm_80 --emit=obj -o %t.o 2>&1 | count 1
// RUN: not mnemoc %s --target=sm_90a --emit=llvm 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: not mnemoc %s --target=sm_90a --emit=llvm 2>&1 | count 1
// RUN: not mnemoc %s --target=host --emit=ptx 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not mnemoc %s --target=sm_75 --emit=ptx 2>&1 | FileCheck %s --check-prefix=CHIP
// The kernel passes read their chip from the same table (Chips.h).
// RUN: not mnemo-opt %s --pass-pipeline="builtin.module(func.func(mnemo-gpu-linear-kernel{chip=sm_70}))" 2>&1 | FileCheck %s --check-prefix=PASS-LINEAR
// RUN: not mnemo-opt %s --pass-pipeline="builtin.module(func.func(mnemo-gpu-attention-kernel{chip=sm_70}))" 2>&1 | FileCheck %s --check-prefix=PASS-ATTENTION

// OBJ: error: target sm_80 writes PTX, not object files: use --emit=ptx or an artifact
// LLVM: error: target sm_90a writes PTX (--emit=ptx) or artifacts holding it
// HOST: error: target 'host' does not emit PTX (use --target=sm_80 or sm_90a)
// CHIP: unknown target 'sm_75' (expected host, x86_64, aarch64, aarch64-sve, sm_80, sm_90a)
// PASS-LINEAR: error: mnemo-gpu-linear-kernel: unknown chip 'sm_70'
// PASS-ATTENTION: error: mnemo-gpu-attention-kernel: unknown chip 'sm_70'

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
