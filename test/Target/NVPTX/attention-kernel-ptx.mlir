// The tensor-core attention kernel in PTX for both chips: cp.async staging,
// ldmatrix (transposed for V), bf16 mma.sync with f32 accumulators, ex2 and
// quad shuffles (in the order the back-end schedules them); ptxas accepts
// it without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: mnemo.launch attention_mma grid 7 8 2 block 128 1 1 shared 0 args buffer:0 buffer:1 buffer:2 buffer:3
// CHECK: .entry attention_mma(
// CHECK: .shared .align 1024 .b8 [[TILE:.*]][49152];
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK-DAG: cp.async.commit_group;
// CHECK-DAG: cp.async.wait_group 0;
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-DAG: cvt.rn.bf16x2.f32
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: st.global.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS: 49152 bytes smem
func.func @gqa_causal(%q: tensor<2x32x100x128xbf16>, %k: tensor<2x8x100x128xbf16>,
                      %v: tensor<2x8x100x128xbf16>) -> tensor<2x32x100x128xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<2x32x100x128xbf16>, tensor<2x8x100x128xbf16>, tensor<2x8x100x128xbf16> -> tensor<2x32x100x128xbf16>
  return %o : tensor<2x32x100x128xbf16>
}
