// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="report=true" --verify-diagnostics | FileCheck %s
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a" | FileCheck %s --check-prefix=SM90
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a tma=false" | FileCheck %s --check-prefix=NOTMA

// A rope feeding Q is applied by the attention kernel to its Q tile in
// shared memory; one feeding K too when a single query tile reads each K
// tile. The kernel loads the ropes' inputs and the rope ops are gone.

// Decode-like: 9 queries x 4 packed heads fit one query tile, so both
// ropes join the kernel; cos and sin from positions x inv_freq (a
// constant) as the rope's reference lowering computes them.
// CHECK-LABEL: func.func @both
// CHECK-NOT: mnemo.rope
// CHECK-DAG: %[[FREQ:.*]] = arith.constant dense<{{.*}}> : tensor<32xf32>
// CHECK-DAG: %[[QIN:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-DAG: %[[KIN:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG: %[[POS:.*]] = bufferization.to_buffer %arg3 read_only
// CHECK: gpu.launch
// The Q tile after its copies landed: 64 rows x 32 pairs over 128 threads.
// CHECK: nvgpu.device_async_wait
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[POS]]
// CHECK: math.cos
// CHECK: math.sin
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix
// The K tile in each KV step, before S = QK^T.
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait
// CHECK: scf.for
// CHECK: math.cos
// CHECK: gpu.barrier
// CHECK: nvvm.mma.sync
// TMA: Q rotated once, at the first KV step (it lands with the first K
// tile), K at each; both fenced for wgmma's async proxy.
// SM90-LABEL: func.func @both
// SM90: nvgpu.tma.create.descriptor
// SM90: scf.for
// SM90: nvvm.mbarrier.try_wait.parity
// SM90: scf.if
// SM90: math.cos
// SM90: math.cos
// SM90: nvvm.fence.proxy
// SM90-NEXT: gpu.barrier
// SM90-NEXT: nvvm.wgmma.fence.aligned
// NOTMA-LABEL: func.func @both
// NOTMA: nvgpu.device_async_wait
// NOTMA: math.cos
// NOTMA: nvvm.fence.proxy
// NOTMA-NEXT: gpu.barrier
func.func @both(%q: tensor<1x8x9x64xbf16>, %k: tensor<1x2x9x64xbf16>,
                %v: tensor<1x2x9x64xbf16>, %pos: tensor<1x9xi64>)
    -> tensor<1x8x9x64xbf16> {
  %qr = mnemo.rope %q, %pos theta(10000.0) : tensor<1x8x9x64xbf16>, tensor<1x9xi64> -> tensor<1x8x9x64xbf16>
  %kr = mnemo.rope %k, %pos theta(10000.0) : tensor<1x2x9x64xbf16>, tensor<1x9xi64> -> tensor<1x2x9x64xbf16>
  // expected-remark @below {{applies the rope of Q on its tiles}}
  // expected-remark @below {{applies the rope of K on its tiles}}
  %o = mnemo.attention %qr, %kr, %v causal : tensor<1x8x9x64xbf16>, tensor<1x2x9x64xbf16>, tensor<1x2x9x64xbf16> -> tensor<1x8x9x64xbf16>
  return %o : tensor<1x8x9x64xbf16>
}

// Prefill: 100 queries make 7 query tiles; K's rope stays its own kernel.
// CHECK-LABEL: func.func @prefill
// CHECK: mnemo.rope %arg1
// CHECK-NOT: mnemo.rope
// CHECK: gpu.launch
func.func @prefill(%q: tensor<1x8x100x64xbf16>, %k: tensor<1x2x100x64xbf16>,
                   %v: tensor<1x2x100x64xbf16>, %pos: tensor<1x100xi32>)
    -> tensor<1x8x100x64xbf16> {
  %qr = mnemo.rope %q, %pos theta(500000.0) scaling(<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0>) : tensor<1x8x100x64xbf16>, tensor<1x100xi32> -> tensor<1x8x100x64xbf16>
  %kr = mnemo.rope %k, %pos theta(500000.0) scaling(<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0>) : tensor<1x2x100x64xbf16>, tensor<1x100xi32> -> tensor<1x2x100x64xbf16>
  // expected-remark @below {{applies the rope of Q on its tiles}}
  // expected-remark @below {{the rope of K stays a kernel: each K tile is read by 7 query tiles}}
  %o = mnemo.attention %qr, %kr, %v causal : tensor<1x8x100x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16> -> tensor<1x8x100x64xbf16>
  return %o : tensor<1x8x100x64xbf16>
}

// Tables (ONNX RotaryEmbedding's form), interleaved, partial rotary
// (32 of 64 features): cos and sin read from the tables.
// CHECK-LABEL: func.func @tables
// CHECK-NOT: mnemo.rope_tables
// CHECK-DAG: %[[COS:.*]] = bufferization.to_buffer %arg3 read_only
// CHECK-DAG: %[[SIN:.*]] = bufferization.to_buffer %arg4 read_only
// CHECK: gpu.launch
// CHECK: memref.load %[[COS]]
// CHECK: memref.load %[[SIN]]
func.func @tables(%q: tensor<2x4x5x64xbf16>, %k: tensor<2x4x5x64xbf16>,
                  %v: tensor<2x4x5x64xbf16>, %cos: tensor<2x5x32xf32>,
                  %sin: tensor<2x5x32xf32>) -> tensor<2x4x5x64xbf16> {
  %qr = mnemo.rope_tables %q, %cos, %sin interleaved : tensor<2x4x5x64xbf16>, tensor<2x5x32xf32> -> tensor<2x4x5x64xbf16>
  // expected-remark @below {{applies the rope of Q on its tiles}}
  %o = mnemo.attention %qr, %k, %v : tensor<2x4x5x64xbf16>, tensor<2x4x5x64xbf16>, tensor<2x4x5x64xbf16> -> tensor<2x4x5x64xbf16>
  return %o : tensor<2x4x5x64xbf16>
}

// What keeps a rope a kernel of its own.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: mnemo.rope
func.func @kept(%q: tensor<1x4x9x64xbf16>, %k: tensor<1x4x9x64xbf16>,
                %v: tensor<1x4x9x64xbf16>, %pos: tensor<9xi64>)
    -> (tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>) {
  %qr = mnemo.rope %q, %pos theta(10000.0) : tensor<1x4x9x64xbf16>, tensor<9xi64> -> tensor<1x4x9x64xbf16>
  %kr = mnemo.rope %k, %pos theta(10000.0) scaling(<dynamic, factor = 2.0, original_max_position = 4096>) : tensor<1x4x9x64xbf16>, tensor<9xi64> -> tensor<1x4x9x64xbf16>
  // expected-remark @below {{the rope of Q stays a kernel: its result has other users}}
  // expected-remark @below {{the rope of K stays a kernel: dynamic NTK scaling}}
  %o = mnemo.attention %qr, %kr, %v : tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16> -> tensor<1x4x9x64xbf16>
  return %o, %qr : tensor<1x4x9x64xbf16>, tensor<1x4x9x64xbf16>
}
