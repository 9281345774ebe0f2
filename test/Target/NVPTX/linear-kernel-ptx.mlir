// The tensor-core linear kernel in PTX for both chips: cp.async staging of
// the weight, f32 input rounded to bf16 pairs, ldmatrix (transposed for a
// [K, N] weight), bf16 and f16 mma.sync, the split-K reduction; on sm_90a
// the 128 x 128 tiles of the bf16 input arrive by TMA (2-D tensor maps the
// plan declares, 64 x 64 panels of the [K, N] weight) on per-stage
// mbarriers and multiply with wgmma from shared memory (the weight
// MN-major), one step in flight. ptxas accepts every kernel without
// spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: mnemo.launch linear_mma grid 4 4 1 block 128 1 1 shared 32768 args buffer:0 buffer:1 buffer:2 buffer:3
// SM80: mnemo.launch linear_mma_0 grid 12 12 1 block 256 1 1 shared 65536 args buffer:0 buffer:1 buffer:2
// SM90: mnemo.buffer 1 tensormap of 0 bf16 dims 520x1500 strides 1040 box 64x128 swizzle 128 bytes 128
// SM90: mnemo.buffer 3 tensormap of 2 bf16 dims 1536x520 strides 3072 box 64x64 swizzle 128 bytes 128
// SM90: mnemo.launch linear_mma_0 grid 12 12 1 block 256 1 1 shared 131104 args buffer:1 buffer:3 buffer:4
// CHECK: mnemo.launch linear_mma_1 grid 5 1 4 block 128 1 1 shared 61440 args buffer:0 buffer:1 buffer:2
// CHECK: mnemo.launch linear_reduce grid 3 1 1 block 256 1 1 shared 0 args buffer:2 buffer:3 buffer:4
// CHECK: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK-DAG: cp.async.wait_group 0;
// CHECK-DAG: ld.global.v4.b32
// CHECK-DAG: cvt.rn.bf16x2.f32
// CHECK-DAG: st.shared.v4.b32
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM80-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM90-DAG: mbarrier.init.shared.b64
// SM90-DAG: mbarrier.arrive.expect_tx.shared.b64
// SM90-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90-DAG: mbarrier.try_wait.parity.shared.b64
// SM90-DAG: wgmma.wait_group.sync.aligned 1;
// SM90-DAG: wgmma.fence.sync.aligned;
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90-DAG: wgmma.commit_group.sync.aligned;
// SM90-DAG: wgmma.wait_group.sync.aligned 0;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-DAG: .entry linear_reduce(
// PTXAS: Compiling entry function
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
func.func @f32_input_bias(%x: tensor<2x100x136xf32>, %w: tensor<200x136xbf16>, %b: tensor<200xf32>) -> tensor<2x100x200xf32> {
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<200xf32>) : tensor<2x100x136xf32>, tensor<200x136xbf16> -> tensor<2x100x200xf32>
  return %r : tensor<2x100x200xf32>
}
func.func @in_out_128(%x: tensor<1500x520xbf16>, %w: tensor<520x1536xbf16>) -> tensor<1500x1536xbf16> {
  %r = mnemo.linear %x, %w layout(in_out) : tensor<1500x520xbf16>, tensor<520x1536xbf16> -> tensor<1500x1536xbf16>
  return %r : tensor<1500x1536xbf16>
}
func.func @decode_split(%x: tensor<2x1x1032xf16>, %w: tensor<264x1032xf16>, %b: tensor<264xbf16>) -> tensor<2x1x264xf16> {
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<264xbf16>) : tensor<2x1x1032xf16>, tensor<264x1032xf16> -> tensor<2x1x264xf16>
  return %r : tensor<2x1x264xf16>
}
