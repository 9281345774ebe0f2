// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg="rope-tables=true" --cse | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg="rope-tables=true" --cse | FileCheck %s --check-prefix=COUNT

// With rope-tables (the CPU targets), a mnemo.rope evaluates cos and sin
// once per position and rotary feature, in a generic with two results over
// (positions' batch, sequence, feature), and applies them as
// mnemo.rope_tables does; after CSE the ropes of one set of positions (two
// layers' keys here) share one pair of tables. The values are those of the
// per-element lowering (the same ops evaluate each angle):
// test/Frontend/Checkpoint's models compare the compiled logits with
// PyTorch's.

// CHECK-LABEL: func.func @two_layers
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<2x4x?x8xf32>, %[[Y:[a-z0-9]+]]: tensor<2x4x?x8xf32>, %[[P:[a-z0-9]+]]: tensor<2x?xi64>
//       CHECK:   %[[FREQ:.+]] = arith.constant dense<{{.*}}> : tensor<1x3xf32>
//       CHECK:   %[[T:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<2x?xi64>) outs(%{{.+}}, %{{.+}} : tensor<2x?x6xf32>, tensor<2x?x6xf32>)
//       CHECK:     %[[D:.+]] = linalg.index 2
//       CHECK:     tensor.extract %[[FREQ]]
//       CHECK:     math.cos
//       CHECK:     math.sin
//       CHECK:     linalg.yield
//       CHECK:   linalg.generic {{.*}} ins(%[[X]] : tensor<2x4x?x8xf32>)
//       CHECK:     tensor.extract %[[T]]#0
//       CHECK:     tensor.extract %[[T]]#1
//       CHECK:   linalg.generic {{.*}} ins(%[[Y]] : tensor<2x4x?x8xf32>)
//       CHECK:     tensor.extract %[[T]]#0
//       CHECK:     tensor.extract %[[T]]#1
//   CHECK-NOT:   mnemo.rope
// COUNT-LABEL: func.func @two_layers
// COUNT-COUNT-1: math.cos
// COUNT-NOT: math.cos
// COUNT-LABEL: func.func @interleaved_shared_positions
func.func @two_layers(%x: tensor<2x4x?x8xf32>, %y: tensor<2x4x?x8xf32>,
                      %p: tensor<2x?xi64>)
    -> (tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>) {
  %a = mnemo.rope %x, %p theta(10000.0) rotary_dim(6)
      : tensor<2x4x?x8xf32>, tensor<2x?xi64> -> tensor<2x4x?x8xf32>
  %b = mnemo.rope %y, %p theta(10000.0) rotary_dim(6)
      : tensor<2x4x?x8xf32>, tensor<2x?xi64> -> tensor<2x4x?x8xf32>
  return %a, %b : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>
}

// -----

// Positions [S] give tables [S, r]; interleaved pairs read the angle of
// their frequency d / 2; a rope of other frequencies (another theta) gets
// tables of its own.

// CHECK-LABEL: func.func @interleaved_shared_positions
//       CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<5xi32>) outs(%{{.+}}, %{{.+}} : tensor<5x4xf32>, tensor<5x4xf32>)
//       CHECK:     arith.divui
//       CHECK:     math.cos
//       CHECK:   linalg.generic {{.*}} ins(%{{.+}} : tensor<5xi32>) outs(%{{.+}}, %{{.+}} : tensor<5x4xf32>, tensor<5x4xf32>)
//       CHECK:     math.cos
//   CHECK-NOT:   mnemo.rope
// COUNT-COUNT-2: math.cos
// COUNT-NOT: math.cos
func.func @interleaved_shared_positions(%x: tensor<1x2x5x4xbf16>,
                                        %p: tensor<5xi32>)
    -> (tensor<1x2x5x4xbf16>, tensor<1x2x5x4xbf16>) {
  %a = mnemo.rope %x, %p theta(10000.0) interleaved
      : tensor<1x2x5x4xbf16>, tensor<5xi32> -> tensor<1x2x5x4xbf16>
  %b = mnemo.rope %x, %p theta(500000.0) interleaved
      : tensor<1x2x5x4xbf16>, tensor<5xi32> -> tensor<1x2x5x4xbf16>
  return %a, %b : tensor<1x2x5x4xbf16>, tensor<1x2x5x4xbf16>
}
