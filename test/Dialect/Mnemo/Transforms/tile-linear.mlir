// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-linear{block-rows=8 block-cols=64}),canonicalize,cse)" \
// RUN:   | FileCheck %s
// RUN: not mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-linear{block-cols=0}))" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADTILE

// BADTILE: error: mnemo-tile-linear needs positive tile sizes, got block-rows=8 block-cols=0

// Checks the tiling of a batched linear with an out_in weight and a bias:
// a forall over (batch, row tiles, column tiles); per tile, loops (k, m, n)
// with k the reduction (outermost) and the output features innermost; the
// bias slice added per tile.

// CHECK-DAG: #[[XMAP:.+]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[WMAP:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[YMAP:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @batched_bias
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<2x?x32xf32>, %[[W:[a-z0-9]+]]: tensor<128x32xf32>, %[[B:[a-z0-9]+]]: tensor<128xf32>
//       CHECK:   %[[S:.+]] = tensor.dim %[[X]], %c1
//       CHECK:   %[[RT:.+]] = arith.ceildivsi %[[S]], %c8
//       CHECK:   scf.forall (%[[BI:.+]], %[[MT:.+]], %[[NT:.+]]) in (2, %[[RT]], 2)
//       CHECK:     %[[M0:.+]] = arith.muli %[[MT]], %c8
//       CHECK:     %[[N0:.+]] = arith.muli %[[NT]], %c64
//       CHECK:     %[[ROWS:.+]] = arith.minsi
//       CHECK:     %[[XT:.+]] = tensor.extract_slice %[[X]][%[[BI]], %[[M0]], 0] [1, %[[ROWS]], 32] [1, 1, 1] : tensor<2x?x32xf32> to tensor<?x32xf32>
//       CHECK:     %[[WT:.+]] = tensor.extract_slice %[[W]][%[[N0]], 0] [64, 32] [1, 1] : tensor<128x32xf32> to tensor<64x32xf32>
//       CHECK:     linalg.generic {indexing_maps = [#[[XMAP]], #[[WMAP]], #[[YMAP]]], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[XT]], %[[WT]] :
//       CHECK:     %[[BT:.+]] = tensor.extract_slice %[[B]][%[[N0]]] [64] [1]
//       CHECK:     linalg.generic {{.+}} ins(%{{.+}}, %[[BT]] :
//       CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[BI]], %[[M0]], %[[N0]]] [1, %[[ROWS]], 64] [1, 1, 1]
//   CHECK-NOT:   mnemo.linear
func.func @batched_bias(%x: tensor<2x?x32xf32>, %w: tensor<128x32xf32>,
                        %b: tensor<128xf32>) -> tensor<2x?x128xf32> {
  %y = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<128xf32>)
      : tensor<2x?x32xf32>, tensor<128x32xf32> -> tensor<2x?x128xf32>
  return %y : tensor<2x?x128xf32>
}

// -----

// Checks a vector input (one row) and features that the column tile does
// not divide: the last column tile is narrower.

// CHECK-LABEL: func.func @vector_ragged
//       CHECK:   tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [1, 32] : tensor<32xf32> into tensor<1x32xf32>
//       CHECK:   scf.forall (%[[NT:.+]]) in (2)
//       CHECK:     %[[N0:.+]] = arith.muli %[[NT]], %c64
//       CHECK:     %[[REST:.+]] = arith.subi %c100, %[[N0]]
//       CHECK:     %[[COLS:.+]] = arith.minsi %[[REST]], %c64
//       CHECK:     tensor.extract_slice %{{.+}}[0, %[[N0]]] [32, %[[COLS]]] [1, 1] : tensor<32x100xf32> to tensor<32x?xf32>
//       CHECK:   tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<1x100xf32> into tensor<100xf32>
func.func @vector_ragged(%x: tensor<32xf32>, %w: tensor<32x100xf32>) -> tensor<100xf32> {
  %y = mnemo.linear %x, %w layout(in_out) : tensor<32xf32>, tensor<32x100xf32> -> tensor<100xf32>
  return %y : tensor<100xf32>
}
