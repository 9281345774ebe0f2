// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="report=true" --canonicalize --cse --verify-diagnostics | FileCheck %s
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="split-k=3" --canonicalize --cse | FileCheck %s --check-prefix=SPLIT3
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="max-batch=2" --canonicalize --cse | FileCheck %s --check-prefix=MAXB
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="shared-bytes-limit=16384 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=SMEM
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="chip=sm_90a shared-bytes-limit=232448" --canonicalize --cse | FileCheck %s --check-prefix=SM90
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="chip=sm_90a tma=false shared-bytes-limit=232448" --canonicalize --cse | FileCheck %s --check-prefix=NOTMA
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="chip=sm_90a narrow-inputs=false shared-bytes-limit=232448" --canonicalize --cse | FileCheck %s --check-prefix=NARROW-OFF

// f32 input, bf16 weight [N, K], f32 bias; 200 rows, K 136 and N 200 off
// the tiles. 16 output tiles of 64 x 64 (2 x 2 warps of 32 x 32), 3 steps of
// K in two 16 KiB stages: W copied with cp.async (zero fill past N and K),
// the input loaded as f32 vectors, rounded to bf16 and stored to the A
// tile; 4 k16 steps x 2 x 4 mma.sync per stage; bias added on the way out.
// CHECK-LABEL: func.func @f32_input_bias
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[XR:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<2x100x136xf32> into memref<200x136xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x100x200xf32>
// CHECK: %[[Y:.*]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1], [2]] : memref<2x100x200xf32> into memref<200x200xf32>
// CHECK: gpu.launch
// CHECK-SAME: blocks({{.*}}) in ({{.*}} = %[[C4]], {{.*}} = %[[C4]], {{.*}} = %c1) threads
// CHECK-SAME: in ({{.*}} = %[[C128]],
// CHECK-SAME: dynamic_shared_memory_size %c32768_i32 function(@linear_mma)
// CHECK: %[[TILES:.*]] = memref.view {{.*}} to memref<16384xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}} : memref<200x136xbf16> to memref<16384xbf16, #gpu.address_space<workgroup>>
// CHECK: vector.load %[[XR]]{{.*}} {alignment = 16 : i64} : memref<200x136xf32>, vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}}, %[[TILES]]{{.*}} {alignment = 16 : i64}
// CHECK: scf.for %{{.*}} = %c0 to %c3
// CHECK: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %[[XR]]
// CHECK: nvgpu.ldmatrix %[[TILES]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// The bias reads fold to tensor.extract of the argument.
// CHECK: tensor.extract %arg2[%{{.*}}] : tensor<200xf32>
// CHECK: vector.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<200x200xf32>, vector<2xf32>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @f32_input_bias(%x: tensor<2x100x136xf32>, %w: tensor<200x136xbf16>, %b: tensor<200xf32>) -> tensor<2x100x200xf32> {
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<200xf32>) : tensor<2x100x136xf32>, tensor<200x136xbf16> -> tensor<2x100x200xf32>
  return %r : tensor<2x100x200xf32>
}

// Enough output tiles for 128 x 128 blocks of 8 warps and too many rows
// for split-K to pay; W [K, N] read with ldmatrix.trans; bf16 result
// stored as pairs.
// CHECK-LABEL: func.func @in_out_128
// CHECK: gpu.launch
// CHECK-SAME: blocks({{.*}}) in ({{.*}} = %c12, {{.*}} = %c12, {{.*}} = %c1) threads
// CHECK-SAME: in ({{.*}} = %c256,
// CHECK-SAME: dynamic_shared_memory_size %c65536_i32 function(@linear_mma)
// CHECK: nvgpu.device_async_copy {{.*}} : memref<1500x520xbf16> to
// CHECK: nvgpu.device_async_copy {{.*}} : memref<520x1536xbf16> to
// CHECK: scf.for %{{.*}} = %c0 to %c9
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: vector.store {{.*}} {alignment = 4 : i64} : memref<1500x1536xbf16>, vector<2xbf16>
// sm_90a: the same tiles as 2 warpgroups, 4 stages of 32 KiB and their
// mbarriers; TMA boxes of 128 input rows and 64 x 64 weight panels (two
// per step), wgmma with the weight MN-major, one step in flight; without
// TMA, cp.async with 3 groups in flight and a proxy fence.
// SM90-LABEL: func.func @in_out_128
// SM90: %[[XMAP:.*]] = nvgpu.tma.create.descriptor {{.*}} box[%c128, %c64]
// SM90: nvgpu.tma.create.descriptor {{.*}} box[%c64, %c64]
// SM90: gpu.launch
// SM90-SAME: dynamic_shared_memory_size %c131104_i32 function(@linear_mma)
// SM90-COUNT-4: nvvm.mbarrier.init
// SM90: nvvm.fence.mbarrier.init
// SM90: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// SM90-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// SM90: scf.for
// SM90: nvvm.mbarrier.try_wait.parity
// SM90-NEXT: gpu.barrier
// SM90: nvvm.wgmma.fence.aligned
// SM90-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// SM90: nvvm.wgmma.wait.group.sync.aligned 1
// SM90: scf.yield
// SM90: nvvm.wgmma.wait.group.sync.aligned 0
// NOTMA-LABEL: func.func @in_out_128
// NOTMA-NOT: nvgpu.tma.create.descriptor
// NOTMA: gpu.launch
// NOTMA-SAME: dynamic_shared_memory_size %c131072_i32 function(@linear_mma)
// NOTMA: scf.for
// NOTMA: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// NOTMA-NEXT: nvvm.fence.proxy
// NOTMA: nvvm.wgmma.mma_async
func.func @in_out_128(%x: tensor<1500x520xbf16>, %w: tensor<520x1536xbf16>) -> tensor<1500x1536xbf16> {
  %r = mnemo.linear %x, %w layout(in_out) : tensor<1500x520xbf16>, tensor<520x1536xbf16> -> tensor<1500x1536xbf16>
  return %r : tensor<1500x1536xbf16>
}

// Decode: 2 rows are one 16-row block per warp row, 6 stages deep (61440
// bytes); 5 output tiles would
// leave the GPU idle, so the 17 steps of K are split over 4 blocks per tile
// (5 steps each, the last 2) writing f32 partials that linear_reduce sums
// with the bf16 bias into the f16 result.
// CHECK-LABEL: func.func @decode_split
// CHECK: %[[PART:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x2x264xf32>
// CHECK: gpu.launch
// CHECK-SAME: blocks({{.*}}) in ({{.*}} = %c5, {{.*}} = %c1, {{.*}} = %c4) threads
// CHECK-SAME: dynamic_shared_memory_size %c61440_i32 function(@linear_mma)
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c5 : index
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %c5 : index
// CHECK: %[[LAST:.*]] = arith.minui %[[END]], %c17 : index
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[LAST]]
// CHECK: vector.store {{.*}}, %[[PART]][{{.*}}] {alignment = 8 : i64} : memref<4x2x264xf32>, vector<2xf32>
// CHECK: gpu.launch
// CHECK-SAME: in ({{.*}} = %c256, {{.*}}) function(@linear_reduce)
// CHECK-COUNT-4: memref.load %[[PART]]
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// SPLIT3-LABEL: func.func @decode_split
// SPLIT3: memref.alloc() {alignment = 64 : i64} : memref<3x2x264xf32>
// SMEM: linear-kernel.mlir:[[# @LINE + 2]]:8: remark: keeps the generic path: tiles exceed the shared memory limit
func.func @decode_split(%x: tensor<2x1x1032xf16>, %w: tensor<264x1032xf16>, %b: tensor<264xbf16>) -> tensor<2x1x264xf16> {
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<264xbf16>) : tensor<2x1x1032xf16>, tensor<264x1032xf16> -> tensor<2x1x264xf16>
  return %r : tensor<2x1x264xf16>
}

// rms_norm folded into a decode GEMM that splits K (5 output tiles, 4
// splits as above): each split sums the squares of its part of the rows,
// the blocks of the first column tile store them to [splits, M] (no
// scaling in the kernel), and linear_reduce scales each row by
// rsqrt(sum / K + eps) before the bias.
// CHECK-LABEL: func.func @norm_decode_split
// CHECK-NOT: mnemo.rms_norm
// CHECK-DAG: %[[PART:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x2x264xf32>
// CHECK-DAG: %[[SQ:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x2xf32>
// CHECK: gpu.launch
// CHECK-SAME: blocks({{.*}}) in ({{.*}} = %c5, {{.*}} = %c1, {{.*}} = %c4) threads
// CHECK: scf.for
// CHECK: gpu.shuffle  xor
// CHECK-NOT: math.sqrt
// CHECK: memref.store %{{.*}}, %[[SQ]][
// CHECK-NOT: math.sqrt
// CHECK: vector.store {{.*}}, %[[PART]][{{.*}}]
// CHECK: gpu.launch
// CHECK-SAME: function(@linear_reduce)
// CHECK-COUNT-4: memref.load %[[PART]]
// CHECK-COUNT-4: memref.load %[[SQ]]
// CHECK: arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: math.sqrt
// CHECK: arith.mulf
// CHECK: arith.extf %{{.*}} : bf16 to f32
func.func @norm_decode_split(%x: tensor<2x1x1032xf32>, %n: tensor<1032xf32>, %w: tensor<264x1032xbf16>, %b: tensor<264xbf16>) -> tensor<2x1x264xf32> {
  %h = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<2x1x1032xf32>, tensor<1032xf32> -> tensor<2x1x1032xf32>
  %r = mnemo.linear %h, %w layout(out_in) bias(%b : tensor<264xbf16>) : tensor<2x1x1032xf32>, tensor<264x1032xbf16> -> tensor<2x1x264xf32>
  return %r : tensor<2x1x264xf32>
}

// A residual connection, the layer's result its add's only input besides
// a tensor of the same type computed before it: in a decode tile, added on
// the way out after the bias, by the kernel (one K range) or by
// linear_reduce (split-K), and the add is gone. An add of a tensor
// computed after the layer stays, and so does a prefill's (74 rows).
// CHECK-LABEL: func.func @residual_decode
// CHECK-NOT: linalg.add
// CHECK: %[[RES:.*]] = bufferization.to_buffer %arg3 read_only
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[RES]] {{\[}}[0, 1], [2]]
// CHECK: gpu.launch
// CHECK: memref.load %[[ROWS]]
// CHECK: arith.addf
// CHECK: vector.store
// CHECK-NOT: linalg.add
// CHECK: return
// CHECK-LABEL: func.func @residual_split
// CHECK: %[[RES:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[RES]]
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[ROWS]]
// CHECK: function(@linear_reduce)
// CHECK-COUNT-4: memref.load %{{.*}}[%c{{[0-3]}}, %{{.*}}, %{{.*}}]
// CHECK: memref.load %[[ROWS]]
// CHECK: arith.addf
// CHECK-NOT: linalg.add
// CHECK-LABEL: func.func @residual_after
// CHECK: gpu.launch
// CHECK: linalg.add
// CHECK-LABEL: func.func @residual_prefill
// CHECK: gpu.launch
// CHECK: linalg.add
func.func @residual_decode(%x: tensor<2x1x200xbf16>, %b: tensor<64xbf16>, %w: tensor<64x200xbf16>, %r: tensor<2x1x64xbf16>) -> tensor<2x1x64xbf16> {
  %y = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<64xbf16>) : tensor<2x1x200xbf16>, tensor<64x200xbf16> -> tensor<2x1x64xbf16>
  %e = tensor.empty() : tensor<2x1x64xbf16>
  %s = linalg.add ins(%r, %y : tensor<2x1x64xbf16>, tensor<2x1x64xbf16>) outs(%e : tensor<2x1x64xbf16>) -> tensor<2x1x64xbf16>
  return %s : tensor<2x1x64xbf16>
}
func.func @residual_split(%x: tensor<2x1x1032xf32>, %w: tensor<264x1032xbf16>, %r: tensor<2x1x264xf32>) -> tensor<2x1x264xf32> {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x1x1032xf32>, tensor<264x1032xbf16> -> tensor<2x1x264xf32>
  %e = tensor.empty() : tensor<2x1x264xf32>
  %s = linalg.add ins(%y, %r : tensor<2x1x264xf32>, tensor<2x1x264xf32>) outs(%e : tensor<2x1x264xf32>) -> tensor<2x1x264xf32>
  return %s : tensor<2x1x264xf32>
}
func.func @residual_after(%x: tensor<2x1x1032xf32>, %w: tensor<264x1032xbf16>, %r: tensor<2x1x264xf32>) -> tensor<2x1x264xf32> {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x1x1032xf32>, tensor<264x1032xbf16> -> tensor<2x1x264xf32>
  %e = tensor.empty() : tensor<2x1x264xf32>
  %t = linalg.add ins(%r, %r : tensor<2x1x264xf32>, tensor<2x1x264xf32>) outs(%e : tensor<2x1x264xf32>) -> tensor<2x1x264xf32>
  %s = linalg.add ins(%y, %t : tensor<2x1x264xf32>, tensor<2x1x264xf32>) outs(%e : tensor<2x1x264xf32>) -> tensor<2x1x264xf32>
  return %s : tensor<2x1x264xf32>
}
func.func @residual_prefill(%x: tensor<2x37x200xbf16>, %w: tensor<64x200xbf16>, %r: tensor<2x37x64xbf16>) -> tensor<2x37x64xbf16> {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x37x200xbf16>, tensor<64x200xbf16> -> tensor<2x37x64xbf16>
  %e = tensor.empty() : tensor<2x37x64xbf16>
  %s = linalg.add ins(%r, %y : tensor<2x37x64xbf16>, tensor<2x37x64xbf16>) outs(%e : tensor<2x37x64xbf16>) -> tensor<2x37x64xbf16>
  return %s : tensor<2x37x64xbf16>
}

// A decode step's [B, 1, K] with a dynamic batch: planned for the largest
// batch when it is known (max-batch=2: one 16-row block, 64-column tiles,
// K split in 4), the partials and the reduction's grid following the real
// batch; without it, planned for a prefill's rows (128 x 64 tiles, no
// split).
// CHECK-LABEL: func.func @decode_dynamic_batch
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %{{.*}}, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128,
// CHECK-NOT: linear_reduce
// MAXB-LABEL: func.func @decode_dynamic_batch
// MAXB: %[[B:.*]] = memref.dim %{{.*}}, %c0 : memref<?x1032xf16>
// MAXB: %[[PART:.*]] = memref.alloc(%[[B]]) {alignment = 64 : i64} : memref<4x?x264xf32>
// MAXB: %[[ROWTILES:.*]] = arith.ceildivsi %[[B]], %c16
// MAXB: gpu.launch blocks({{.*}}) in ({{.*}} = %c5, {{.*}} = %[[ROWTILES]], {{.*}} = %c4) threads({{.*}}) in ({{.*}} = %c128,
// MAXB-SAME: function(@linear_mma)
// MAXB: vector.store {{.*}}, %[[PART]][{{.*}}] {{.*}} : memref<4x?x264xf32>, vector<2xf32>
// MAXB: %[[COUNT:.*]] = arith.muli %[[B]], %c264
// MAXB: %[[BLOCKS:.*]] = arith.ceildivsi %[[COUNT]], %c256
// MAXB: gpu.launch blocks({{.*}}) in ({{.*}} = %[[BLOCKS]], {{.*}}) threads({{.*}}) in ({{.*}} = %c256,
// MAXB-SAME: function(@linear_reduce)
// MAXB: arith.cmpi ult, %{{.*}}, %[[COUNT]]
// MAXB-COUNT-4: memref.load %[[PART]]
func.func @decode_dynamic_batch(%x: tensor<?x1x1032xf16>, %w: tensor<264x1032xf16>) -> tensor<?x1x264xf16> {
  %r = mnemo.linear %x, %w layout(out_in) : tensor<?x1x1032xf16>, tensor<264x1032xf16> -> tensor<?x1x264xf16>
  return %r : tensor<?x1x264xf16>
}

// What keeps the generic path, and why.
// CHECK-LABEL: func.func @fallbacks
// CHECK-COUNT-6: mnemo.linear
// CHECK-NOT: gpu.launch
func.func @fallbacks(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>,
                     %h: tensor<4x16xf16>, %wb: tensor<8x16xbf16>,
                     %d: tensor<4x?xbf16>, %k: tensor<4x12xbf16>,
                     %wk: tensor<8x12xbf16>, %v: tensor<16xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<8xbf16>, tensor<4x?xbf16>) {
  // expected-remark @below {{keeps the generic path: f32 weight (f32-precision=f32)}}
  %0 = mnemo.linear %x, %w layout(in_out) : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  // expected-remark @below {{keeps the generic path: input is neither f32 nor the weight's type}}
  %1 = mnemo.linear %h, %wb layout(out_in) : tensor<4x16xf16>, tensor<8x16xbf16> -> tensor<4x8xf16>
  // expected-remark @below {{keeps the generic path: dynamic feature dim}}
  %2 = mnemo.linear %d, %wb layout(out_in) : tensor<4x?xbf16>, tensor<8x16xbf16> -> tensor<4x8xbf16>
  // expected-remark @below {{keeps the generic path: dynamic feature dim}}
  %5 = mnemo.linear %k, %wk layout(out_in) : tensor<4x12xbf16>, tensor<8x12xbf16> -> tensor<4x?xbf16>
  // expected-remark @below {{keeps the generic path: K or N not a multiple of 8}}
  %3 = mnemo.linear %k, %wk layout(out_in) : tensor<4x12xbf16>, tensor<8x12xbf16> -> tensor<4x8xbf16>
  // expected-remark @below {{keeps the generic path: input has no row dimension}}
  %4 = mnemo.linear %v, %wb layout(out_in) : tensor<16xbf16>, tensor<8x16xbf16> -> tensor<8xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<8xbf16>, tensor<4x?xbf16>
}

// Rows known at run time only (a dynamic batch and sequence): the tiling a
// prefill of 4096 rows gets, without split-K; the result takes the input's
// dims, the grid's rows and the kernel's bound follow the row count. On
// sm_90a the input's tiles arrive by TMA too (the launch plan encodes its
// map at each call's row count).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[XR:.*]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<?x?x256xbf16> into memref<?x256xbf16>
// CHECK-DAG: %[[D0:.*]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[OUT:.*]] = memref.alloc(%[[D0]], %[[D1]]) {alignment = 64 : i64} : memref<?x?x512xbf16>
// CHECK: %[[M:.*]] = memref.dim %[[XR]], %c0
// CHECK: %[[GM:.*]] = arith.ceildivsi %[[M]], %c64
// CHECK: gpu.launch
// CHECK-SAME: in ({{.*}} = %c4, {{.*}} = %[[GM]], {{.*}} = %c1)
// CHECK: arith.cmpi slt, %{{.*}}, %[[M]]
// CHECK: return
// SM90-LABEL: func.func @dynamic_rows
// SM90: %[[XR:.*]] = memref.collapse_shape %{{.*}} : memref<?x?x256xbf16> into memref<?x256xbf16>
// SM90: %[[XC:.*]] = memref.cast %[[XR]] : memref<?x256xbf16> to memref<*xbf16>
// SM90: nvgpu.tma.create.descriptor %[[XC]]
// SM90: nvvm.wgmma.mma_async
func.func @dynamic_rows(%x: tensor<?x?x256xbf16>, %w: tensor<512x256xbf16>) -> tensor<?x?x512xbf16> {
  %0 = mnemo.linear %x, %w layout(out_in) : tensor<?x?x256xbf16>, tensor<512x256xbf16> -> tensor<?x?x512xbf16>
  return %0 : tensor<?x?x512xbf16>
}

// A SwiGLU only the layer reads is computed on the input loads. These 40
// rows are a decode tile: gate and up arrive by cp.async into raw areas of
// their stage with the weight (3 stages in the default 101376 bytes), and
// when their step comes silu(gate) * up (ex2.approx) is rounded from there
// into the A tile, a barrier before the multiply; the swiglu op goes away.
// With a second user it stays.
// CHECK-LABEL: func.func @swiglu_down
// CHECK-NOT: mnemo.swiglu
// CHECK: %[[G:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[U:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: gpu.launch
// CHECK: %[[RG:.*]] = memref.view {{.*}} to memref<9216xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[RU:.*]] = memref.view {{.*}} to memref<9216xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[G]]{{.*}}, %[[RG]]
// CHECK-NEXT: nvgpu.device_async_copy %[[U]]{{.*}}, %[[RU]]
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: vector.load %[[RG]]{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NEXT: vector.load %[[RU]]{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: nvgpu.device_async_copy %[[G]]
// CHECK: nvgpu.ldmatrix
// CHECK-LABEL: func.func @swiglu_shared
// CHECK: mnemo.swiglu
// CHECK: gpu.launch
func.func @swiglu_down(%g: tensor<40x344xbf16>, %u: tensor<40x344xbf16>, %w: tensor<128x344xbf16>) -> tensor<40x128xbf16> {
  %s = mnemo.swiglu %g, %u : tensor<40x344xbf16>
  %r = mnemo.linear %s, %w layout(out_in) : tensor<40x344xbf16>, tensor<128x344xbf16> -> tensor<40x128xbf16>
  return %r : tensor<40x128xbf16>
}
func.func @swiglu_shared(%g: tensor<40x344xbf16>, %u: tensor<40x344xbf16>, %w: tensor<128x344xbf16>) -> (tensor<40x128xbf16>, tensor<40x344xbf16>) {
  %s = mnemo.swiglu %g, %u : tensor<40x344xbf16>
  %r = mnemo.linear %s, %w layout(out_in) : tensor<40x344xbf16>, tensor<128x344xbf16> -> tensor<40x128xbf16>
  return %r, %s : tensor<40x128xbf16>, tensor<40x344xbf16>
}

// rms_norm folded into the layers it feeds: each stages x * weight (1 +
// weight with unit_offset), sums the squares of its rows as x passes
// (loop-carried), reduces them over the 8 lanes of a row after the loop
// and scales its output rows by rsqrt(mean + eps) from shared memory (a
// single K range here: 4 steps of 64). The norm goes once both layers
// have taken it.
// CHECK-LABEL: func.func @norm_qk
// CHECK-NOT: mnemo.rms_norm
// CHECK: gpu.launch
// CHECK-SAME: dynamic_shared_memory_size %c33024_i32
// CHECK: memref.view {{.*}}[%c32768][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: vector.load {{.*}} : memref<200xbf16>, vector<8xbf16>
// CHECK: scf.for
// CHECK: vector.reduction <add>
// CHECK: gpu.shuffle  xor
// CHECK: math.sqrt
// CHECK: gpu.barrier
// CHECK: gpu.launch
// CHECK-LABEL: func.func @norm_shared
// CHECK: mnemo.rms_norm
// CHECK: gpu.launch
func.func @norm_qk(%x: tensor<2x37x200xf32>, %n: tensor<200xbf16>, %wq: tensor<72x200xbf16>, %wk: tensor<64x200xbf16>) -> (tensor<2x37x72xf32>, tensor<2x37x64xf32>) {
  %h = mnemo.rms_norm %x, %n eps(1.0e-05) unit_offset : tensor<2x37x200xf32>, tensor<200xbf16> -> tensor<2x37x200xf32>
  %q = mnemo.linear %h, %wq layout(out_in) : tensor<2x37x200xf32>, tensor<72x200xbf16> -> tensor<2x37x72xf32>
  %k = mnemo.linear %h, %wk layout(out_in) : tensor<2x37x200xf32>, tensor<64x200xbf16> -> tensor<2x37x64xf32>
  return %q, %k : tensor<2x37x72xf32>, tensor<2x37x64xf32>
}
func.func @norm_shared(%x: tensor<2x37x200xf32>, %n: tensor<200xf32>, %wq: tensor<72x200xbf16>) -> (tensor<2x37x72xf32>, tensor<2x37x200xf32>) {
  %h = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<2x37x200xf32>, tensor<200xf32> -> tensor<2x37x200xf32>
  %q = mnemo.linear %h, %wq layout(out_in) : tensor<2x37x200xf32>, tensor<72x200xbf16> -> tensor<2x37x72xf32>
  return %q, %h : tensor<2x37x72xf32>, tensor<2x37x200xf32>
}

// A prefill's f32 input on sm_90a (rows known at run time only): rounded
// to bf16 once by a conversion of its own, which both layers read, so that
// their tiles arrive by TMA; the rms_norm stays a kernel instead of being
// folded in. Decode's rows (max-batch) keep the fold, and so does
// narrow-inputs=false.
// SM90-LABEL: func.func @prefill_narrowed
// SM90: %[[H:.*]] = mnemo.rms_norm
// SM90: %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<?x?x256xf32>)
// SM90: arith.truncf %{{.*}} : f32 to bf16
// SM90-NOT: linalg.generic
// SM90: bufferization.to_buffer %[[R]] read_only
// SM90: nvgpu.tma.create.descriptor
// SM90: gpu.launch
// SM90: nvgpu.tma.create.descriptor
// SM90: gpu.launch
// SM90: return
// NARROW-OFF-LABEL: func.func @prefill_narrowed
// NARROW-OFF-NOT: mnemo.rms_norm
// NARROW-OFF-NOT: arith.truncf {{.*}} : f32 to bf16
// NARROW-OFF-NOT: nvgpu.tma.create.descriptor
// NARROW-OFF: return
func.func @prefill_narrowed(%x: tensor<?x?x256xf32>, %n: tensor<256xf32>, %wq: tensor<512x256xbf16>, %wk: tensor<384x256xbf16>) -> (tensor<?x?x512xf32>, tensor<?x?x384xf32>) {
  %h = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<?x?x256xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
  %q = mnemo.linear %h, %wq layout(out_in) : tensor<?x?x256xf32>, tensor<512x256xbf16> -> tensor<?x?x512xf32>
  %k = mnemo.linear %h, %wk layout(out_in) : tensor<?x?x256xf32>, tensor<384x256xbf16> -> tensor<?x?x384xf32>
  return %q, %k : tensor<?x?x512xf32>, tensor<?x?x384xf32>
}
// SM90-LABEL: func.func @decode_keeps_fold
// SM90-NOT: mnemo.rms_norm
// SM90-NOT: nvgpu.tma.create.descriptor
// SM90: return
func.func @decode_keeps_fold(%x: tensor<8x1x256xf32>, %n: tensor<256xf32>, %wq: tensor<512x256xbf16>) -> tensor<8x1x512xf32> {
  %h = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<8x1x256xf32>, tensor<256xf32> -> tensor<8x1x256xf32>
  %q = mnemo.linear %h, %wq layout(out_in) : tensor<8x1x256xf32>, tensor<512x256xbf16> -> tensor<8x1x512xf32>
  return %q : tensor<8x1x512xf32>
}
