// mnemo-gpu-outline-kernels: upstream's outlining, with the launches'
// nvvm.* attributes (here the paged kernel's residency) moved onto the
// outlined kernels; a launch without them gets none, other attributes stay
// behind. A launch with a constant grid or block size of 0 runs nothing
// and is erased (a plan refuses such a grid): nothing is outlined for it,
// and the launches after it keep their attributes.
// RUN: mnemo-opt %s -mnemo-gpu-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @two_launches(
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch
// CHECK: return
// CHECK-LABEL: gpu.module @two_launches_kernel
// CHECK: gpu.func @two_launches_kernel(
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK-NOT: other
// CHECK-LABEL: gpu.module @two_launches_kernel_0
// CHECK: gpu.func @two_launches_kernel({{.*}} kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
func.func @two_launches(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
      threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %f = arith.constant 1.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  } {nvvm.minctasm = 3 : i32, other = 1 : i32}
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c0, %y = %c1, %z = %c1)
      threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %f = arith.constant 3.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  } {nvvm.minctasm = 5 : i32}
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
      threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c0) {
    %f = arith.constant 4.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
      threads(%tx, %ty, %tz) in (%a = %c1, %b = %c1, %c = %c1) {
    %f = arith.constant 2.0 : f32
    memref.store %f, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
}
