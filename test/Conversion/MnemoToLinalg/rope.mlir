// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg | FileCheck %s

// Checks rotate-half with partial rotary dim and YaRN: the inverse
// frequencies become a constant (10000^-0.5 / 4 for the interpolated pair),
// cos/sin are scaled by mscale = 0.1 ln 4 + 1, features past rotary_dim pass
// through, and [1, S] positions broadcast over the batch.

// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d2)>
// CHECK-LABEL: func.func @rotate_half_partial_yarn
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<1x2x3x8xf32>, %[[P:[a-z0-9]+]]: tensor<1x3xi64>
//       CHECK:   %[[FREQ:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.500000e-03]]> : tensor<1x2xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[POS]], #{{.+}}]{{.*}} ins(%[[X]], %[[P]] :
//       CHECK:     %[[D:.+]] = linalg.index 3
//       CHECK:     %[[ROT:.+]] = arith.cmpi slt, %[[D]], %c4
//       CHECK:     %[[FIRST:.+]] = arith.cmpi slt, %[[D]], %c2
//       CHECK:     tensor.extract %[[FREQ]]
//       CHECK:     math.cos
//       CHECK:     math.sin
//       CHECK:     arith.constant 1.13862944 : f32
//       CHECK:     %[[PARTNER:.+]] = tensor.extract %[[X]]
//       CHECK:     %[[NEG:.+]] = arith.negf %[[PARTNER]]
//       CHECK:     arith.select %[[FIRST]], %[[NEG]], %[[PARTNER]]
//       CHECK:     arith.select %[[ROT]]
//   CHECK-NOT:   mnemo.rope
func.func @rotate_half_partial_yarn(%x: tensor<1x2x3x8xf32>, %p: tensor<1x3xi64>)
    -> tensor<1x2x3x8xf32> {
  %y = mnemo.rope %x, %p theta(10000.0) rotary_dim(4)
      scaling(<yarn, factor = 4.0, original_max_position = 64>)
      : tensor<1x2x3x8xf32>, tensor<1x3xi64> -> tensor<1x2x3x8xf32>
  return %y : tensor<1x2x3x8xf32>
}

// -----

// Checks interleaved pairing (2k, 2k+1) and dynamic NTK: the base is derived
// in the IR from max(positions) + 1, clamped below by the original context,
// inside the inverse-frequency generic, in f32 as exp(-(2k/r) ln theta'):
// a 1-element maximum under a parallel loop, no scalar extracted (GPU
// targets keep it all in kernels), no pow.

// CHECK-LABEL: func.func @interleaved_dynamic
//       CHECK:   %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
//  CHECK-SAME:     outs(%{{.+}} : tensor<1xi64>)
//       CHECK:     arith.extsi %{{.+}} : i32 to i64
//       CHECK:     arith.maxsi
//   CHECK-NOT:   tensor.extract %[[MAX]]
//       CHECK:   %[[FREQ:.+]] = linalg.generic {{.+}} ins(%[[MAX]] : tensor<1xi64>)
//       CHECK:   ^bb0(%[[M:.+]]: i64
//       CHECK:     %[[SEQ:.+]] = arith.addi %[[M]], %c1_i64
//       CHECK:     arith.maxsi %[[SEQ]], %c64_i64
//       CHECK:     math.log %{{.+}} : f32
//       CHECK:     math.exp %{{.+}} : f32
//   CHECK-NOT:     math.powf
//       CHECK:   linalg.generic
//       CHECK:     arith.divui %{{.+}}, %c2
//       CHECK:     arith.remui %{{.+}}, %c2
//       CHECK:     tensor.extract %[[FREQ]]
func.func @interleaved_dynamic(%x: tensor<1x2x3x8xf32>, %p: tensor<3xi32>)
    -> tensor<1x2x3x8xf32> {
  %y = mnemo.rope %x, %p theta(10000.0) interleaved
      scaling(<dynamic, factor = 2.0, original_max_position = 64>)
      : tensor<1x2x3x8xf32>, tensor<3xi32> -> tensor<1x2x3x8xf32>
  return %y : tensor<1x2x3x8xf32>
}

// -----

// Dynamic NTK over [B, S] positions: each row's base from that row's
// largest position (a [B] maximum, the reduction over S only), and the
// frequency table [B, r/2] read at the element's batch row.

// CHECK-LABEL: func.func @dynamic_per_row
//       CHECK:   %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
//  CHECK-SAME:     ins(%{{.+}} : tensor<?x5xi64>) outs(%{{.+}} : tensor<?xi64>)
//       CHECK:   %[[FREQ:.+]] = linalg.generic {{.+}} ins(%[[MAX]] : tensor<?xi64>) outs(%{{.+}} : tensor<?x4xf32>)
//       CHECK:   linalg.generic
//       CHECK:     %[[B:.+]] = linalg.index 0
//       CHECK:     tensor.extract %[[FREQ]][%[[B]], %{{.+}}]
func.func @dynamic_per_row(%x: tensor<?x2x5x8xf32>, %p: tensor<?x5xi64>)
    -> tensor<?x2x5x8xf32> {
  %y = mnemo.rope %x, %p theta(10000.0)
      scaling(<dynamic, factor = 2.0, original_max_position = 4>)
      : tensor<?x2x5x8xf32>, tensor<?x5xi64> -> tensor<?x2x5x8xf32>
  return %y : tensor<?x2x5x8xf32>
}

// -----

// A rotate-half rope over every feature: the input seen as
// [B, H, S, 2, r/2], each element rotated with the same k of the other half
// (1 - j), so that the innermost loop runs over contiguous features,
// frequencies and partners with no index arithmetic on it (the form the GPU
// targets vectorize); the arithmetic is the generic form's.

// CHECK-DAG: #[[POS5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2)>
// CHECK-DAG: #[[ID5:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @rotate_half_full
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<?x2x3x8xbf16>, %[[P:[a-z0-9]+]]: tensor<?x3xi64>
//       CHECK:   %[[FREQ:.+]] = arith.constant dense<{{.+}}> : tensor<1x4xf32>
//       CHECK:   %[[H:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2], [3, 4]]
//  CHECK-SAME:     tensor<?x2x3x8xbf16> into tensor<?x2x3x2x4xbf16>
//       CHECK:   %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID5]], #[[POS5]], #[[ID5]]]
//  CHECK-SAME:     ins(%[[H]], %[[P]] :
//       CHECK:     %[[J:.+]] = linalg.index 3
//       CHECK:     %[[K:.+]] = linalg.index 4
//       CHECK:     tensor.extract %[[FREQ]][%{{.+}}, %[[K]]]
//       CHECK:     math.cos
//       CHECK:     math.sin
//       CHECK:     %[[J1:.+]] = arith.subi %c1{{.*}}, %[[J]]
//       CHECK:     %[[PARTNER:.+]] = tensor.extract %[[H]][%{{.+}}, %{{.+}}, %{{.+}}, %[[J1]], %[[K]]]
//       CHECK:     %[[OTHER:.+]] = arith.extf %[[PARTNER]]
//       CHECK:     %[[FIRST:.+]] = arith.cmpi eq, %[[J]], %c0{{.*}}
//       CHECK:     %[[NEG:.+]] = arith.negf %[[OTHER]]
//       CHECK:     arith.select %[[FIRST]], %[[NEG]], %[[OTHER]]
//       CHECK:     arith.truncf %{{.+}} : f32 to bf16
//       CHECK:   tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]]
//  CHECK-SAME:     tensor<?x2x3x2x4xbf16> into tensor<?x2x3x8xbf16>
//   CHECK-NOT:   mnemo.rope
func.func @rotate_half_full(%x: tensor<?x2x3x8xbf16>, %p: tensor<?x3xi64>)
    -> tensor<?x2x3x8xbf16> {
  %y = mnemo.rope %x, %p theta(10000.0)
      : tensor<?x2x3x8xbf16>, tensor<?x3xi64> -> tensor<?x2x3x8xbf16>
  return %y : tensor<?x2x3x8xbf16>
}
