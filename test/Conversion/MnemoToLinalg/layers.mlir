// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg | FileCheck %s

// Checks the embedding lookup: ids index the table through tensor.extract,
// guarded so that ids outside [0, V) read row 0 and yield zero.

// CHECK-LABEL: func.func @embedding
//  CHECK-SAME:   %[[IDS:[a-z0-9]+]]: tensor<2x?xi64>, %[[T:[a-z0-9]+]]: tensor<256x16xf32>
//       CHECK:   %[[V:.+]] = tensor.dim %[[T]], %c0
//       CHECK:   linalg.generic {{.+}} ins(%[[IDS]] : tensor<2x?xi64>) outs(%{{.+}} : tensor<2x?x16xf32>)
//       CHECK:     %[[ID:.+]] = arith.index_cast
//       CHECK:     %[[LO:.+]] = arith.cmpi sge, %[[ID]], %c0
//       CHECK:     %[[HI:.+]] = arith.cmpi slt, %[[ID]], %[[V]]
//       CHECK:     %[[OK:.+]] = arith.andi %[[LO]], %[[HI]]
//       CHECK:     %[[ROW:.+]] = arith.select %[[OK]], %[[ID]], %c0
//       CHECK:     %[[E:.+]] = tensor.extract %[[T]][%[[ROW]], %{{.+}}]
//       CHECK:     arith.select %[[OK]], %[[E]], %cst
func.func @embedding(%ids: tensor<2x?xi64>, %table: tensor<256x16xf32>)
    -> tensor<2x?x16xf32> {
  %h = mnemo.embedding %table[%ids]
      : tensor<256x16xf32>, tensor<2x?xi64> -> tensor<2x?x16xf32>
  return %h : tensor<2x?x16xf32>
}

// -----

// Checks rms_norm: a sum of squares over the last dim, then
// x / sqrt(sum / N + eps) * (1 + w) with an f16 weight extended to f32.

// CHECK-LABEL: func.func @rms_norm
//       CHECK:   %[[SS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:   linalg.generic {{.+}} ins(%{{.+}}, %[[SS]], %{{.+}} : tensor<2x?x16xf32>, tensor<2x?xf32>, tensor<16xf16>)
//       CHECK:     arith.divf
//       CHECK:     arith.constant 9.99999997E-7 : f32
//       CHECK:     math.sqrt
//       CHECK:     arith.extf %{{.+}} : f16 to f32
//       CHECK:     arith.constant 1.000000e+00 : f32
func.func @rms_norm(%x: tensor<2x?x16xf32>, %w: tensor<16xf16>) -> tensor<2x?x16xf32> {
  %n = mnemo.rms_norm %x, %w eps(1.0e-6) unit_offset
      : tensor<2x?x16xf32>, tensor<16xf16> -> tensor<2x?x16xf32>
  return %n : tensor<2x?x16xf32>
}

// -----

// Checks both weight layouts: out_in reads W[n, k], in_out reads W[k, n],
// over loops (rows..., k, n) with the output features innermost; without
// bias the accumulator is the result, with bias one more generic.

// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[NK:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[KN:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[Y:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @linear
//       CHECK:   %[[G:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[NK]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
//       CHECK:   %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[KN]], {{.+}}]
//       CHECK:   %[[U:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #{{.+}}]{{.*}} ins(%[[ACC]], %{{.+}} :
//       CHECK:   return %[[G]], %[[U]]
func.func @linear(%x: tensor<2x?x16xf32>, %wg: tensor<32x16xf32>,
                  %wu: tensor<16x32xf32>, %b: tensor<32xf32>)
    -> (tensor<2x?x32xf32>, tensor<2x?x32xf32>) {
  %g = mnemo.linear %x, %wg layout(out_in)
      : tensor<2x?x16xf32>, tensor<32x16xf32> -> tensor<2x?x32xf32>
  %u = mnemo.linear %x, %wu layout(in_out) bias(%b : tensor<32xf32>)
      : tensor<2x?x16xf32>, tensor<16x32xf32> -> tensor<2x?x32xf32>
  return %g, %u : tensor<2x?x32xf32>, tensor<2x?x32xf32>
}

// -----

// Checks swiglu: gate * 1 / (1 + exp(-gate)) * up, elementwise.

// CHECK-LABEL: func.func @swiglu
//       CHECK:   linalg.generic
//       CHECK:     %[[NEG:.+]] = arith.negf %[[GATE:[a-z0-9_]+]]
//       CHECK:     %[[E:.+]] = math.exp %[[NEG]]
//       CHECK:     %[[DEN:.+]] = arith.addf %cst{{.*}}, %[[E]]
//       CHECK:     %[[SIG:.+]] = arith.divf %cst{{.*}}, %[[DEN]]
//       CHECK:     %[[SILU:.+]] = arith.mulf %[[GATE]], %[[SIG]]
//       CHECK:     arith.mulf %[[SILU]], %{{.+}}
func.func @swiglu(%g: tensor<4x7xf32>, %u: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %s = mnemo.swiglu %g, %u : tensor<4x7xf32>
  return %s : tensor<4x7xf32>
}

// -----

// Checks the clamped swiglu: gate = min(gate, L), up = clamp(up, -L, L)
// before the product.

// CHECK-LABEL: func.func @swiglu_limit
//       CHECK:   linalg.generic
//       CHECK:     %[[G:.+]] = arith.minimumf %{{.+}}, %[[HI:.+]] : f32
//       CHECK:     %[[U0:.+]] = arith.minimumf %{{.+}}, %[[HI]] : f32
//       CHECK:     %[[U:.+]] = arith.maximumf %[[U0]], %{{.+}} : f32
//       CHECK:     arith.negf %[[G]]
//       CHECK:     arith.mulf %{{.+}}, %[[U]]
func.func @swiglu_limit(%g: tensor<4x7xf32>, %u: tensor<4x7xf32>) -> tensor<4x7xf32> {
  %s = mnemo.swiglu %g, %u limit(2.0) : tensor<4x7xf32>
  return %s : tensor<4x7xf32>
}
