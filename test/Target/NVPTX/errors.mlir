// RUN: not mnemoc %s --target=sm_80 -o %t.mnemo 2>&1 | FileCheck %s --check-prefix=ARTIFACT
// RUN: not mnemoc %s --target=sm_90a --emit=llvm 2>&1 | FileCheck %s --check-prefix=ARTIFACT
// RUN: not mnemoc %s --target=host --emit=ptx 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: not mnemoc %s --target=sm_75 --emit=ptx 2>&1 | FileCheck %s --check-prefix=CHIP

// ARTIFACT: error: target sm_{{80|90a}} writes PTX only so far (--emit=ptx)
// HOST: error: target 'host' does not emit PTX (use --target=sm_80 or sm_90a)
// CHIP: unknown target 'sm_75' (expected host, x86_64, aarch64, sm_80, sm_90a)

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
