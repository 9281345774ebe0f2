// RUN: mnemo-opt %s --convert-mnemo-to-linalg | FileCheck %s

// Checks the reference lowering of mnemo.mla_attention: the expanded form
// (keys and values up-projected per head from the latent cache), whose
// attention is lowered in the same pass; no mnemo op is left.

// CHECK-DAG: #[[LAT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-LABEL: func.func @mla
//  CHECK-SAME:   %{{[a-z0-9]+}}: tensor<1x4x1x8xf32>, %{{[a-z0-9]+}}: tensor<1x4x1x4xf32>, %[[C:[a-z0-9]+]]: tensor<1x9x6xf32>, %{{[a-z0-9]+}}: tensor<1x9x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x8x6xf32>, %[[WV:[a-z0-9]+]]: tensor<4x5x6xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[LAT]], #[[W]], {{.+}}]{{.*}} ins(%[[C]], %[[WK]] :
//       CHECK:   linalg.generic {indexing_maps = [#[[LAT]], #[[W]], {{.+}}]{{.*}} ins(%[[C]], %[[WV]] :
//       CHECK:   math.exp
//   CHECK-NOT:   mnemo.
func.func @mla(%qn: tensor<1x4x1x8xf32>, %qp: tensor<1x4x1x4xf32>,
    %c: tensor<1x9x6xf32>, %kp: tensor<1x9x4xf32>, %wk: tensor<4x8x6xf32>,
    %wv: tensor<4x5x6xf32>, %off: index) -> tensor<1x4x1x5xf32> {
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal q_offset(%off)
      form(absorbed)
      : tensor<1x4x1x8xf32>, tensor<1x4x1x4xf32>, tensor<1x9x6xf32>,
        tensor<1x9x4xf32>, tensor<4x8x6xf32>, tensor<4x5x6xf32>
      -> tensor<1x4x1x5xf32>
  return %o : tensor<1x4x1x5xf32>
}
