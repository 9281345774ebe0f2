// RUN: mnemo-opt %s --split-input-file --mnemo-group-experts=group-rows=64 | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --mnemo-group-experts="group-rows=64 round-rows=true" | FileCheck %s --check-prefix=ROUND

// The GPU targets' form: a prefill's pairs sorted by parallel counts (per
// chunk of 256 pairs and group, the chunks before, the blocks of 64 rows
// each expert needs, the blocks before it, each pair's place), each pair's
// row of x written at its place by an scf.forall over the pairs, the
// block's expert listed (i32, -1 for none), and the three products as
// mnemo.grouped_linear over all the blocks; then each token sums its
// slots times their routing weights. Weights given at run time are grouped
// too, and no sequential loop is left.
// CHECK-LABEL: func.func @arguments
// CHECK-NOT: scf.for
// CHECK: %[[COUNTS:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?x3xindex>)
// CHECK: linalg.generic {{.*}}ins(%[[COUNTS]] : tensor<?x3xindex>) outs(%{{.*}} : tensor<?x3xindex>)
// CHECK: arith.ceildivui %{{.*}}, %c64
// CHECK: %[[POS:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?xindex>)
// CHECK: %[[BLOCKS:.+]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<?xi32>)
// CHECK: %[[XS:.+]] = scf.forall (%[[P:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x3xf32>)
// CHECK: %[[AT:.+]] = tensor.extract %[[POS]][%[[P]]]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[AT]], 0] [1, 3] [1, 1]
// CHECK: %[[GATE:.+]] = mnemo.grouped_linear %[[XS]], %arg1 groups(%[[BLOCKS]]) rows(64) : tensor<?x3xf32>, tensor<2x2x3xbf16>, tensor<?xi32> -> tensor<?x2xf32>
// CHECK: %[[UP:.+]] = mnemo.grouped_linear %[[XS]], %arg1 groups(%[[BLOCKS]]) rows(64)
// CHECK: %[[ACT:.+]] = mnemo.swiglu %[[GATE]], %[[UP]]
// CHECK: mnemo.grouped_linear %[[ACT]], %arg2 groups(%[[BLOCKS]]) rows(64) : tensor<?x2xf32>, tensor<2x3x2xbf16>, tensor<?xi32> -> tensor<?x3xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-NOT: mnemo.experts
// With round-rows the rows are written in the weights' bf16, rounded as
// they are (the GPU targets' GEMM operands).
// ROUND-LABEL: func.func @arguments
// ROUND: scf.forall {{.*}} -> (tensor<?x3xbf16>)
// ROUND: arith.truncf %{{.*}} : f32 to bf16
// ROUND: tensor.parallel_insert_slice
// ROUND: mnemo.grouped_linear %{{.*}}, %arg1 groups(%{{.*}}) rows(64) : tensor<?x3xbf16>, tensor<2x2x3xbf16>
func.func @arguments(%x: tensor<1x?x3xf32>, %g: tensor<2x2x3xbf16>, %d: tensor<2x3x2xbf16>, %i: tensor<1x?x2xi64>, %w: tensor<1x?x2xf32>) -> tensor<1x?x3xf32> {
  %y = mnemo.experts %x, %g, %g, %d, %i, %w : tensor<1x?x3xf32>, tensor<2x2x3xbf16>, tensor<2x2x3xbf16>, tensor<2x3x2xbf16>, tensor<1x?x2xi64>, tensor<1x?x2xf32> -> tensor<1x?x3xf32>
  return %y : tensor<1x?x3xf32>
}

// -----

// A decode step (one token per sequence) is grouped too.
// CHECK-LABEL: func.func @decode
// CHECK: mnemo.grouped_linear
// CHECK-NOT: mnemo.experts
func.func @decode(%x: tensor<?x1x3xf32>, %g: tensor<2x2x3xbf16>, %d: tensor<2x3x2xbf16>, %i: tensor<?x1x1xi64>, %w: tensor<?x1x1xf32>) -> tensor<?x1x3xf32> {
  %y = mnemo.experts %x, %g, %g, %d, %i, %w : tensor<?x1x3xf32>, tensor<2x2x3xbf16>, tensor<2x2x3xbf16>, tensor<2x3x2xbf16>, tensor<?x1x1xi64>, tensor<?x1x1xf32> -> tensor<?x1x3xf32>
  return %y : tensor<?x1x3xf32>
}
