// RUN: mnemo-opt %s --mnemo-fold-shape-reshapes --split-input-file | FileCheck %s

// A split of the last dim; the listed dynamic sizes are the source's dims.
// CHECK-LABEL: func.func @split_heads
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 4, 32]
// CHECK-NOT: tensor.reshape
func.func @split_heads(%x: tensor<?x?x128xf32>) -> tensor<?x?x4x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x128xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x128xf32>
  %s = tensor.from_elements %d0, %d1, %c4, %c32 : tensor<4xindex>
  %r = tensor.reshape %x(%s) : (tensor<?x?x128xf32>, tensor<4xindex>) -> tensor<?x?x4x32xf32>
  return %r : tensor<?x?x4x32xf32>
}

// -----

// The sizes come from another tensor whose dims are the source's through
// mnemo ops (value bounds prove them equal); the merge's last size is
// whatever remains. The split and the merge then cancel out.
// CHECK-LABEL: func.func @merge_heads
// CHECK: %[[N:.*]] = mnemo.rms_norm
// CHECK-NOT: tensor.reshape
// CHECK: %[[C:.*]] = tensor.cast %[[N]]
// CHECK: %[[R:.*]] = tensor.cast %[[C]] : tensor<?x?x?xf32> to tensor<?x?x128xf32>
// CHECK: return %[[R]]
func.func @merge_heads(%ids: tensor<?x?xi64>, %table: tensor<64x128xf32>, %w: tensor<128xf32>) -> tensor<?x?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %d0 = tensor.dim %ids, %c0 : tensor<?x?xi64>
  %d1 = tensor.dim %ids, %c1 : tensor<?x?xi64>
  %e = mnemo.embedding %table[%ids] : tensor<64x128xf32>, tensor<?x?xi64> -> tensor<?x?x128xf32>
  %n = mnemo.rms_norm %e, %w eps(1.0e-6) : tensor<?x?x128xf32>, tensor<128xf32> -> tensor<?x?x128xf32>
  %s4 = tensor.from_elements %d0, %d1, %c1, %c128 : tensor<4xindex>
  %h = tensor.reshape %n(%s4) : (tensor<?x?x128xf32>, tensor<4xindex>) -> tensor<?x?x1x128xf32>
  %mn = arith.muli %d0, %d1 : index
  %all = arith.muli %mn, %c128 : index
  %last = arith.divsi %all, %mn : index
  %s3 = tensor.from_elements %d0, %d1, %last : tensor<3xindex>
  %r = tensor.reshape %h(%s3) : (tensor<?x?x1x128xf32>, tensor<3xindex>) -> tensor<?x?x?xf32>
  %c = tensor.cast %r : tensor<?x?x?xf32> to tensor<?x?x128xf32>
  return %c : tensor<?x?x128xf32>
}

// -----

// A unit dim inserted, and one dropped while the last dim splits (a merge
// and a split: the unit dims go first).
// CHECK-LABEL: func.func @unit_dims
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3]] output_shape [%{{.*}}, 1, %{{.*}}, 32]
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2], [3]] : tensor<?x1x?x256xf32> into tensor<?x?x256xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 4, 64]
// CHECK-NOT: tensor.reshape
func.func @unit_dims(%x: tensor<?x?x32xf32>, %y: tensor<?x1x?x256xf32>) -> (tensor<?x1x?x32xf32>, tensor<?x?x4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %s = tensor.from_elements %d0, %c1, %d1, %c32 : tensor<4xindex>
  %r = tensor.reshape %x(%s) : (tensor<?x?x32xf32>, tensor<4xindex>) -> tensor<?x1x?x32xf32>
  %e0 = tensor.dim %y, %c0 : tensor<?x1x?x256xf32>
  %e2 = tensor.dim %y, %c2 : tensor<?x1x?x256xf32>
  %t = tensor.from_elements %e0, %e2, %c4, %c64 : tensor<4xindex>
  %q = tensor.reshape %y(%t) : (tensor<?x1x?x256xf32>, tensor<4xindex>) -> tensor<?x?x4x64xf32>
  return %r, %q : tensor<?x1x?x32xf32>, tensor<?x?x4x64xf32>
}

// -----

// Left alone: sizes not proven to be the source's dims in order (swapped),
// and sizes computed from data.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: tensor.reshape
func.func @left_alone(%x: tensor<?x?x128xf32>, %shape: tensor<4xindex>) -> (tensor<?x?x4x32xf32>, tensor<?x?x4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x128xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x128xf32>
  %s = tensor.from_elements %d1, %d0, %c4, %c32 : tensor<4xindex>
  %r = tensor.reshape %x(%s) : (tensor<?x?x128xf32>, tensor<4xindex>) -> tensor<?x?x4x32xf32>
  %q = tensor.reshape %x(%shape) : (tensor<?x?x128xf32>, tensor<4xindex>) -> tensor<?x?x4x32xf32>
  return %r, %q : tensor<?x?x4x32xf32>, tensor<?x?x4x32xf32>
}

// -----

// A result type that knows less than the sizes ([?, 4, 32] as ?x?x?): the
// split takes the sizes' type and is cast to the reshape's. Sizes given as
// i64 (ONNX shapes) are compared through the index they were cast from.
// CHECK-LABEL: func.func @loose_result_type
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 4, 32] : tensor<?x128xf32> into tensor<?x4x32xf32>
// CHECK: tensor.cast %[[E]] : tensor<?x4x32xf32> to tensor<?x?x?xf32>
// CHECK-NOT: tensor.reshape
func.func @loose_result_type(%x: tensor<?x128xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : i64
  %c32 = arith.constant 32 : i64
  %d0 = tensor.dim %x, %c0 : tensor<?x128xf32>
  %d0i = arith.index_cast %d0 : index to i64
  %s = tensor.from_elements %d0i, %c4, %c32 : tensor<3xi64>
  %r = tensor.reshape %x(%s) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// -----

// A static dim split into a computed size and a known one (an exporter's
// head count read from a shape): the computed one is what is left, so the
// expand_shape is static where its source is.
// CHECK-LABEL: func.func @split_static_dim_computed_heads
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 4, 64] : tensor<?x?x256xf32> into tensor<?x?x4x64xf32>
func.func @split_static_dim_computed_heads(%x: tensor<?x?x256xf32>, %h: index) -> tensor<?x?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x256xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x256xf32>
  %s = tensor.from_elements %d0, %d1, %h, %c64 : tensor<4xindex>
  %r = tensor.reshape %x(%s) : (tensor<?x?x256xf32>, tensor<4xindex>) -> tensor<?x?x?x64xf32>
  return %r : tensor<?x?x?x64xf32>
}

// -----

// GQA's repeated heads merged back ([B, 2, 2, S, 32] to [B, 4, S', 32])
// with S' computed as the element count over the known sizes: nothing
// proves S' = S, but every other group is proven (the last included), so
// the count makes them equal. A reshape of a tensor.cast reads the cast's
// source.
// CHECK-LABEL: func.func @count_computed_extent
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x2x?x32xf32> into tensor<?x4x?x32xf32>
// CHECK-NOT: tensor.reshape
func.func @count_computed_extent(%x: tensor<?x2x2x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %b = tensor.dim %x, %c0 : tensor<?x2x2x?x32xf32>
  %s = tensor.dim %x, %c3 : tensor<?x2x2x?x32xf32>
  %n0 = arith.muli %b, %c4 : index
  %n1 = arith.muli %n0, %s : index
  %n = arith.muli %n1, %c32 : index
  %k = arith.muli %b, %c128 : index
  %rest = arith.divsi %n, %k : index
  %shape = tensor.from_elements %b, %c4, %rest, %c32 : tensor<4xindex>
  %c = tensor.cast %x : tensor<?x2x2x?x32xf32> to tensor<?x?x?x?x32xf32>
  %r = tensor.reshape %c(%shape) : (tensor<?x?x?x?x32xf32>, tensor<4xindex>) -> tensor<?x4x?x32xf32>
  return %r : tensor<?x4x?x32xf32>
}

// -----

// Two sizes nothing proves: the count fixes only their product, so the
// reshape stays.
// CHECK-LABEL: func.func @two_unproven
// CHECK: tensor.reshape
func.func @two_unproven(%x: tensor<?x?x32xf32>, %p: index, %q: index) -> tensor<?x?x32xf32> {
  %c32 = arith.constant 32 : index
  %shape = tensor.from_elements %p, %q, %c32 : tensor<3xindex>
  %r = tensor.reshape %x(%shape) : (tensor<?x?x32xf32>, tensor<3xindex>) -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}
