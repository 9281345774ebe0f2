// RUN: mnemo-opt %s --mnemo-compact-results | FileCheck %s

// A returned view of a padded buffer, cast to the identity layout that
// function boundaries use: copied into a dense buffer of the view's sizes.
// CHECK-LABEL: func.func @padded
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: %[[D0:.*]] = memref.dim %[[VIEW]], %c0
// CHECK: %[[D2:.*]] = memref.dim %[[VIEW]], %c2
// CHECK: %[[DENSE:.*]] = memref.alloc(%[[D0]], %[[D2]]) {alignment = 64 : i64} : memref<?x8x?x64xf32>
// CHECK: memref.copy %[[VIEW]], %[[DENSE]]
// CHECK: return %[[DENSE]]
func.func @padded(%b: index, %s: index, %padded: index) -> memref<?x8x?x64xf32> {
  %buf = memref.alloc(%b, %padded) : memref<?x8x?x64xf32>
  %view = memref.subview %buf[0, 0, 0, 0] [%b, 8, %s, 64] [1, 1, 1, 1]
      : memref<?x8x?x64xf32> to memref<?x8x?x64xf32, strided<[?, ?, 64, 1]>>
  %cast = memref.cast %view : memref<?x8x?x64xf32, strided<[?, ?, 64, 1]>> to memref<?x8x?x64xf32>
  return %cast : memref<?x8x?x64xf32>
}

// A dense buffer is returned as it is.
// CHECK-LABEL: func.func @dense
// CHECK-NOT: memref.copy
// CHECK: return %arg0
func.func @dense(%m: memref<?x8xf32>) -> memref<?x8xf32> {
  return %m : memref<?x8xf32>
}
