// The tensor-core attention kernel in PTX. sm_80: cp.async staging,
// ldmatrix (transposed for V), bf16 mma.sync. sm_90a: TMA loads on
// mbarriers from tensor maps the plan declares, wgmma with the scores from
// shared memory and P from registers. Both: dynamic shared memory declared
// extern and 1024-byte aligned, ex2 and quad shuffles (in the order the
// back-end schedules them); ptxas accepts the kernels without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// SM80: mnemo.launch attention_mma grid 7 8 2 block 128 1 1 shared 49152 args buffer:0 buffer:1 buffer:2 buffer:3
// SM90: mnemo.buffer 1 tensormap of 0 bf16 dims 128x100x32x2 strides 256x25600x819200 box 64x16x4x1 swizzle 128 bytes 128
// SM90: mnemo.buffer 3 tensormap of 2 bf16 dims 128x100x8x2 strides 256x25600x204800 box 64x64x1x1 swizzle 128 bytes 128
// SM90: mnemo.buffer 5 tensormap of 4 bf16 dims 128x100x8x2 strides 256x25600x204800 box 64x64x1x1 swizzle 128 bytes 128
// SM90: mnemo.launch attention_mma grid 7 8 2 block 128 1 1 shared 49168 args buffer:1 buffer:3 buffer:5 buffer:6
// CHECK: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// CHECK: .entry attention_mma(
// SM80-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// SM80-DAG: cp.async.commit_group;
// SM80-DAG: cp.async.wait_group 0;
// SM80-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM80-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM80-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SM90-DAG: mbarrier.init.shared.b64
// SM90-DAG: mbarrier.arrive.expect_tx.shared.b64
// SM90-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90-DAG: mbarrier.try_wait.parity.shared.b64
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90-DAG: wgmma.wait_group.sync.aligned 0;
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-DAG: cvt.rn.bf16x2.f32
// CHECK-DAG: st.global.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @gqa_causal(%q: tensor<2x32x100x128xbf16>, %k: tensor<2x8x100x128xbf16>,
                      %v: tensor<2x8x100x128xbf16>) -> tensor<2x32x100x128xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<2x32x100x128xbf16>, tensor<2x8x100x128xbf16>, tensor<2x8x100x128xbf16> -> tensor<2x32x100x128xbf16>
  return %o : tensor<2x32x100x128xbf16>
}
