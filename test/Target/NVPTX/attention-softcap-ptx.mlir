// The softcap of the 16-bit tensor-core attention kernel, cap * tanh(s /
// cap), uses the hardware's tanh.approx.f32 (relative error 2^-11, below
// bf16's rounding) instead of the polynomial, whose IEEE division made the
// kernel twice as slow: no div.rn.f32 is left in the kernel (the split-KV
// combine after it divides by the row sums). ptxas accepts it without
// spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: .entry attention_mma(
// CHECK-NOT: div.rn.f32
// CHECK: tanh.approx.f32
// CHECK-NOT: div.rn.f32
// CHECK: .entry attention_combine(
// PTXAS-NOT: bytes spill stores, {{[1-9]}}
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @softcap(%q: tensor<1x8x200x128xbf16>, %k: tensor<1x8x200x128xbf16>,
                   %v: tensor<1x8x200x128xbf16>) -> tensor<1x8x200x128xbf16> {
  %o = mnemo.attention %q, %k, %v causal softcap(50.0) : tensor<1x8x200x128xbf16>, tensor<1x8x200x128xbf16>, tensor<1x8x200x128xbf16> -> tensor<1x8x200x128xbf16>
  return %o : tensor<1x8x200x128xbf16>
}
