// RUN: mnemo-opt %s --verify-diagnostics --pass-pipeline="builtin.module(func.func(mnemo-cpu-linear-kernel{report=true}))" -o /dev/null

// report=true says why a linear keeps the generic tiling.
func.func @kept(%x: tensor<4x16xf64>, %w: tensor<16x8xf64>) -> tensor<4x8xf64> {
  // expected-remark @below {{CPU linear kernel: kept for the generic tiling: the result is not f32}}
  %y = mnemo.linear %x, %w layout(in_out) : tensor<4x16xf64>, tensor<16x8xf64> -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}
