// RUN: mnemo-opt %s --mnemo-gpu-launch-loops --canonicalize --cse | FileCheck %s

// An elementwise nest: one thread per element, guarded by the element count.
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C99:.*]] = arith.constant 99 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in ({{.*}} = %[[C256]],
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[TID]], %[[C99]] : index
// CHECK: scf.if %[[IN]] {
// CHECK:   arith.remui %[[TID]], %c33
// CHECK:   arith.divui %[[TID]], %c33
// CHECK:   memref.store
func.func @elementwise(%a: memref<3x33xf32>, %b: memref<3x33xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c33 = arith.constant 33 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c33) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<3x33xf32>
    memref.store %x, %b[%i, %j] : memref<3x33xf32>
  }
  return
}


// A tile loop: one block per tile. Parallel loops inside are spread over the
// block's threads between barriers; a lone store is done by thread 0; the
// sequential KV loop is run by every thread.
// CHECK-LABEL: func.func @tiles
// CHECK: gpu.launch blocks(%[[BID:[^,]*]], {{.*}}) in ({{.*}} = %c4, {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in ({{.*}} = %c128,
// CHECK: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0 : index
// CHECK: scf.if %[[FIRST]] {
// CHECK:   memref.store %{{.*}}, %{{.*}}[%[[BID]]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK:   gpu.barrier
// CHECK:   scf.for %{{.*}} = %[[TID]] to %c64 step %c128 {
// CHECK:     arith.addf
// CHECK:   gpu.barrier
func.func @tiles(%a: memref<4x64xf32>, %acc: memref<4xf32>, %kv: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : f32
  scf.forall (%t) in (4) {
    memref.store %z, %acc[%t] : memref<4xf32>
    scf.for %k = %c0 to %kv step %c1 {
      scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
        %x = memref.load %a[%t, %j] : memref<4x64xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %a[%t, %j] : memref<4x64xf32>
      }
    }
  }
  return
}
