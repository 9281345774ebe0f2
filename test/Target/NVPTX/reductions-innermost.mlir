// RUN: mnemo-opt %s --mnemo-gpu-reductions-innermost | FileCheck %s

// A linear layer over a [K, N] weight, (m, s, k, n) with k a reduction:
// the parallel loops move first, the reduction last (operand maps follow).
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[XT:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[SECOND:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @linear
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @linear(%x: memref<2x40x128xf32>, %w: memref<128x344xf32>,
                  %y: memref<2x40x344xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2, d3) -> (d2, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x40x128xf32>, memref<128x344xf32>) outs(%y : memref<2x40x344xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Already in order (a row sum), or without reductions: unchanged.
// CHECK-LABEL: func.func @unchanged
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
func.func @unchanged(%x: memref<2x40x128xf32>, %s: memref<2x40xf32>,
                     %t: memref<40x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x40x128xf32>) outs(%s : memref<2x40xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<2x40xf32>) outs(%t : memref<40x2xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// A reduction first: x is now read as (n, k) -> x[k, n], and linalg.index
// of the old loop k reads the new loop 1.
// CHECK-LABEL: func.func @index
// CHECK: linalg.generic {indexing_maps = [#[[XT]], {{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK: %[[N0:.*]] = linalg.index 0 : index
// CHECK: %[[K1:.*]] = linalg.index 1 : index
// CHECK: affine.apply #[[SECOND]](%[[N0]], %[[K1]])
func.func @index(%x: memref<8x16xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %k = linalg.index 0 : index
    %n = linalg.index 1 : index
    %s = arith.addi %k, %n : index
    %i = arith.index_cast %s : index to i32
    %f = arith.sitofp %i : i32 to f32
    %m = arith.mulf %a, %f : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}
