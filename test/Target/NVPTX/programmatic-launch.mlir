// mnemo-gpu-programmatic-launch: every kernel begins with griddepcontrol.wait
// and then launch_dependents, before its first memory access; a device
// function that is not a kernel is left alone, and a second run adds
// nothing.
// RUN: mnemo-opt %s -mnemo-gpu-programmatic-launch -mnemo-gpu-programmatic-launch | FileCheck %s

module attributes {gpu.container_module} {
gpu.module @kernels {
  // CHECK-LABEL: gpu.func @copy(
  // CHECK-NEXT: nvvm.griddepcontrol wait
  // CHECK-NEXT: nvvm.griddepcontrol launch_dependents
  // CHECK-NEXT: gpu.thread_id x
  // CHECK-NOT: griddepcontrol
  // CHECK: gpu.return
  gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
    %t = gpu.thread_id x
    %v = memref.load %in[%t] : memref<4xf32>
    memref.store %v, %out[%t] : memref<4xf32>
    gpu.return
  }
  // CHECK-LABEL: gpu.func @helper(
  // CHECK-NOT: griddepcontrol
  // CHECK: gpu.return
  gpu.func @helper(%in: memref<4xf32>) {
    gpu.return
  }
}
}
