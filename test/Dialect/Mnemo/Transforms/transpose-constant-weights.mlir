// RUN: mnemo-opt %s --split-input-file --mnemo-transpose-constant-weights | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --mnemo-transpose-constant-weights="f32-out-in=true" | FileCheck %s --check-prefix=OUTIN
// RUN: mnemo-opt %s --split-input-file --mnemo-transpose-constant-weights="f32-out-in=true to-in-out=false" | FileCheck %s --check-prefix=KEEP

// Checks that a constant [N, K] weight becomes its [K, N] transpose with the
// layout switched to in_out, and the original constant goes away.

// CHECK-LABEL: func.func @constant_weight
//       CHECK:   %[[W:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
//       CHECK:   mnemo.linear %{{.+}}, %[[W]] layout(in_out) : tensor<5x3xf32>, tensor<3x2xf32> -> tensor<5x2xf32>
//   CHECK-NOT:   tensor<2x3xf32>
func.func @constant_weight(%x: tensor<5x3xf32>) -> tensor<5x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32> -> tensor<5x2xf32>
  return %y : tensor<5x2xf32>
}

// -----

// Checks that weights that are not constants, or already in_out, are left
// alone, and that a constant shared with another user survives.

// CHECK-LABEL: func.func @left_alone
//       CHECK:   mnemo.linear %{{.+}}, %arg1 layout(out_in)
//       CHECK:   %[[T:.+]] = arith.constant dense<{{.+}}> : tensor<3x2xf32>
//       CHECK:   mnemo.linear %{{.+}}, %[[T]] layout(in_out)
//       CHECK:   return {{.+}}, %{{.+}} : {{.+}}, tensor<2x3xf32>
func.func @left_alone(%x: tensor<5x3xf32>, %w: tensor<2x3xf32>)
    -> (tensor<5x2xf32>, tensor<5x2xf32>, tensor<2x3xf32>) {
  %a = mnemo.linear %x, %w layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32> -> tensor<5x2xf32>
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = mnemo.linear %x, %c layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32> -> tensor<5x2xf32>
  return %a, %b, %c : tensor<5x2xf32>, tensor<5x2xf32>, tensor<2x3xf32>
}

// -----

// Checks that a weight shared by two linears is transposed once.

// CHECK-LABEL: func.func @shared
//       CHECK:   %[[T:.+]] = arith.constant dense<{{.+}}> : tensor<3x2xf32>
//   CHECK-NOT:   arith.constant
//       CHECK:   mnemo.linear %{{.+}}, %[[T]] layout(in_out)
//       CHECK:   mnemo.linear %{{.+}}, %[[T]] layout(in_out)
func.func @shared(%x: tensor<5x3xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %a = mnemo.linear %x, %c layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32> -> tensor<5x2xf32>
  %b = mnemo.linear %x, %c layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32> -> tensor<5x2xf32>
  return %a, %b : tensor<5x2xf32>, tensor<5x2xf32>
}

// -----

// A GPU target's TF32 GEMM (f32-out-in): constant f32 weights become
// [N, K] (an in_out one transposed, an out_in one kept), a 16-bit one
// still goes to in_out unless to-in-out is off.

// OUTIN-LABEL: func.func @f32_out_in
//       OUTIN:   %[[T:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
//       OUTIN:   mnemo.linear %{{.+}}, %[[T]] layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32>
//       OUTIN:   mnemo.linear %{{.+}}, %{{.+}} layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32>
//       OUTIN:   mnemo.linear %{{.+}}, %{{.+}} layout(in_out) : tensor<5x3xbf16>, tensor<3x2xbf16>
// KEEP-LABEL: func.func @f32_out_in
//       KEEP:   layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32>
//       KEEP:   layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32>
//       KEEP:   layout(out_in) : tensor<5x3xbf16>, tensor<2x3xbf16>
// CHECK-LABEL: func.func @f32_out_in
//       CHECK:   layout(in_out) : tensor<5x3xf32>, tensor<3x2xf32>
//       CHECK:   layout(in_out) : tensor<5x3xf32>, tensor<3x2xf32>
func.func @f32_out_in(%x: tensor<5x3xf32>, %h: tensor<5x3xbf16>)
    -> (tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xbf16>) {
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %a = mnemo.linear %x, %c layout(in_out) : tensor<5x3xf32>, tensor<3x2xf32> -> tensor<5x2xf32>
  %d = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = mnemo.linear %x, %d layout(out_in) : tensor<5x3xf32>, tensor<2x3xf32> -> tensor<5x2xf32>
  %e = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xbf16>
  %f = mnemo.linear %h, %e layout(out_in) : tensor<5x3xbf16>, tensor<2x3xbf16> -> tensor<5x2xbf16>
  return %a, %b, %f : tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x2xbf16>
}
