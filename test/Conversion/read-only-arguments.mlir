// RUN: mnemo-opt %s --mnemo-read-only-arguments | FileCheck %s
// RUN: mnemo-opt %s --mnemo-read-only-arguments --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

// Tensor arguments are marked read-only; others are left alone.
// CHECK: func.func @update(%{{.*}}: tensor<4xf32> {bufferization.writable = false}, %{{.*}}: index)
// An update of an input then works on a copy of it.
// BUF: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUF: memref.copy %arg0, %[[COPY]]
// BUF: memref.store %{{.*}}, %[[COPY]][%arg1]
// BUF: return %[[COPY]]
func.func @update(%t: tensor<4xf32>, %i: index) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  %r = tensor.insert %c into %t[%i] : tensor<4xf32>
  return %r : tensor<4xf32>
}

// An argument marked mnemo.in_place (a KV cache pool) stays writable: its
// update is done in the caller's buffer.
// CHECK: func.func @pool(%{{.*}}: tensor<4xf32> {bufferization.writable = true, mnemo.in_place}, %{{.*}}: index)
// BUF-LABEL: func.func @pool(
// BUF-NOT: memref.alloc
// BUF: memref.store %{{.*}}, %arg0[%arg1]
// BUF: return %arg0
func.func @pool(%t: tensor<4xf32> {mnemo.in_place}, %i: index) -> (tensor<4xf32> {mnemo.in_place_of = 0 : i64}) {
  %c = arith.constant 1.0 : f32
  %r = tensor.insert %c into %t[%i] : tensor<4xf32>
  return %r : tensor<4xf32>
}
