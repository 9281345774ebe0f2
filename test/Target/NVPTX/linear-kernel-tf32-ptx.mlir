// f32 linear layers as TF32 through to PTX on both chips: 3xTF32
// (--precision=3xtf32, the default: cvt.rna.tf32.f32 of each operand and of its rest, three
// mma.sync m16n8k8 TF32 a product; on sm_90a's prefill tiles, three wgmma
// m64n128k8 over tiles rounded in shared memory and their rests), one
// product with --precision=tf32 (on sm_90a, wgmma from tiles loaded by
// TMA), and none with --precision=f32 (the CUDA cores). Prefill rows (128 x
// 128 tiles), a 64 x 64 tile with a bias, and decode rows with split-K; K and N off the
// tiles. ptxas accepts every kernel without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --precision=3xtf32 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefixes=X3,SM80X3 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=X3,SM90X3 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --precision=tf32 --emit=ptx -o %t.tf32.ptx
// RUN: FileCheck %s --check-prefix=X1 < %t.tf32.ptx
// RUN: %ptxas -arch=sm_90a -v %t.tf32.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --precision=f32 --emit=ptx -o %t.f32.ptx
// RUN: FileCheck %s --check-prefix=F32 < %t.f32.ptx
// RUN: not mnemoc %s --target=sm_90a --precision=fp16 --emit=ptx -o %t.bad 2>&1 | FileCheck %s --check-prefix=BAD

// X3: mnemo.launch linear_mma grid 4 4 1 block 128 1 1 shared 32768
// SM80X3: mnemo.launch linear_mma_0 grid 12 12 1 block 256 1 1 shared 65536
// SM90X3: mnemo.launch linear_mma_0 grid 12 12 1 block 256 1 1 shared 196640
// X3: mnemo.launch linear_mma_1 grid 5 1 7 block 128
// X3: mnemo.launch linear_reduce
// SM80X3-NOT: wgmma
// X3: cvt.rna.tf32.f32 [[HI:%r[0-9]+]], [[X:%r[0-9]+]];
// X3-NEXT: sub.rn.f32 [[REST:%r[0-9]+]], [[X]], [[HI]];
// X3-NEXT: cvt.rna.tf32.f32 {{%r[0-9]+}}, [[REST]];
// X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// X3: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM90X3: .entry linear_mma_0(
// SM90X3: fence.proxy.async.shared::cta
// SM90X3-COUNT-12: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32

// X1: mnemo.buffer {{[0-9]+}} tensormap of {{[0-9]+}} f32 dims 520x1500 strides 2080 box 32x128 swizzle 128
// X1: mnemo.buffer {{[0-9]+}} tensormap of {{[0-9]+}} f32 dims 520x1536 strides 2080 box 32x128 swizzle 128
// X1: mnemo.launch linear_mma_0 grid 12 12 1 block 256 1 1 shared 131104
// X1: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// X1: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32

// F32-NOT: mma.sync
// F32-NOT: wgmma
// F32-NOT: cvt.rna.tf32

// BAD: mnemoc: error: --precision must be 3xtf32, tf32 or f32 (got 'fp16')

// PTXAS-NOT: bytes spill stores, {{[1-9]}}
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: bytes spill stores, {{[1-9]}}
func.func @prefill(%x: tensor<2x100x136xf32>, %w: tensor<200x136xf32>, %b: tensor<200xf32>) -> tensor<2x100x200xf32> {
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<200xf32>) : tensor<2x100x136xf32>, tensor<200x136xf32> -> tensor<2x100x200xf32>
  return %r : tensor<2x100x200xf32>
}
func.func @big(%x: tensor<1500x520xf32>, %w: tensor<1536x520xf32>) -> tensor<1500x1536xf32> {
  %r = mnemo.linear %x, %w layout(out_in) : tensor<1500x520xf32>, tensor<1536x520xf32> -> tensor<1500x1536xf32>
  return %r : tensor<1500x1536xf32>
}
func.func @decode(%x: tensor<2x1x1032xf32>, %w: tensor<264x1032xf32>) -> tensor<2x1x264xf32> {
  %r = mnemo.linear %x, %w layout(out_in) : tensor<2x1x1032xf32>, tensor<264x1032xf32> -> tensor<2x1x264xf32>
  return %r : tensor<2x1x264xf32>
}
