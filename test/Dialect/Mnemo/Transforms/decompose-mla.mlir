// RUN: mnemo-opt %s --split-input-file --mnemo-decompose-mla --canonicalize | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --mnemo-decompose-mla=form=absorbed --canonicalize | FileCheck %s --check-prefix=FORCED

// Checks the expanded form: k_nope and v up-projected per head from c_kv,
// q = [q_nope, q_pe] and k = [k_nope, k_pe broadcast to the heads], one
// multi-head attention with D = dn + dr and Dv = dv.

//   CHECK-DAG: #[[LAT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
//   CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
//   CHECK-DAG: #[[BCAST:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @expanded
//  CHECK-SAME:   %[[QN:[a-z0-9]+]]: tensor<?x4x?x8xf32>, %[[QP:[a-z0-9]+]]: tensor<?x4x?x4xf32>, %[[C:[a-z0-9]+]]: tensor<?x?x6xf32>, %[[KP:[a-z0-9]+]]: tensor<?x?x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x8x6xf32>, %[[WV:[a-z0-9]+]]: tensor<4x5x6xf32>
//       CHECK:   %[[KN:.+]] = linalg.generic {indexing_maps = [#[[LAT]], #[[W]], {{.+}}]{{.*}} ins(%[[C]], %[[WK]] : {{.+}}) outs({{.+}} : tensor<?x4x?x8xf32>)
//       CHECK:   %[[V:.+]] = linalg.generic {indexing_maps = [#[[LAT]], #[[W]], {{.+}}]{{.*}} ins(%[[C]], %[[WV]] : {{.+}}) outs({{.+}} : tensor<?x4x?x5xf32>)
//       CHECK:   %[[Q0:.+]] = tensor.insert_slice %[[QN]] into %{{.+}}[0, 0, 0, 0] [%{{.+}}, 4, %{{.+}}, 8]
//       CHECK:   %[[Q:.+]] = tensor.insert_slice %[[QP]] into %[[Q0]][0, 0, 0, 8] [%{{.+}}, 4, %{{.+}}, 4]
//       CHECK:   %[[KP1:.+]] = tensor.expand_shape %[[KP]] {{\[\[}}0, 1], [2], [3]]
//       CHECK:   %[[KPH:.+]] = linalg.generic {indexing_maps = [#[[BCAST]], {{.+}}]{{.*}} ins(%[[KP1]] : tensor<?x1x?x4xf32>) outs({{.+}} : tensor<?x4x?x4xf32>)
//       CHECK:   %[[K0:.+]] = tensor.insert_slice %[[KN]] into
//       CHECK:   %[[K:.+]] = tensor.insert_slice %[[KPH]] into %[[K0]][0, 0, 0, 8]
//       CHECK:   %[[O:.+]] = mnemo.attention %[[Q]], %[[K]], %[[V]] causal scale(0.28867513459481292) q_offset(%{{.+}}) : tensor<?x4x?x12xf32>, tensor<?x4x?x12xf32>, tensor<?x4x?x5xf32> -> tensor<?x4x?x5xf32>
//       CHECK:   return %[[O]]
//   CHECK-NOT:   mnemo.mla_attention
// FORCED-LABEL: func.func @expanded
//       FORCED:   mnemo.attention {{.+}} : tensor<?x4x?x10xf32>, tensor<?x1x?x10xf32>, tensor<?x1x?x6xf32> -> tensor<?x4x?x6xf32>
func.func @expanded(%qn: tensor<?x4x?x8xf32>, %qp: tensor<?x4x?x4xf32>,
    %c: tensor<?x?x6xf32>, %kp: tensor<?x?x4xf32>, %wk: tensor<4x8x6xf32>,
    %wv: tensor<4x5x6xf32>, %off: index) -> tensor<?x4x?x5xf32> {
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal q_offset(%off)
      : tensor<?x4x?x8xf32>, tensor<?x4x?x4xf32>, tensor<?x?x6xf32>,
        tensor<?x?x4xf32>, tensor<4x8x6xf32>, tensor<4x5x6xf32>
      -> tensor<?x4x?x5xf32>
  return %o : tensor<?x4x?x5xf32>
}

// -----

// Checks the absorbed form: q_lat = q_nope W_UK per head (the nope dim
// reduced), one multi-query attention over the latent cache
// k = [c_kv, k_pe], v = c_kv (D = r + dr, Dv = r), then W_UV per head.

//   CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
//   CHECK-DAG: #[[WKMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
//   CHECK-DAG: #[[WVMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-LABEL: func.func @absorbed
//  CHECK-SAME:   %[[QN:[a-z0-9]+]]: tensor<2x4x1x8xf32>, %[[QP:[a-z0-9]+]]: tensor<2x4x1x4xf32>, %[[C:[a-z0-9]+]]: tensor<2x9x6xf32>, %[[KP:[a-z0-9]+]]: tensor<2x9x4xf32>, %[[WK:[a-z0-9]+]]: tensor<4x8x6xf32>, %[[WV:[a-z0-9]+]]: tensor<4x5x6xf32>
//       CHECK:   %[[QL:.+]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[WKMAP]], {{.+}}]{{.*}} ins(%[[QN]], %[[WK]] : {{.+}}) outs({{.+}} : tensor<2x4x1x6xf32>)
//       CHECK:   %[[Q0:.+]] = tensor.insert_slice %[[QL]] into %{{.+}}[0, 0, 0, 0] [2, 4, 1, 6]
//       CHECK:   %[[Q:.+]] = tensor.insert_slice %[[QP]] into %[[Q0]][0, 0, 0, 6] [2, 4, 1, 4]
//       CHECK:   %[[L:.+]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 1, 9, 6]
//       CHECK:   %[[R:.+]] = tensor.expand_shape %[[KP]]
//       CHECK:   %[[K0:.+]] = tensor.insert_slice %[[L]] into %{{.+}}[0, 0, 0, 0] [2, 1, 9, 6]
//       CHECK:   %[[K:.+]] = tensor.insert_slice %[[R]] into %[[K0]][0, 0, 0, 6] [2, 1, 9, 4]
//       CHECK:   %[[OL:.+]] = mnemo.attention %[[Q]], %[[K]], %[[L]] causal scale(2.500000e-01) : tensor<2x4x1x10xf32>, tensor<2x1x9x10xf32>, tensor<2x1x9x6xf32> -> tensor<2x4x1x6xf32>
//       CHECK:   %[[O:.+]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[WVMAP]], {{.+}}]{{.*}} ins(%[[OL]], %[[WV]] : {{.+}}) outs({{.+}} : tensor<2x4x1x5xf32>)
//       CHECK:   return %[[O]]
func.func @absorbed(%qn: tensor<2x4x1x8xf32>, %qp: tensor<2x4x1x4xf32>,
    %c: tensor<2x9x6xf32>, %kp: tensor<2x9x4xf32>, %wk: tensor<4x8x6xf32>,
    %wv: tensor<4x5x6xf32>) -> tensor<2x4x1x5xf32> {
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal scale(0.25)
      form(absorbed)
      : tensor<2x4x1x8xf32>, tensor<2x4x1x4xf32>, tensor<2x9x6xf32>,
        tensor<2x9x4xf32>, tensor<4x8x6xf32>, tensor<4x5x6xf32>
      -> tensor<2x4x1x5xf32>
  return %o : tensor<2x4x1x5xf32>
}

// -----

// Checks that f16 operands are widened to f32 for the projections and the
// attention, and the result narrowed back once.

// CHECK-LABEL: func.func @f16_computes_in_f32
//       CHECK:   arith.extf
//       CHECK:   mnemo.attention {{.+}} : tensor<1x2x3x12xf32>, tensor<1x2x3x12xf32>, tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf32>
//       CHECK:   arith.truncf {{.+}} : f32 to f16
//       CHECK:   return {{.+}} : tensor<1x2x3x8xf16>
func.func @f16_computes_in_f32(%qn: tensor<1x2x3x8xf16>, %qp: tensor<1x2x3x4xf16>,
    %c: tensor<1x3x6xf16>, %kp: tensor<1x3x4xf16>, %wk: tensor<2x8x6xf16>,
    %wv: tensor<2x8x6xf16>) -> tensor<1x2x3x8xf16> {
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal form(expanded)
      : tensor<1x2x3x8xf16>, tensor<1x2x3x4xf16>, tensor<1x3x6xf16>,
        tensor<1x3x4xf16>, tensor<2x8x6xf16>, tensor<2x8x6xf16>
      -> tensor<1x2x3x8xf16>
  return %o : tensor<1x2x3x8xf16>
}

// -----

// Checks that functions without MLA are left alone.

// CHECK-LABEL: func.func @no_mla
//       CHECK:   mnemo.attention
// CHECK-NOT:     linalg.generic
func.func @no_mla(%q: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %o = mnemo.attention %q, %q, %q : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>,
      tensor<1x2x3x8xf32> -> tensor<1x2x3x8xf32>
  return %o : tensor<1x2x3x8xf32>
}
