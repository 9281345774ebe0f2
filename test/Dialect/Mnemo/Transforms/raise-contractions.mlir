// RUN: mnemo-opt %s --split-input-file --mnemo-raise-contractions | FileCheck %s

// An ONNX MatMul of activations [2, 9, 20] by a [20, 31] matrix.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[Y:.*]] = mnemo.linear %arg0, %arg1 layout(in_out) : tensor<2x9x20xf32>, tensor<20x31xf32> -> tensor<2x9x31xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @matmul(%a: tensor<2x9x20xf32>, %b: tensor<20x31xf32>) -> tensor<2x9x31xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x9x31xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x31xf32>) -> tensor<2x9x31xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x9x20xf32>, tensor<20x31xf32>) outs(%z : tensor<2x9x31xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x9x31xf32>
  return %c : tensor<2x9x31xf32>
}

// -----

// Gemm with transB: B is read as [n, k]; the product's operands in the
// other order.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK: mnemo.linear %arg0, %arg1 layout(out_in) : tensor<7x18xf32>, tensor<23x18xf32> -> tensor<7x23xf32>
func.func @gemm_trans_b(%a: tensor<7x18xf32>, %b: tensor<23x18xf32>) -> tensor<7x23xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<7x23xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<7x23xf32>) -> tensor<7x23xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                        affine_map<(d0, d1, d2) -> (d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<7x18xf32>, tensor<23x18xf32>) outs(%z : tensor<7x23xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %y, %x : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<7x23xf32>
  return %c : tensor<7x23xf32>
}

// -----

// An attention tile's PV: a V block with unit leading dims, accumulated into
// the running output, which is added in place after the product.
// CHECK-LABEL: func.func @tile_pv
// CHECK: %[[V:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1, 2], [3]] : tensor<1x1x12x9xf32> into tensor<12x9xf32>
// CHECK: %[[P:.*]] = mnemo.linear %arg0, %[[V]] layout(in_out)
// CHECK: %[[S:.*]] = linalg.add ins(%[[P]], %arg2 : {{.*}}) outs(%arg2 : tensor<1x2x5x9xf32>)
// CHECK: return %[[S]]
func.func @tile_pv(%p: tensor<1x2x5x12xf32>, %v: tensor<1x1x12x9xf32>, %acc: tensor<1x2x5x9xf32>) -> tensor<1x2x5x9xf32> {
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d4, d3)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x2x5x12xf32>, tensor<1x1x12x9xf32>) outs(%acc : tensor<1x2x5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %a: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x5x9xf32>
  return %c : tensor<1x2x5x9xf32>
}

// -----

// Both operands batched (attention scores of an unraised graph): not one
// matrix, left alone. So is a body that is not a sum of products.
// CHECK-LABEL: func.func @batched
// CHECK-NOT: mnemo.linear
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @batched(%a: tensor<2x9x20xf32>, %b: tensor<2x20x31xf32>, %w: tensor<20x31xf32>) -> (tensor<2x9x31xf32>, tensor<2x9x31xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x9x31xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x31xf32>) -> tensor<2x9x31xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x9x20xf32>, tensor<2x20x31xf32>) outs(%z : tensor<2x9x31xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x9x31xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                                        affine_map<(d0, d1, d2, d3) -> (d3, d2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<2x9x20xf32>, tensor<20x31xf32>) outs(%z : tensor<2x9x31xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.maximumf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x9x31xf32>
  return %c, %d : tensor<2x9x31xf32>, tensor<2x9x31xf32>
}

// -----

// The expanded MLA's key up-projection: latent rows [b, s, k] times one
// [n, k] matrix per head, into [b, h, s, n]. The heads' matrices stacked
// as [h * n, k] make one linear; its [b, s, h * n] result is expanded and
// transposed into C.
// CHECK-LABEL: func.func @per_head
// CHECK: %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2]] : tensor<4x32x16xf32> into tensor<128x16xf32>
// CHECK: %[[Y:.*]] = mnemo.linear %arg0, %[[W]] layout(out_in) : tensor<?x?x16xf32>, tensor<128x16xf32> -> tensor<?x?x128xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0], [1], [2, 3]]
// CHECK-SAME: tensor<?x?x128xf32> into tensor<?x?x4x32xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<?x?x4x32xf32>) outs(%{{.*}} : tensor<?x4x?x32xf32>) permutation = [0, 2, 1, 3]
// CHECK-NOT: linalg.generic
// CHECK: return %[[T]]
func.func @per_head(%a: tensor<?x?x16xf32>, %w: tensor<4x32x16xf32>) -> tensor<?x4x?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %a, %c0 : tensor<?x?x16xf32>
  %s = tensor.dim %a, %c1 : tensor<?x?x16xf32>
  %e = tensor.empty(%b, %s) : tensor<?x4x?x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<?x?x16xf32>, tensor<4x32x16xf32>) outs(%z : tensor<?x4x?x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x32xf32>
  return %c : tensor<?x4x?x32xf32>
}
