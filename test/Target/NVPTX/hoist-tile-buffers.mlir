// RUN: mnemo-opt %s --mnemo-gpu-hoist-tile-buffers --canonicalize --split-input-file --verify-diagnostics | FileCheck %s

// A tile buffer becomes one 64-byte aligned slot per tile of a buffer
// allocated in front of the loop; the tile uses a view of its slot.
// CHECK-LABEL: func.func @tile
// CHECK: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<384xi8>
// CHECK: scf.forall (%[[I:.*]], %[[J:.*]]) in (2, 3)
// CHECK-NOT: memref.alloc
// CHECK: %[[VIEW:.*]] = memref.view %[[BUF]][%{{.*}}][] : memref<384xi8> to memref<2x8xf32>
// CHECK: linalg.fill {{.*}} outs(%[[VIEW]] : memref<2x8xf32>)
func.func @tile(%out: memref<4x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (2, 3) {
    %t = memref.alloc() : memref<2x8xf32>
    linalg.fill ins(%c0 : f32) outs(%t : memref<2x8xf32>)
  }
  return
}

// -----

// The number of tiles may be dynamic; buffers in the KV loop are reused.
// CHECK-LABEL: func.func @dynamic_tiles
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK: memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: memref.view
func.func @dynamic_tiles(%n: index, %kv: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.forall (%i) in (%n) {
    scf.for %k = %c0 to %kv step %c1 {
      %t = memref.alloc() : memref<16xf32>
      linalg.fill ins(%f : f32) outs(%t : memref<16xf32>)
    }
  }
  return
}

// -----

func.func @dynamic_buffer(%n: index) {
  scf.forall (%i) in (4) {
    // expected-error @below {{tile buffer of type 'memref<?xf32>' cannot be hoisted (needs a static shape)}}
    %t = memref.alloc(%n) : memref<?xf32>
  }
  return
}
