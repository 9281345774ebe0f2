// mnemo-gpu-outline-kernels: upstream's outlining, with the launches'
// nvvm.* attributes (here the paged kernel's residency) moved onto the
// outlined kernels; a launch without them gets none, other attributes stay
// behind.
// RUN: mnemo-opt %s -mnemo-gpu-outline-kernels | FileCheck %s

// CHECK-LABEL: gpu.module @two_launches_kernel
// CHECK: gpu.func @two_launches_kernel(
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK-NOT: other
// CHECK-LABEL: gpu.module @two_launches_kernel_0
// CHECK: gpu.func @two_launches_kernel({{.*}} kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
module attributes {gpu.container_module} {
func.func @two_launches(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
      threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %f = arith.constant 1.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  } {nvvm.minctasm = 3 : i32, other = 1 : i32}
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
      threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %f = arith.constant 2.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
}
