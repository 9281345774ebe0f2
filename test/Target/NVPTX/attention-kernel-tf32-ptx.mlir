// f32 attention on the tensor cores as TF32 (mnemoc's default precision,
// 3xtf32): mma.sync m16n8k8 over tiles of f32 values copied by cp.async
// (4 floats a copy), Q and K fragments by ldmatrix as for 16-bit tiles,
// each operand rounded (cvt.rna.tf32.f32) with its rest, P from registers
// and V's fragments loaded from shared memory (no transposing ldmatrix),
// the result stored as f32 pairs. On sm_90a the same mma.sync kernel (no
// wgmma, no TMA). Shapes off the tiles: 100 positions, a GQA group of 4,
// causal; a window, a softcap and a sink at D 64. --precision=f32 keeps
// the tiled path (no tensor-core instruction). ptxas accepts the kernels:
// D 64 without spilling, D 128 at 255 registers with a few bytes of spills
// (docs/GPU.md).
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=CHECK < %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=NONE16 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=CHECK < %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=NONE16,SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --precision=tf32 --emit=ptx -o %t.tf32.ptx
// RUN: %ptxas -arch=sm_90a -v %t.tf32.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --precision=f32 --emit=ptx -o %t.f32.ptx
// RUN: FileCheck %s --check-prefix=F32 < %t.f32.ptx

// D 128: Q, K and V tiles of 64 rows of 512 bytes (96 KiB).
// CHECK: mnemo.launch attention_mma grid 7 8 2 block 128 1 1 shared 98304
// D 64, window and sink: 48 KiB.
// CHECK: mnemo.launch attention_mma_0 grid 3 2 1 block 128 1 1 shared 49152
// CHECK: .entry attention_mma(
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: cvt.rna.tf32.f32
// CHECK-DAG: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-DAG: ld.shared.b32
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-DAG: st.global.v2.b32
// Anywhere in the module: no transposing ldmatrix, no 16-bit MMA, and on
// sm_90a no wgmma nor TMA.
// NONE16-NOT: ldmatrix.sync.aligned.m8n8.x4.trans
// NONE16-NOT: mma.sync.aligned.m16n8k16
// SM90-NOT: wgmma
// SM90-NOT: cp.async.bulk.tensor
// CHECK: .entry attention_mma_0(
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTXAS: Compiling entry function 'attention_mma_0'
// PTXAS-NEXT: Function properties for attention_mma_0
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// F32-NOT: mnemo.launch attention_mma
// F32-NOT: mma.sync
// F32-NOT: cvt.rna.tf32
func.func @gqa_causal(%q: tensor<2x32x100x128xf32>, %k: tensor<2x8x100x128xf32>,
                      %v: tensor<2x8x100x128xf32>) -> tensor<2x32x100x128xf32> {
  %o = mnemo.attention %q, %k, %v causal : tensor<2x32x100x128xf32>, tensor<2x8x100x128xf32>, tensor<2x8x100x128xf32> -> tensor<2x32x100x128xf32>
  return %o : tensor<2x32x100x128xf32>
}

func.func @window_softcap_sink(%q: tensor<1x4x77x64xf32>, %k: tensor<1x2x77x64xf32>,
                               %v: tensor<1x2x77x64xf32>, %s: tensor<4xf32>) -> tensor<1x4x77x64xf32> {
  %o = mnemo.attention %q, %k, %v causal window(24) softcap(50.0) sink(%s : tensor<4xf32>) : tensor<1x4x77x64xf32>, tensor<1x2x77x64xf32>, tensor<1x2x77x64xf32> -> tensor<1x4x77x64xf32>
  return %o : tensor<1x4x77x64xf32>
}
