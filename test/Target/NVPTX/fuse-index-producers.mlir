// RUN: mnemo-opt %s --mnemo-gpu-fuse-index-producers --canonicalize | FileCheck %s

// A forward's positions (arange over the sequence) read by two rotary
// embeddings' generics: each computes the position from its own loop
// index (its dim 2, where it reads the positions' dim 1), and the
// positions' own generic is gone.
// CHECK-LABEL: func.func @positions
// CHECK-NOT: linalg.generic {{.*}}outs(%{{.*}} : tensor<?x?xi64>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<?x4x?x8xf32>)
// CHECK: %[[S:.*]] = linalg.index 2 : index
// CHECK: arith.index_cast %[[S]] : index to i64
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg1 : tensor<?x2x?x8xf32>)
// CHECK: %[[S2:.*]] = linalg.index 2 : index
// CHECK: arith.index_cast %[[S2]] : index to i64
// CHECK-NOT: linalg.generic
#bs = affine_map<(b, h, s, d) -> (b, s)>
#all = affine_map<(b, h, s, d) -> (b, h, s, d)>
func.func @positions(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>)
    -> (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x8xf32>
  %s = tensor.dim %q, %c2 : tensor<?x4x?x8xf32>
  %e = tensor.empty(%b, %s) : tensor<?x?xi64>
  %pos = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 1 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<?x?xi64>
  %qe = tensor.empty(%b, %s) : tensor<?x4x?x8xf32>
  %qr = linalg.generic {indexing_maps = [#all, #bs, #all],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q, %pos : tensor<?x4x?x8xf32>, tensor<?x?xi64>)
      outs(%qe : tensor<?x4x?x8xf32>) {
  ^bb0(%x: f32, %p: i64, %out: f32):
    %f = arith.sitofp %p : i64 to f32
    %y = arith.mulf %x, %f : f32
    linalg.yield %y : f32
  } -> tensor<?x4x?x8xf32>
  %ke = tensor.empty(%b, %s) : tensor<?x2x?x8xf32>
  %kr = linalg.generic {indexing_maps = [#all, #bs, #all],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %pos : tensor<?x2x?x8xf32>, tensor<?x?xi64>)
      outs(%ke : tensor<?x2x?x8xf32>) {
  ^bb0(%x: f32, %p: i64, %out: f32):
    %f = arith.sitofp %p : i64 to f32
    %y = arith.addf %x, %f : f32
    linalg.yield %y : f32
  } -> tensor<?x2x?x8xf32>
  return %qr, %kr : tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>
}

// A producer that reads an input, and one whose result is also returned:
// the first is no index producer and stays; the second stays for the
// return while its generic reader computes its own values.
// CHECK-LABEL: func.func @kept
// CHECK: %[[SCALED:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<16xi64>)
// CHECK: %[[IOTA:.*]] = linalg.generic
// CHECK-SAME: outs(
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SCALED]] : tensor<16xi64>)
// CHECK: linalg.index 0
// CHECK: return %{{.*}}, %[[IOTA]]
func.func @kept(%x: tensor<16xi64>) -> (tensor<16xi64>, tensor<16xi64>) {
  %e = tensor.empty() : tensor<16xi64>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                            iterator_types = ["parallel"]}
      ins(%x : tensor<16xi64>) outs(%e : tensor<16xi64>) {
  ^bb0(%a: i64, %out: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    %m = arith.muli %a, %v : i64
    linalg.yield %m : i64
  } -> tensor<16xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                          iterator_types = ["parallel"]}
      outs(%e : tensor<16xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<16xi64>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
      ins(%scaled, %iota : tensor<16xi64>, tensor<16xi64>) outs(%e : tensor<16xi64>) {
  ^bb0(%a: i64, %b: i64, %out: i64):
    %r = arith.addi %a, %b : i64
    linalg.yield %r : i64
  } -> tensor<16xi64>
  return %sum, %iota : tensor<16xi64>, tensor<16xi64>
}
