// RUN: mnemo-opt %s --pass-pipeline='builtin.module(func.func(mnemo-fold-unit-transposes))' | FileCheck %s

// A decode step's heads, [B, 1, H, D] -> [B, H, 1, D]: a view through
// [B, H, D], the result's dynamic batch that of the init.
// CHECK-LABEL: func.func @heads_of_one_token
// CHECK-SAME: (%[[X:.*]]: tensor<?x1x4x32xf32>, %[[B:.*]]: index)
// CHECK-NOT: linalg.transpose
// CHECK: %[[I:.*]] = tensor.empty(%[[B]])
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2], [3]] : tensor<?x1x4x32xf32> into tensor<?x4x32xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[I]], %c0
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2], [3]] output_shape [%[[D]], 4, 1, 32] : tensor<?x4x32xf32> into tensor<?x4x1x32xf32>
// CHECK: return %[[E]]
func.func @heads_of_one_token(%x: tensor<?x1x4x32xf32>, %b: index) -> tensor<?x4x1x32xf32> {
  %init = tensor.empty(%b) : tensor<?x4x1x32xf32>
  %t = linalg.transpose ins(%x : tensor<?x1x4x32xf32>) outs(%init : tensor<?x4x1x32xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<?x4x1x32xf32>
}

// And back, [B, H, 1, D] -> [B, 1, H, D].
// CHECK-LABEL: func.func @back_to_tokens
// CHECK-NOT: linalg.transpose
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] : tensor<?x4x1x32xf32> into tensor<?x4x32xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] output_shape [%{{.*}}, 1, 4, 32] : tensor<?x4x32xf32> into tensor<?x1x4x32xf32>
func.func @back_to_tokens(%x: tensor<?x4x1x32xf32>, %b: index) -> tensor<?x1x4x32xf32> {
  %init = tensor.empty(%b) : tensor<?x1x4x32xf32>
  %t = linalg.transpose ins(%x : tensor<?x4x1x32xf32>) outs(%init : tensor<?x1x4x32xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<?x1x4x32xf32>
}

// Leading unit dims join the first dim that is not 1.
// CHECK-LABEL: func.func @leading_units
// CHECK-NOT: linalg.transpose
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<1x1x8x16xf32> into tensor<8x16xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] output_shape [1, 8, 1, 16] : tensor<8x16xf32> into tensor<1x8x1x16xf32>
func.func @leading_units(%x: tensor<1x1x8x16xf32>) -> tensor<1x8x1x16xf32> {
  %init = tensor.empty() : tensor<1x8x1x16xf32>
  %t = linalg.transpose ins(%x : tensor<1x1x8x16xf32>) outs(%init : tensor<1x8x1x16xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x8x1x16xf32>
}

// Transposes that move data stay: two tokens' heads; a dynamic dim (which
// may be more than 1 at run time) moved past another; every dim 1.
// CHECK-LABEL: func.func @real_transposes
// CHECK-COUNT-3: linalg.transpose
// CHECK-NOT: tensor.expand_shape
func.func @real_transposes(%x: tensor<?x2x4x32xf32>, %y: tensor<1x?x?x32xf32>, %z: tensor<1x1x1x1xf32>, %b: index, %s: index, %h: index) -> (tensor<?x4x2x32xf32>, tensor<1x?x?x32xf32>, tensor<1x1x1x1xf32>) {
  %i0 = tensor.empty(%b) : tensor<?x4x2x32xf32>
  %t0 = linalg.transpose ins(%x : tensor<?x2x4x32xf32>) outs(%i0 : tensor<?x4x2x32xf32>) permutation = [0, 2, 1, 3]
  %i1 = tensor.empty(%h, %s) : tensor<1x?x?x32xf32>
  %t1 = linalg.transpose ins(%y : tensor<1x?x?x32xf32>) outs(%i1 : tensor<1x?x?x32xf32>) permutation = [0, 2, 1, 3]
  %i2 = tensor.empty() : tensor<1x1x1x1xf32>
  %t2 = linalg.transpose ins(%z : tensor<1x1x1x1xf32>) outs(%i2 : tensor<1x1x1x1xf32>) permutation = [0, 2, 1, 3]
  return %t0, %t1, %t2 : tensor<?x4x2x32xf32>, tensor<1x?x?x32xf32>, tensor<1x1x1x1xf32>
}
