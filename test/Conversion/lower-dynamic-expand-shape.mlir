// RUN: mnemo-opt %s --split-input-file --mnemo-lower-dynamic-expand-shape | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --mnemo-lower-dynamic-expand-shape --expand-strided-metadata | FileCheck %s --check-prefix=META

// Rows B * S of a GEMM back to [B, S, heads, d]: the first group has two
// dynamic sizes (upstream's expand-strided-metadata crashes on it), so the
// op becomes a reinterpret_cast whose strides are built from the sizes:
// [S * 128, 128, 32, 1].
// CHECK-LABEL: func.func @rows_to_batch
// CHECK-SAME: (%[[A:.*]]: memref<?x128xf32>, %[[B:.*]]: index, %[[S:.*]]: index)
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[STRIDE:.*]] = arith.muli %{{.*}}, %[[S]]
// CHECK-NOT: arith.muli
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[S]], 4, 32], strides: [%[[STRIDE]], 128, 32, 1] : memref<f32> to memref<?x?x4x32xf32>
// CHECK-NOT: memref.expand_shape
// META-LABEL: func.func @rows_to_batch
// META-NOT: memref.expand_shape
func.func @rows_to_batch(%a: memref<?x128xf32>, %b: index, %s: index) -> memref<?x?x4x32xf32> {
  %e = memref.expand_shape %a [[0, 1], [2, 3]] output_shape [%b, %s, 4, 32] : memref<?x128xf32> into memref<?x?x4x32xf32>
  return %e : memref<?x?x4x32xf32>
}

// -----

// A strided source with a dynamic offset and row stride (a column window of
// a larger buffer): its offset and row stride come from its metadata.
// CHECK-LABEL: func.func @strided_source
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[ST:.*]]:2 = memref.extract_strided_metadata
// CHECK: %[[STRIDE:.*]] = arith.muli %[[ST]]#0, %{{.*}}
// CHECK-NOT: arith.muli
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [%{{.*}}, %{{.*}}, 64], strides: [%[[STRIDE]], %[[ST]]#0, 1]
func.func @strided_source(%a: memref<?x64xf32, strided<[?, 1], offset: ?>>, %b: index, %s: index) -> memref<?x?x64xf32, strided<[?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %s, 64] : memref<?x64xf32, strided<[?, 1], offset: ?>> into memref<?x?x64xf32, strided<[?, ?, 1], offset: ?>>
  return %e : memref<?x?x64xf32, strided<[?, ?, 1], offset: ?>>
}

// -----

// One dynamic size per group: left to the upstream pass.
// CHECK-LABEL: func.func @one_dynamic_size
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_dynamic_size(%a: memref<?x128xf32>, %b: index) -> memref<?x4x32xf32> {
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [%b, 4, 32] : memref<?x128xf32> into memref<?x4x32xf32>
  return %e : memref<?x4x32xf32>
}
