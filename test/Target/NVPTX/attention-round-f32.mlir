// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="round-f32=false" | FileCheck %s --check-prefix=KEEP
// RUN: mnemo-opt %s --split-input-file --mnemo-gpu-attention-kernel="f32-precision=3xtf32" | FileCheck %s --check-prefix=TF32

// A bf16 artifact: its linear weights are bf16, its activations f32. Its
// f32 attention is computed as a bf16 one on the tensor cores: Q, K and V
// rounded to bf16, the kernel, the result widened back to f32.
// CHECK-LABEL: func.func @bf16_artifact
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x?x64xf32>) outs(%{{.*}} : tensor<1x4x?x64xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-COUNT-2: arith.truncf %{{.*}} : f32 to bf16
// CHECK: gpu.launch
// CHECK-SAME: function(@attention_mma)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x?x64xbf16>) outs(%{{.*}} : tensor<1x4x?x64xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: mnemo.attention
// KEEP-LABEL: func.func @bf16_artifact
// KEEP-NOT: gpu.launch
// KEEP: mnemo.attention {{.*}} -> tensor<1x4x?x64xf32>
func.func @bf16_artifact(%x: tensor<1x?x64xf32>, %w: tensor<64x64xbf16>,
    %q: tensor<1x4x?x64xf32>, %k: tensor<1x2x?x64xf32>,
    %v: tensor<1x2x?x64xf32>) -> (tensor<1x?x64xf32>, tensor<1x4x?x64xf32>) {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<1x?x64xf32>, tensor<64x64xbf16> -> tensor<1x?x64xf32>
  %o = mnemo.attention %q, %k, %v causal : tensor<1x4x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x4x?x64xf32>
  return %y, %o : tensor<1x?x64xf32>, tensor<1x4x?x64xf32>
}

// -----

// An f32 artifact (f32 weights), and a function without linear layers:
// their f32 attention keeps the tiled path; with f32-precision=3xtf32 it
// takes the kernel in f32 (TF32 mma.sync, tiles viewed as 16-bit units and
// as f32, nothing rounded to a 16-bit type).
// TF32-LABEL: func.func @f32_artifact
// TF32: gpu.launch
// TF32: memref.view {{.*}} to memref<24576xbf16, #gpu.address_space<workgroup>>
// TF32: memref.view {{.*}} to memref<12288xf32, #gpu.address_space<workgroup>>
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// TF32-NOT: mnemo.attention
// TF32-LABEL: func.func @no_linear
// TF32: gpu.launch
// CHECK-LABEL: func.func @f32_artifact
// CHECK-NOT: gpu.launch
// CHECK: mnemo.attention {{.*}} -> tensor<1x4x?x64xf32>
// CHECK-LABEL: func.func @no_linear
// CHECK-NOT: gpu.launch
// CHECK: mnemo.attention {{.*}} -> tensor<1x4x?x64xf32>
func.func @f32_artifact(%x: tensor<1x?x64xf32>, %w: tensor<64x64xf32>,
    %q: tensor<1x4x?x64xf32>, %k: tensor<1x2x?x64xf32>,
    %v: tensor<1x2x?x64xf32>) -> (tensor<1x?x64xf32>, tensor<1x4x?x64xf32>) {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<1x?x64xf32>, tensor<64x64xf32> -> tensor<1x?x64xf32>
  %o = mnemo.attention %q, %k, %v causal : tensor<1x4x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x4x?x64xf32>
  return %y, %o : tensor<1x?x64xf32>, tensor<1x4x?x64xf32>
}
func.func @no_linear(%q: tensor<1x4x?x64xf32>, %k: tensor<1x2x?x64xf32>,
    %v: tensor<1x2x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %o = mnemo.attention %q, %k, %v causal : tensor<1x4x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

// -----

// The kernel does not take this one (head dim 72 is not a multiple of 16):
// the rounding is undone and the f32 op keeps the tiled path.
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: linalg.generic
// CHECK-NOT: gpu.launch
// CHECK: mnemo.attention %{{.*}}, %{{.*}}, %{{.*}} causal : tensor<1x4x?x72xf32>, tensor<1x2x?x72xf32>, tensor<1x2x?x72xf32> -> tensor<1x4x?x72xf32>
// CHECK-NOT: linalg.generic
func.func @not_taken(%x: tensor<1x?x64xf32>, %w: tensor<64x64xbf16>,
    %q: tensor<1x4x?x72xf32>, %k: tensor<1x2x?x72xf32>,
    %v: tensor<1x2x?x72xf32>) -> (tensor<1x?x64xf32>, tensor<1x4x?x72xf32>) {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<1x?x64xf32>, tensor<64x64xbf16> -> tensor<1x?x64xf32>
  %o = mnemo.attention %q, %k, %v causal : tensor<1x4x?x72xf32>, tensor<1x2x?x72xf32>, tensor<1x2x?x72xf32> -> tensor<1x4x?x72xf32>
  return %y, %o : tensor<1x?x64xf32>, tensor<1x4x?x72xf32>
}
