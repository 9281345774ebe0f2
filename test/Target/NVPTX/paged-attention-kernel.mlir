// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a decode-kernel=true" | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a decode-kernel=true report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a decode-kernel=true round-f32=false report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=KEEP
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a decode-kernel=false report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=GENERAL
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a decode-kernel=true decode-kernel-16bit=true report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=DK16
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a decode-kernel=true decode-kernel-16bit=true" | FileCheck %s --check-prefix=DK16-IR
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="chip=sm_90a f32-precision=3xtf32 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=TF32

// A decode step over bf16 pools: the f32 query is rounded to bf16, one
// block per (batch x split, KV head) reads the sequence's length and its
// rows' positions, copies its K and V rows from the pages the block table
// names (cp.async, zero bytes past the length), and a combine kernel joins
// the splits, chosen at run time (the batch is dynamic). The result is
// widened back to f32.
// With decode-kernel-16bit, the decode kernel: bf16 rows in the warps'
// rings, two rows' halves paired by PRMT (selector 0x5410 = 21520) for
// V's fragments, no FP8 conversion.
// REMARK: :[[@LINE+24]]:8: remark: reads its pages in the kernel
// DK16: :[[@LINE+23]]:8: remark: reads its pages in the decode kernel
// DK16-IR-LABEL: func.func @decode
// DK16-IR: nvgpu.device_async_copy %{{.*}} : memref<64x2x16x128xbf16> to memref<49152xbf16, #gpu.address_space<workgroup>>
// DK16-IR-NOT: nvvm.convert.f8x2.to.f16x2
// DK16-IR: nvvm.prmt <default> %c21520_i32
// CHECK-LABEL: func.func @decode
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_mma)
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<?xi64>
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x1xi64>
// CHECK: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x32xi32>
// CHECK: nvgpu.device_async_copy %{{.*}} : memref<64x2x16x128xbf16> to memref<24576xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_combine)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: mnemo.paged_attention
// KEEP: :[[@LINE+4]]:8: remark: keeps the paged decomposition: query, pools and result differ in element type
func.func @decode(%q: tensor<?x8x1x128xf32>, %kp: tensor<64x2x16x128xbf16>,
    %vp: tensor<64x2x16x128xbf16>, %table: tensor<?x32xi32>,
    %lens: tensor<?xi64>, %pos: tensor<?x1xi64>) -> tensor<?x8x1x128xf32> {
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal
      : tensor<?x8x1x128xf32>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16>,
        tensor<?x32xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x8x1x128xf32>
  return %o : tensor<?x8x1x128xf32>
}

// -----

// A static batch of 64 sequences fills the multiprocessors (64 x 8 KV
// heads = 512 blocks, more than the 3 x 132 resident): one split, no
// partials and no combine kernel.
// REMARK: :[[@LINE+9]]:8: remark: reads its pages in the kernel
// CHECK-LABEL: func.func @full_batch
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_mma)
// CHECK-NOT: attention_combine
// CHECK: return
func.func @full_batch(%q: tensor<64x32x1x128xbf16>, %kp: tensor<512x8x16x128xbf16>,
    %vp: tensor<512x8x16x128xbf16>, %table: tensor<64x8xi32>,
    %lens: tensor<64xi64>, %pos: tensor<64x1xi64>) -> tensor<64x32x1x128xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal
      : tensor<64x32x1x128xbf16>, tensor<512x8x16x128xbf16>, tensor<512x8x16x128xbf16>,
        tensor<64x8xi32>, tensor<64xi64>, tensor<64x1xi64> -> tensor<64x32x1x128xbf16>
  return %o : tensor<64x32x1x128xbf16>
}

// -----

// f32 pools keep the decomposition (a gather of the pages and the tiled
// attention) unless f32-precision puts them on TF32. FP8 pools take the decode kernel here (one query token,
// D 32: a lane reads 8-byte pieces of a K row): raw rows copied into the
// warps' rings with their scales (4-byte copies), E4M3 pairs converted to
// f16; the query is rounded to bf16.
// REMARK: :[[@LINE+21]]:8: remark: keeps the paged decomposition: f32 pools (f32-precision=f32)
// With f32-precision=3xtf32 f32 pools take the kernel, on TF32.
// TF32: :[[@LINE+19]]:8: remark: reads its pages in the kernel
// REMARK: :[[@LINE+21]]:8: remark: reads its pages in the decode kernel
// CHECK-LABEL: func.func @other_pools
// CHECK: mnemo.paged_attention {{.*}} -> tensor<2x4x1x32xf32>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_mma)
// CHECK: nvgpu.device_async_copy %{{.*}} : memref<64x2x16x32xf8E4M3FN> to memref<16384xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %{{.*}} : memref<64x2x16xf32> to memref<4608xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<16384xf8E4M3FN, #gpu.address_space<workgroup>>, vector<8xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK-NOT: mnemo.paged_attention
// CHECK: return
func.func @other_pools(%q: tensor<2x4x1x32xf32>, %kp: tensor<64x2x16x32xf32>,
    %vp: tensor<64x2x16x32xf32>, %k8: tensor<64x2x16x32xf8E4M3FN>,
    %v8: tensor<64x2x16x32xf8E4M3FN>, %ks: tensor<64x2x16xf32>,
    %vs: tensor<64x2x16xf32>, %table: tensor<2x8xi32>, %lens: tensor<2xi64>,
    %pos: tensor<2x1xi64>) -> (tensor<2x4x1x32xf32>, tensor<2x4x1x32xf32>) {
  %a = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal
      : tensor<2x4x1x32xf32>, tensor<64x2x16x32xf32>, tensor<64x2x16x32xf32>,
        tensor<2x8xi32>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x4x1x32xf32>
  %b = mnemo.paged_attention %q, %k8, %v8 scales(%ks, %vs : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<2x4x1x32xf32>, tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16x32xf8E4M3FN>,
        tensor<2x8xi32>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x4x1x32xf32>
  return %a, %b : tensor<2x4x1x32xf32>, tensor<2x4x1x32xf32>
}

// -----

// A decode step over FP8 pools on sm_90a takes the decode kernel: the
// query rounded to bf16, each warp's 16 keys of a tile copied raw into its
// own ring of 4 stages (3 tiles in flight, the warp's barrier around the
// wait, no block barrier in the loop), E4M3 pairs converted to f16 for
// mma.sync, the warps' results combined through shared memory after the
// loop. With decode-kernel=false, the general kernel.
// REMARK: :[[@LINE+24]]:8: remark: reads its pages in the decode kernel
// GENERAL: :[[@LINE+23]]:8: remark: reads its pages in the kernel{{$}}
// CHECK-LABEL: func.func @decode_fp8
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_mma)
// CHECK: nvgpu.device_async_copy %{{.*}} : memref<64x2x16x128xf8E4M3FN> to memref<65536xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvvm.bar.warp.sync
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 3 : i32}
// CHECK-NEXT: nvvm.bar.warp.sync
// CHECK: vector.load %{{.*}} : memref<65536xf8E4M3FN, #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// CHECK: nvvm.convert.f8x2.to.f16x2
// CHECK: nvvm.mma.sync
// CHECK: nvvm.prmt
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_combine)
func.func @decode_fp8(%q: tensor<?x8x1x128xf32>, %kp: tensor<64x2x16x128xf8E4M3FN>,
    %vp: tensor<64x2x16x128xf8E4M3FN>, %ks: tensor<64x2x16xf32>,
    %vs: tensor<64x2x16xf32>, %table: tensor<?x32xi32>,
    %lens: tensor<?xi64>, %pos: tensor<?x1xi64>) -> tensor<?x8x1x128xf32> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<?x8x1x128xf32>, tensor<64x2x16x128xf8E4M3FN>, tensor<64x2x16x128xf8E4M3FN>,
        tensor<?x32xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x8x1x128xf32>
  return %o : tensor<?x8x1x128xf32>
}

// -----

// A mask (an ONNX decoder's own, mnemo-attend-over-pages) keeps the general
// kernel, which reads it an element at a time where the scores are (the
// decode kernel has none).
// REMARK: :[[@LINE+10]]:8: remark: reads its pages in the kernel{{$}}
// CHECK-LABEL: func.func @decode_fp8_masked
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_mma)
// CHECK-NOT: nvvm.convert.f8x2.to.f16x2
// CHECK: memref.load %{{.*}} : memref<?x1x1x?xf32>
func.func @decode_fp8_masked(%q: tensor<?x8x1x128xf32>, %kp: tensor<64x2x16x128xf8E4M3FN>,
    %vp: tensor<64x2x16x128xf8E4M3FN>, %ks: tensor<64x2x16xf32>,
    %vs: tensor<64x2x16xf32>, %table: tensor<?x32xi32>,
    %lens: tensor<?xi64>, %pos: tensor<?x1xi64>, %m: tensor<?x1x1x?xf32>) -> tensor<?x8x1x128xf32> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos mask(%m : tensor<?x1x1x?xf32>)
      : tensor<?x8x1x128xf32>, tensor<64x2x16x128xf8E4M3FN>, tensor<64x2x16x128xf8E4M3FN>,
        tensor<?x32xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x8x1x128xf32>
  return %o : tensor<?x8x1x128xf32>
}

// -----

// More query rows than one 16-row tile (4 heads x 5 tokens) and a head
// dim above 128 keep the general kernel.
// REMARK: :[[@LINE+9]]:8: remark: reads its pages in the kernel
// REMARK: :[[@LINE+12]]:8: remark: reads its pages in the kernel
// CHECK-LABEL: func.func @not_decode
// CHECK-COUNT-2: nvgpu.device_async_copy %{{.*}} : memref<{{.*}}f8E4M3FN> to memref<{{[0-9]+}}xf8E4M3FN, #gpu.address_space<workgroup>>
func.func @not_decode(%q: tensor<2x8x5x128xbf16>, %kp: tensor<64x2x16x128xf8E4M3FN>,
    %vp: tensor<64x2x16x128xf8E4M3FN>, %ks: tensor<64x2x16xf32>, %vs: tensor<64x2x16xf32>,
    %q2: tensor<2x8x1x160xbf16>, %kp2: tensor<64x2x16x160xf8E4M3FN>,
    %vp2: tensor<64x2x16x160xf8E4M3FN>, %table: tensor<2x32xi32>, %lens: tensor<2xi64>,
    %pos: tensor<2x5xi64>, %pos1: tensor<2x1xi64>) -> (tensor<2x8x5x128xbf16>, tensor<2x8x1x160xbf16>) {
  %a = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<2x8x5x128xbf16>, tensor<64x2x16x128xf8E4M3FN>, tensor<64x2x16x128xf8E4M3FN>,
        tensor<2x32xi32>, tensor<2xi64>, tensor<2x5xi64> -> tensor<2x8x5x128xbf16>
  %b = mnemo.paged_attention %q2, %kp2, %vp2 scales(%ks, %vs : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos1 causal
      : tensor<2x8x1x160xbf16>, tensor<64x2x16x160xf8E4M3FN>, tensor<64x2x16x160xf8E4M3FN>,
        tensor<2x32xi32>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x8x1x160xbf16>
  return %a, %b : tensor<2x8x5x128xbf16>, tensor<2x8x1x160xbf16>
}

// -----

// An absorbed MLA's decode (one KV head, D 48 = latent 32 + rope 16, Dv
// 32): 48 is no power of two (a lane's 12-byte pieces would be misaligned
// loads), so the general kernel.
// REMARK: :[[@LINE+5]]:8: remark: reads its pages in the kernel{{$}}
// CHECK-LABEL: func.func @mla_absorbed
func.func @mla_absorbed(%q: tensor<2x4x1x48xbf16>, %kp: tensor<64x1x16x48xf8E4M3FN>,
    %vp: tensor<64x1x16x32xf8E4M3FN>, %ks: tensor<64x1x16xf32>, %vs: tensor<64x1x16xf32>,
    %table: tensor<2x32xi32>, %lens: tensor<2xi64>, %pos: tensor<2x1xi64>) -> tensor<2x4x1x32xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<64x1x16xf32>, tensor<64x1x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<2x4x1x48xbf16>, tensor<64x1x16x48xf8E4M3FN>, tensor<64x1x16x32xf8E4M3FN>,
        tensor<2x32xi32>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x4x1x32xbf16>
  return %o : tensor<2x4x1x32xbf16>
}
