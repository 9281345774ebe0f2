// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="f32-precision=3xtf32 report=true" --verify-diagnostics -o /dev/null

// What keeps the CUDA cores with TF32 asked for: an f32 weight [K, N]
// (TF32 takes both tiles K-major, and ldmatrix.trans moves 16-bit
// elements; constant weights are laid out [N, K] before, by
// mnemo-transpose-constant-weights f32-out-in), an input of another type,
// one static row (a GEMV: the CUDA cores' warp reductions are faster);
// two rows take the kernel.
func.func @fallbacks(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>,
                     %h: tensor<4x16xbf16>, %wo: tensor<8x16xf32>,
                     %one: tensor<1x1x16xf32>, %two: tensor<2x1x16xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<1x1x8xf32>, tensor<2x1x8xf32>) {
  // expected-remark @below {{keeps the generic path: f32 weight [K, N] (TF32 reads W [N, K])}}
  %0 = mnemo.linear %x, %w layout(in_out) : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  // expected-remark @below {{keeps the generic path: input is neither f32 nor the weight's type}}
  %1 = mnemo.linear %h, %wo layout(out_in) : tensor<4x16xbf16>, tensor<8x16xf32> -> tensor<4x8xbf16>
  // expected-remark @below {{keeps the generic path: one f32 row (the CUDA cores' GEMV is faster)}}
  %2 = mnemo.linear %one, %wo layout(out_in) : tensor<1x1x16xf32>, tensor<8x16xf32> -> tensor<1x1x8xf32>
  %3 = mnemo.linear %two, %wo layout(out_in) : tensor<2x1x16xf32>, tensor<8x16xf32> -> tensor<2x1x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<1x1x8xf32>, tensor<2x1x8xf32>
}
