// RUN: mnemo-opt %s --convert-mnemo-to-linalg | FileCheck %s
// RUN: mnemo-opt %s --convert-mnemo-to-linalg --mnemo-gpu-reductions-innermost | FileCheck %s --check-prefix=GPU

// mnemo.gated_pool's reductions over an entry's slots: loops (b, n, j, c),
// the channel innermost, so that a slot's channels are one contiguous read
// of the gates and values (the bias [rate, d] read at (j, c), the result at
// (b, n, c)); the max, then the two sums in one op, then their quotient.
// The GPU targets move the slot loop innermost again.

// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @pool
// CHECK: linalg.generic {indexing_maps = [#[[BIAS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK:   %[[J:.+]] = linalg.index 2
// CHECK:   %[[C:.+]] = linalg.index 3
// CHECK:   arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#[[BIAS]], #[[OUT]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK:   math.exp
// CHECK: arith.divf

// GPU-LABEL: func.func @pool
// GPU: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// GPU: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
func.func @pool(%kv: tensor<1x?x128xf32>, %g: tensor<1x?x128xf32>,
                %bias: tensor<8x64xf32>, %e: tensor<1x?xi64>)
    -> tensor<1x?x64xf32> {
  %p = mnemo.gated_pool %kv, %g, %bias, %e rate(4) overlapping
      : tensor<1x?x128xf32>, tensor<1x?x128xf32>, tensor<8x64xf32>,
        tensor<1x?xi64> -> tensor<1x?x64xf32>
  return %p : tensor<1x?x64xf32>
}
