// A norm's sum of squares through the whole pipeline: its kernel runs
// 256-thread blocks (8 warps, one row each) whose grid the plan computes
// from the dynamic rows, and the lanes' partials meet through five
// butterfly shuffles. The sums start from zero in registers: no kernel
// fills them first.
// RUN: mnemoc %s --target=sm_90a --emit=ptx | FileCheck %s
// RUN: mnemoc %s --target=sm_80 --emit=ptx | FileCheck %s

// CHECK: // mnemo.launch norm_kernel grid e{{[0-9]+}} 1 1 block 256 1 1
// CHECK-NEXT: // mnemo.launch norm_kernel_0
// CHECK-NOT: mnemo.launch
// CHECK: .entry norm_kernel(
// CHECK: ld.global
// CHECK: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK: st.global
// CHECK: .entry norm_kernel_0(
func.func @norm(%x: tensor<3x?x1000xf32>, %n: tensor<1000xf32>) -> tensor<3x?x1000xf32> {
  %r = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<3x?x1000xf32>, tensor<1000xf32> -> tensor<3x?x1000xf32>
  return %r : tensor<3x?x1000xf32>
}
