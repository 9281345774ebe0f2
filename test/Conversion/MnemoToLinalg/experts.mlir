// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg | FileCheck %s --check-prefix=ROWS
// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg="experts-along-outputs=true" | FileCheck %s --check-prefix=OUTS

// mnemo.experts with constant weights: gate and up [E=2, I=2, H=3], down
// [E, H, I]. By default each contraction's innermost loop runs along the
// input features (a dot product per output, the expert's index read inside
// it). With experts-along-outputs (the CPU targets) every expert's matrices
// are transposed at compile time; each projection becomes a parallel loop
// over (token, selected expert) that reads the index once, around a row of
// I outputs accumulating the rows of the transposed weight (loops h, i);
// the down projection a parallel loop over tokens, in it the selected
// experts in order, each a row of outputs accumulating along i. The
// reductions keep their order (h; j then i), so each sum is the same.
func.func @moe(%x: tensor<1x4x3xf32>, %i: tensor<1x4x1xi64>, %w: tensor<1x4x1xf32>) -> tensor<1x4x3xf32> {
  %g = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]> : tensor<2x2x3xf32>
  %u = arith.constant dense<0.5> : tensor<2x2x3xf32>
  %d = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]> : tensor<2x3x2xf32>
  %y = mnemo.experts %x, %g, %u, %d, %i, %w : tensor<1x4x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<1x4x1xi64>, tensor<1x4x1xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// ROWS-LABEL: func.func @moe
// ROWS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// ROWS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// ROWS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]

// The gate transposed per expert ([2, 3, 2]: expert 0's columns 1 4, 2 5,
// 3 6), the splat up reshaped, the down transposed ([2, 2, 3]).
// OUTS-LABEL: func.func @moe
// OUTS-DAG: arith.constant dense<{{\[\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]], {{\[\[}}7.000000e+00, 1.000000e+01]{{.*}} : tensor<2x3x2xf32>
// OUTS-DAG: arith.constant dense<5.000000e-01> : tensor<2x3x2xf32>
// OUTS-DAG: arith.constant dense<{{\[\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]{{.*}} : tensor<2x2x3xf32>
// OUTS: scf.forall (%[[B:.*]], %[[S:.*]], %[[J:.*]]) in (1, 4, 1)
// OUTS: tensor.extract %arg1[%[[B]], %[[S]], %[[J]]] : tensor<1x4x1xi64>
// OUTS: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}}outs(%{{.*}} : tensor<2xf32>)
// OUTS: tensor.parallel_insert_slice
// OUTS: scf.forall
// OUTS: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}}outs(%{{.*}} : tensor<2xf32>)
// OUTS: scf.forall (%[[B2:.*]], %[[S2:.*]]) in (1, 4)
// OUTS: scf.for %[[J2:[a-z0-9_]+]] =
// OUTS: tensor.extract %arg1[%[[B2]], %[[S2]], %[[J2]]] : tensor<1x4x1xi64>
// OUTS: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}}outs(%{{.*}} : tensor<3xf32>)
// OUTS: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B2]], %[[S2]], 0] [1, 1, 3]

// -----

// Weights that are not constants keep the default form.
func.func @moe_args(%x: tensor<1x4x3xf32>, %g: tensor<2x2x3xf32>, %u: tensor<2x2x3xf32>, %d: tensor<2x3x2xf32>, %i: tensor<1x4x1xi64>, %w: tensor<1x4x1xf32>) -> tensor<1x4x3xf32> {
  %y = mnemo.experts %x, %g, %u, %d, %i, %w : tensor<1x4x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<1x4x1xi64>, tensor<1x4x1xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}
// OUTS-LABEL: func.func @moe_args
// OUTS-NOT: arith.constant dense<{{.*}}tensor<2x
// OUTS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// OUTS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// OUTS: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
