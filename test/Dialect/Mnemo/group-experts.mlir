// RUN: mnemo-opt %s --split-input-file --mnemo-group-experts | FileCheck %s

// Four tokens (a prefill) routed among 2 experts with constant weights:
// the weights transposed per expert ([2, 3, 2], [2, 3, 2], [2, 2, 3]); a
// counting sort of the (token, slot) pairs by expert (three scalar loops);
// an scf.forall over the experts in which each gathers its rows, runs
// mnemo.linear against in_out slices of its transposed gate and up,
// mnemo.swiglu and mnemo.linear against its down, scales each row by its
// routing weight and writes its rows at its offset in the sorted order;
// then each token sums its slots from there.
// CHECK-LABEL: func.func @moe
// CHECK-DAG: %[[G:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 4.000000e+00]{{.*}} : tensor<2x3x2xf32>
// CHECK-DAG: %[[D:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00]{{.*}} : tensor<2x2x3xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[SORTED:.+]] = scf.forall (%[[E:.*]]) in (2) shared_outs(%[[OUT:.*]] =
// CHECK: %[[START:.+]] = tensor.extract %{{.*}}[%[[E]]] : tensor<4xindex>
// CHECK: %[[GE:.+]] = tensor.extract_slice %[[G]][%[[E]], 0, 0] [1, 3, 2] [1, 1, 1] : tensor<2x3x2xf32> to tensor<3x2xf32>
// CHECK: mnemo.linear %{{.*}}, %[[GE]] layout(in_out) : tensor<?x3xf32>, tensor<3x2xf32> -> tensor<?x2xf32>
// CHECK: mnemo.linear {{.*}} layout(in_out)
// CHECK: mnemo.swiglu
// CHECK: %[[DE:.+]] = tensor.extract_slice %[[D]][%[[E]], 0, 0] [1, 2, 3]
// CHECK: mnemo.linear %{{.*}}, %[[DE]] layout(in_out) : tensor<?x2xf32>, tensor<2x3xf32> -> tensor<?x3xf32>
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[START]], 0] [%{{.*}}, 3]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: tensor.extract %[[SORTED]]
// CHECK-NOT: mnemo.experts
func.func @moe(%x: tensor<1x4x3xf32>, %i: tensor<1x4x1xi64>, %w: tensor<1x4x1xf32>) -> tensor<1x4x3xf32> {
  %g = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]> : tensor<2x2x3xf32>
  %u = arith.constant dense<0.5> : tensor<2x2x3xf32>
  %d = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]> : tensor<2x3x2xf32>
  %y = mnemo.experts %x, %g, %u, %d, %i, %w : tensor<1x4x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<1x4x1xi64>, tensor<1x4x1xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// A decode step (one token per sequence) and weights given at run time keep
// the op.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: scf.forall
// CHECK: mnemo.experts
func.func @decode(%x: tensor<?x1x3xf32>, %i: tensor<?x1x1xi64>, %w: tensor<?x1x1xf32>) -> tensor<?x1x3xf32> {
  %g = arith.constant dense<0.25> : tensor<2x2x3xf32>
  %d = arith.constant dense<0.5> : tensor<2x3x2xf32>
  %y = mnemo.experts %x, %g, %g, %d, %i, %w : tensor<?x1x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<?x1x1xi64>, tensor<?x1x1xf32> -> tensor<?x1x3xf32>
  return %y : tensor<?x1x3xf32>
}
// CHECK-LABEL: func.func @arguments
// CHECK-NOT: scf.forall
// CHECK: mnemo.experts
func.func @arguments(%x: tensor<1x4x3xf32>, %g: tensor<2x2x3xf32>, %d: tensor<2x3x2xf32>, %i: tensor<1x4x1xi64>, %w: tensor<1x4x1xf32>) -> tensor<1x4x3xf32> {
  %y = mnemo.experts %x, %g, %g, %d, %i, %w : tensor<1x4x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x3x2xf32>, tensor<1x4x1xi64>, tensor<1x4x1xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}
