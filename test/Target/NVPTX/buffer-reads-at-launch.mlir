// RUN: mnemo-opt %s --mnemo-gpu-buffer-reads-at-launch | FileCheck %s
// RUN: mnemo-opt %s --mnemo-gpu-buffer-reads-at-launch \
// RUN:   --one-shot-bufferize=bufferize-function-boundaries \
// RUN:   | FileCheck %s --check-prefix=BUF

// Two kernels read one tensor through the to_buffer (and reshape) that
// CSE left before the first; an elementwise op between them would be free
// to reuse the tensor's buffer. Each launch gets its own to_buffer and
// reshape right before it, so the second read is a use of the tensor at
// the second launch.
// CHECK-LABEL: func.func @two_readers
// CHECK: linalg.generic
// CHECK: %[[B1:.*]] = bufferization.to_buffer %[[T:.*]] read_only
// CHECK-NEXT: %[[V1:.*]] = memref.collapse_shape %[[B1]]
// CHECK-NEXT: gpu.launch
// CHECK: memref.load %[[V1]]
// CHECK: linalg.generic
// CHECK: %[[B2:.*]] = bufferization.to_buffer %[[T]] read_only
// CHECK-NEXT: %[[V2:.*]] = memref.collapse_shape %[[B2]]
// CHECK-NEXT: gpu.launch
// CHECK: memref.load %[[V2]]
// CHECK-NOT: bufferization.to_buffer
// Bufferized, the elementwise op between the launches writes a buffer of
// its own (without the pass it wrote the one both launches read).
// BUF-LABEL: func.func @two_readers
// BUF: linalg.generic {{.*}} outs(%[[X:[a-z_0-9]+]] :
// BUF: memref.collapse_shape %[[X]]
// BUF: gpu.launch
// BUF-NOT: outs(%[[X]] :
// BUF: memref.collapse_shape %[[X]]
// BUF-NEXT: gpu.launch
func.func @two_readers(%x: tensor<2x3x8xf32>, %out1: memref<6x8xf32>, %out2: memref<6x8xf32>,
                       %y: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2x3x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x8xf32>) outs(%e : tensor<2x3x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  %b = bufferization.to_buffer %t read_only : tensor<2x3x8xf32> to memref<2x3x8xf32>
  %v = memref.collapse_shape %b [[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %l = memref.load %v[%tx, %ty] : memref<6x8xf32>
    memref.store %l, %out1[%tx, %ty] : memref<6x8xf32>
    gpu.terminator
  }
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x3x8xf32>) outs(%e : tensor<2x3x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %l = memref.load %v[%tx, %ty] : memref<6x8xf32>
    memref.store %l, %out2[%tx, %ty] : memref<6x8xf32>
    gpu.terminator
  }
  return %u : tensor<2x3x8xf32>
}

// A memref the launch reads that is no view of a to_buffer (an argument)
// stays as it is.
// CHECK-LABEL: func.func @argument
// CHECK-NOT: bufferization.to_buffer
// CHECK: memref.load %arg0
func.func @argument(%m: memref<4xf32>, %out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %l = memref.load %m[%tx] : memref<4xf32>
    memref.store %l, %out[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
