// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="report=true" --canonicalize --cse --verify-diagnostics | FileCheck %s
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="block-q=128" | FileCheck %s --check-prefix=Q128
// RUN: not mnemo-opt %s --mnemo-gpu-attention-kernel="block-q=32" 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="shared-bytes-limit=16384 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=SMEM
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a" --canonicalize --cse | FileCheck %s --check-prefix=SM90
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a tma=false" --canonicalize --cse | FileCheck %s --check-prefix=NOTMA
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a block-kv=128" --canonicalize --cse | FileCheck %s --check-prefix=KV128
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="split-kv=4" --canonicalize --cse | FileCheck %s --check-prefix=SPLIT
// RUN: not mnemo-opt %s --mnemo-gpu-attention-kernel="block-kv=32" 2>&1 | FileCheck %s --check-prefix=BADKV

// GQA 32/8, D 128, lengths off the tiles: one block of 4 warps per 16
// positions x 4 packed heads, reversed for causal; K, V and Q tiles follow
// each other in dynamic shared memory, 3 x 64 x 128 bf16.
// CHECK-LABEL: func.func @gqa_causal
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[Q:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x32x100x128xbf16>
// CHECK: gpu.launch
// CHECK-SAME: blocks({{.*}}) in ({{.*}} = %[[C7]], {{.*}} = %[[C8]], {{.*}} = %[[C2]])
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %[[C128]],
// CHECK-SAME: dynamic_shared_memory_size %c49152_i32 function(@attention_mma)
// CHECK: %[[RAW:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[TILE:.*]] = memref.view %[[RAW]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<24576xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, %[[TILE]][{{.*}}], 8, {{.*}} {bypassL1}
// CHECK: nvgpu.ldmatrix %[[TILE]]{{.*}} {numTiles = 4 : i32, transpose = false}
// The KV loop: S = QK^T (8 k-steps x 8 n-blocks), then PV (4 x 16).
// CHECK: scf.for
// CHECK-COUNT-64: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: scf.if
// CHECK: gpu.shuffle  xor
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvgpu.ldmatrix %[[TILE]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-64: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: vector.store {{.*}}, %[[OUT]]{{.*}} {alignment = 4 : i64} : memref<2x32x100x128xbf16>, vector<2xbf16>
// CHECK: gpu.terminator
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// BADQ: block-q must be 64 or 128, not 32
// BADKV: block-kv must be 0 (automatic), 64 or 128, not 32
// SMEM: remark: keeps the tiled path: tiles exceed the shared memory limit
// sm_90a: a tensor map per operand on the host (Q boxes hold 4 heads x 16
// positions), mbarriers after the tiles, TMA loads issued by thread 0,
// S = QK^T as wgmma from shared memory and PV as wgmma with P in registers.
// SM90-LABEL: func.func @gqa_causal
// SM90: %[[QMAP:.*]] = nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c4, %c16, %c64] : memref<*xbf16> -> <tensor = memref<1x4x16x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// SM90: builtin.unrealized_conversion_cast %[[QMAP]] : {{.*}} to memref<128xi8>
// SM90-COUNT-2: nvgpu.tma.create.descriptor %{{.*}} box[%c1, %c1, %c64, %c64]
// SM90: gpu.launch {{.*}} dynamic_shared_memory_size %c49168_i32
// SM90: nvvm.mbarrier.init
// SM90: nvvm.fence.mbarrier.init
// SM90: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// SM90-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
// SM90: scf.for
// SM90: nvvm.mbarrier.try_wait.parity
// SM90: nvvm.wgmma.fence.aligned
// SM90-COUNT-8: nvvm.wgmma.mma_async
// SM90: nvvm.wgmma.wait.group.sync.aligned 0
// SM90: gpu.shuffle  xor
// SM90-COUNT-4: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90-NOT: nvgpu.ldmatrix
// SM90: gpu.terminator
// Without TMA the sm_90a kernel stages with cp.async, fenced for wgmma.
// 128-key tiles (sm_90a only): S is m64n128, PV takes 8 k-steps.
// KV128-LABEL: func.func @gqa_causal
// KV128: gpu.launch {{.*}} dynamic_shared_memory_size %c81936_i32
// KV128-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// KV128-COUNT-8: llvm.inline_asm
// NOTMA-LABEL: func.func @gqa_causal
// NOTMA: gpu.launch {{.*}} dynamic_shared_memory_size %c49152_i32
// NOTMA: nvgpu.device_async_copy
// NOTMA: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// NOTMA: nvvm.wgmma.mma_async
// NOTMA-NOT: nvvm.cp.async.bulk.tensor
// NOTMA: gpu.terminator
func.func @gqa_causal(%q: tensor<2x32x100x128xbf16>, %k: tensor<2x8x100x128xbf16>,
                      %v: tensor<2x8x100x128xbf16>) -> tensor<2x32x100x128xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<2x32x100x128xbf16>, tensor<2x8x100x128xbf16>, tensor<2x8x100x128xbf16> -> tensor<2x32x100x128xbf16>
  return %o : tensor<2x32x100x128xbf16>
}

// f16, D != Dv, window, softcap, sink and a decode offset all take the
// kernel; the sink is read per packed head (canonicalized from a
// memref.load of its to_buffer, bufferized again later).
// CHECK-LABEL: func.func @f16_everything
// CHECK: gpu.launch
// CHECK-SAME: dynamic_shared_memory_size %c20480_i32
// CHECK: tensor.extract %arg3[%{{.*}}] : tensor<4xf32>
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: math.tanh
// CHECK-NOT: mnemo.attention
// With 8 warps (128 query rows) the Q tile has 128 rows.
// Q128-LABEL: func.func @f16_everything
// Q128: threads({{.*}}) in ({{.*}} = %c256,
// Q128-SAME: dynamic_shared_memory_size %c{{[0-9]+}}_i32
// Q128: memref.view {{.*}} to memref<14336xf16, #gpu.address_space<workgroup>>
func.func @f16_everything(%q: tensor<1x4x3x64xf16>, %k: tensor<1x2x19x64xf16>,
                          %v: tensor<1x2x19x32xf16>, %sink: tensor<4xf32>) -> tensor<1x4x3x32xf16> {
  %off = arith.constant 16 : index
  %o = mnemo.attention %q, %k, %v causal window(8) softcap(2.0) sink(%sink : tensor<4xf32>) q_offset(%off) : tensor<1x4x3x64xf16>, tensor<1x2x19x64xf16>, tensor<1x2x19x32xf16> -> tensor<1x4x3x32xf16>
  return %o : tensor<1x4x3x32xf16>
}

// What the kernel does not take keeps mnemo.attention for the tiled path.
// CHECK-LABEL: func.func @fallbacks
// CHECK-COUNT-5: mnemo.attention
func.func @fallbacks(%q32: tensor<1x4x9x64xf32>, %k32: tensor<1x4x9x64xf32>,
                     %q: tensor<1x4x9x576xbf16>, %k: tensor<1x4x9x576xbf16>,
                     %q40: tensor<1x4x9x40xbf16>, %k40: tensor<1x4x9x40xbf16>,
                     %qs: tensor<1x4x9x64xbf16>, %ks: tensor<1x4x9x64xbf16>,
                     %mask: tensor<9x9xf8E4M3FN>)
    -> (tensor<1x4x9x64xf32>, tensor<1x4x9x576xbf16>, tensor<1x4x9x40xbf16>, tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>) {
  // expected-remark @below {{keeps the tiled path: f32 (f32-precision=f32)}}
  %a = mnemo.attention %q32, %k32, %k32 : tensor<1x4x9x64xf32>, tensor<1x4x9x64xf32>, tensor<1x4x9x64xf32> -> tensor<1x4x9x64xf32>
  // expected-remark @below {{keeps the tiled path: head dim above 256}}
  %b = mnemo.attention %q, %k, %k : tensor<1x4x9x576xbf16>, tensor<1x4x9x576xbf16>, tensor<1x4x9x576xbf16> -> tensor<1x4x9x576xbf16>
  // expected-remark @below {{keeps the tiled path: head dim not a multiple of 16}}
  %d = mnemo.attention %q40, %k40, %k40 : tensor<1x4x9x40xbf16>, tensor<1x4x9x40xbf16>, tensor<1x4x9x40xbf16> -> tensor<1x4x9x40xbf16>
  // expected-remark @below {{keeps the tiled path: mask is not f32, bf16 or f16}}
  %e = mnemo.attention %qs, %ks, %ks mask(%mask : tensor<9x9xf8E4M3FN>) : tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16> -> tensor<1x4x9x64xbf16>
  // expected-remark @below {{keeps the tiled path: non-positive scale}}
  %f = mnemo.attention %qs, %ks, %ks causal scale(-0.125) : tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16> -> tensor<1x4x9x64xbf16>
  return %a, %b, %d, %e, %f : tensor<1x4x9x64xf32>, tensor<1x4x9x576xbf16>, tensor<1x4x9x40xbf16>, tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>
}

// An additive mask [B, 1, Sq, Skv] (its heads broadcast), f32 beside bf16
// tiles: read in the kernel an element at a time, where the scores are.
// CHECK-LABEL: func.func @masked
// CHECK: gpu.launch
// CHECK: {{memref.load|tensor.extract}} {{.*}}2x1x9x9xf32>
// CHECK-NOT: mnemo.attention
func.func @masked(%q: tensor<2x4x9x64xbf16>, %k: tensor<2x2x9x64xbf16>,
                  %mask: tensor<2x1x9x9xf32>) -> tensor<2x4x9x64xbf16> {
  %o = mnemo.attention %q, %k, %k mask(%mask : tensor<2x1x9x9xf32>) : tensor<2x4x9x64xbf16>, tensor<2x2x9x64xbf16>, tensor<2x2x9x64xbf16> -> tensor<2x4x9x64xbf16>
  return %o : tensor<2x4x9x64xbf16>
}

// Split-KV: with one block per (batch, KV head) the KV range is split
// (automatically 5 ways here: 11 tiles, at least 2 each; 4 when forced),
// each split writes f32 partials and their log2-sum-exp, and a second
// kernel combines them. The sink joins the first split only.
// CHECK-LABEL: func.func @decode_split
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c5)
// CHECK: function(@attention_combine)
// SPLIT-LABEL: func.func @decode_split
// SPLIT: memref.alloc() {alignment = 64 : i64} : memref<1x8x1x64xbf16>
// SPLIT: %[[PART:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x1x8x1x64xf32>
// SPLIT: %[[LSE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x1x8x1xf32>
// SPLIT: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c4)
// SPLIT: arith.select {{.*}}, %cst{{.*}} : f32
// SPLIT: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// SPLIT: memref.store {{.*}}, %[[LSE]]
// SPLIT: vector.store {{.*}}, %[[PART]]
// The combine: a thread per 4 columns (16 for Dv 64) in each of 4 groups
// (one a split), rounded up to two warps; the largest log2-sum-exp through
// shuffles and shared memory, each group's split weighed (16-byte loads of
// the partials), groups 1-3 handing their sums to group 0, which stores 4
// bf16 columns.
// SPLIT: gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}}) threads({{.*}}) in ({{.*}} = %c64, {{.*}} dynamic_shared_memory_size %c792_i32 function(@attention_combine)
// SPLIT: memref.load %[[LSE]]
// SPLIT: gpu.shuffle  xor
// SPLIT: gpu.barrier
// SPLIT: scf.for {{.*}} step %c4
// SPLIT: vector.load %[[PART]]{{.*}} {alignment = 16 : i64} : memref<4x1x8x1x64xf32>, vector<4xf32>
// SPLIT: vector.store {{.*}} : memref<198xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// SPLIT: gpu.barrier
// SPLIT: vector.store {{.*}} {alignment = 8 : i64} : memref<1x8x1x64xbf16>, vector<4xbf16>
func.func @decode_split(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x700x64xbf16>,
                        %v: tensor<1x2x700x64xbf16>, %sink: tensor<8xf32>) -> tensor<1x8x1x64xbf16> {
  %off = arith.constant 699 : index
  %o = mnemo.attention %q, %k, %v causal sink(%sink : tensor<8xf32>) q_offset(%off) : tensor<1x8x1x64xbf16>, tensor<1x2x700x64xbf16>, tensor<1x2x700x64xbf16> -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}

// Dynamic batch and sequence lengths: the same kernel, whose grid, split
// count and partial buffers follow the sizes at run time. The split count
// is chosen on the host from the dims; the combine kernel's grid is empty
// when it is 1, and the kernel then stores the output itself.
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[B:.*]] = tensor.dim %arg0, %c0 : tensor<?x8x?x64xbf16>
// CHECK-DAG: %[[SQ:.*]] = tensor.dim %arg0, %c2 : tensor<?x8x?x64xbf16>
// CHECK-DAG: %[[SKV:.*]] = tensor.dim %arg1, %c2 : tensor<?x2x?x64xbf16>
// CHECK-DAG: %[[TILES:.*]] = arith.ceildivsi %[[SQ]], %c16 : index
// CHECK: memref.alloc(%[[B]], %[[SQ]]) {alignment = 64 : i64} : memref<?x8x?x64xbf16>
// CHECK: %[[SEVERAL:.*]] = arith.cmpi sgt, %[[SPLITS:.*]], %c1 : index
// CHECK: %[[PARTS:.*]] = arith.select %[[SEVERAL]], %[[SPLITS]], %c0 : index
// CHECK: memref.alloc(%[[PARTS]], %[[B]], %[[SQ]]) {{.*}} : memref<?x?x8x?x64xf32>
// CHECK: %[[Z:.*]] = arith.muli %[[B]], %[[SPLITS]] : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[TILES]], {{.*}} = %c2, {{.*}} = %[[Z]])
// CHECK: arith.cmpi slt, %{{.*}}, %[[SKV]] : index
// CHECK: scf.if %{{.*}} {
// CHECK: vector.store %{{.*}} : memref<?x?x8x?x64xf32>, vector<2xf32>
// CHECK: } else {
// CHECK: vector.store %{{.*}} : memref<?x8x?x64xbf16>, vector<2xbf16>
// CHECK: %[[ROWS:.*]] = arith.select %[[SEVERAL]], %{{.*}}, %c0 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[ROWS]], {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS]] step %c256
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS]] step %c16
func.func @dynamic(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                   %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}
