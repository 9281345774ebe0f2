// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg | FileCheck %s

// Checks the structure of the reference attention: Q·Kᵀ with GQA through a
// floordiv in K's map, scale/mask/causal/window in one elementwise generic,
// max and sum reductions over keys, P·V, and the final normalization.

// CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
// CHECK-DAG: #[[VMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
// CHECK-DAG: #[[MASK2D:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @gqa_causal_window_mask
//  CHECK-SAME:   %[[Q:[a-z0-9]+]]: tensor<1x8x5x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x7x16xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x7x8xf32>, %[[M:[a-z0-9]+]]: tensor<5x7xf32>, %[[OFF:[a-z0-9]+]]: index
//       CHECK:   %[[S:.+]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], {{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.+}}) outs({{.+}} : tensor<1x8x5x7xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#[[MASK2D]], {{.+}}]{{.*}} ins(%[[M]] : tensor<5x7xf32>) outs(%[[S]]
//       CHECK:     arith.constant 5.000000e-01 : f32
//       CHECK:     %[[I:.+]] = linalg.index 2
//       CHECK:     %[[QPOS:.+]] = arith.addi %[[I]], %[[OFF]]
//       CHECK:     %[[J:.+]] = linalg.index 3
//       CHECK:     %[[FUTURE:.+]] = arith.cmpi sgt, %[[J]], %[[QPOS]]
//       CHECK:     %[[DIST:.+]] = arith.subi %[[QPOS]], %[[J]]
//       CHECK:     %[[OLD:.+]] = arith.cmpi sge, %[[DIST]], %c4
//       CHECK:     %[[HIDDEN:.+]] = arith.ori %[[FUTURE]], %[[OLD]]
//       CHECK:     arith.select %[[HIDDEN]], %cst{{.*}}
//       CHECK:   arith.maximumf
//       CHECK:   math.exp
//       CHECK:   linalg.generic {indexing_maps = [#[[QMAP]], #[[VMAP]], {{.+}}]{{.*}} ins(%{{.+}}, %[[V]] :
//       CHECK:   arith.divf
//   CHECK-NOT:   mnemo.
func.func @gqa_causal_window_mask(%q: tensor<1x8x5x16xf32>, %k: tensor<1x2x7x16xf32>,
    %v: tensor<1x2x7x8xf32>, %m: tensor<5x7xf32>, %off: index) -> tensor<1x8x5x8xf32> {
  %o = mnemo.attention %q, %k, %v causal window(4) scale(0.5)
      mask(%m : tensor<5x7xf32>) q_offset(%off)
      : tensor<1x8x5x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x7x8xf32>
      -> tensor<1x8x5x8xf32>
  return %o : tensor<1x8x5x8xf32>
}

// -----

// Checks the default scale 1/sqrt(D), softcap, and that bf16 inputs are
// computed in f32 and truncated once at the end.

// CHECK-LABEL: func.func @softcap_bf16
//       CHECK:   arith.extf %{{.+}} : bf16 to f32
//       CHECK:   arith.constant 0.17677669{{[0-9]*}} : f32
//       CHECK:   arith.constant 3.000000e+01 : f32
//       CHECK:   math.tanh
//   CHECK-NOT:   linalg.index
//       CHECK:   arith.truncf %{{.+}} : f32 to bf16
func.func @softcap_bf16(%q: tensor<1x2x3x32xbf16>, %k: tensor<1x2x3x32xbf16>,
    %v: tensor<1x2x3x32xbf16>) -> tensor<1x2x3x32xbf16> {
  %o = mnemo.attention %q, %k, %v softcap(30.0)
      : tensor<1x2x3x32xbf16>, tensor<1x2x3x32xbf16>, tensor<1x2x3x32xbf16>
      -> tensor<1x2x3x32xbf16>
  return %o : tensor<1x2x3x32xbf16>
}

// -----

// Checks that sink logits seed the row max and the row sum, and that
// dynamic batch/lengths take their sizes from the operands.

// CHECK-DAG: #[[HEAD:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @sink_dynamic
//  CHECK-SAME:   %[[Q:[a-z0-9]+]]: tensor<?x4x?x8xf32>, %[[K:[a-z0-9]+]]: tensor<?x2x?x8xf32>, %{{.+}}: tensor<?x2x?x8xf32>, %[[SINK:[a-z0-9]+]]: tensor<4xf32>
//   CHECK-DAG:   %[[B:.+]] = tensor.dim %[[Q]], %c0
//   CHECK-DAG:   %[[SQ:.+]] = tensor.dim %[[Q]], %c2
//   CHECK-DAG:   %[[SKV:.+]] = tensor.dim %[[K]], %c2
//       CHECK:   tensor.empty(%[[B]], %[[SQ]], %[[SKV]]) : tensor<?x4x?x?xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[HEAD]], {{.+}}]{{.*}} ins(%[[SINK]] : tensor<4xf32>)
//       CHECK:   arith.maximumf
//       CHECK:   linalg.generic {indexing_maps = [#[[HEAD]], {{.+}}]{{.*}} ins(%[[SINK]], %{{.+}} : tensor<4xf32>, tensor<?x4x?xf32>)
//       CHECK:     arith.subf
//       CHECK:     math.exp
func.func @sink_dynamic(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>,
    %v: tensor<?x2x?x8xf32>, %s: tensor<4xf32>) -> tensor<?x4x?x8xf32> {
  %o = mnemo.attention %q, %k, %v sink(%s : tensor<4xf32>)
      : tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}
