// mnemo-gpu-vectorize-elements: an elementwise loop nest whose innermost
// iteration variable only indexes the contiguous last dimension steps by
// 16 bytes of its widest type, with vector loads and stores; other loops
// are left as they are.
// RUN: mnemo-opt %s -mnemo-gpu-vectorize-elements -split-input-file | FileCheck %s

// A residual add over f32 rows: 4 lanes, arith on vectors.
// CHECK-LABEL: func.func @add_f32
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step ({{.*}}, %[[C4]])
// CHECK-NOT: memref.load
// CHECK: %[[A:.*]] = vector.load %{{.*}}[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<?x128xf32>, vector<4xf32>
// CHECK: %[[B:.*]] = vector.load %{{.*}}[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<?x128xf32>, vector<4xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<4xf32>
// CHECK: vector.store %[[S]], %{{.*}}[%[[I]], %[[J]]] {alignment = 16 : i64}
// CHECK-NOT: memref.load
func.func @add_f32(%a: memref<?x128xf32>, %b: memref<?x128xf32>, %o: memref<?x128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c128) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x128xf32>
    %y = memref.load %b[%i, %j] : memref<?x128xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %o[%i, %j] : memref<?x128xf32>
    scf.reduce
  }
  return
}

// -----

// bf16 alone: 8 lanes; f32 beside it: 4 (16 bytes of f32, 8 of bf16).
// CHECK-LABEL: func.func @copy_bf16
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK-LABEL: func.func @round_f32
// CHECK: %[[X:.*]] = vector.load {{.*}} {alignment = 16 : i64} : memref<?x4x1x32xf32>, vector<4xf32>
// CHECK: %[[T:.*]] = arith.truncf %[[X]] : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %[[T]], {{.*}} {alignment = 8 : i64} : memref<?x4x1x32xbf16>, vector<4xbf16>
func.func @copy_bf16(%a: memref<?x64xbf16>, %o: memref<?x64xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x64xbf16>
    memref.store %x, %o[%i, %j] : memref<?x64xbf16>
    scf.reduce
  }
  return
}
func.func @round_f32(%a: memref<?x4x1x32xf32>, %o: memref<?x4x1x32xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %h, %j) = (%c0, %c0, %c0) to (%n, %c4, %c32) step (%c1, %c1, %c1) {
    %x = memref.load %a[%i, %h, %c0, %j] : memref<?x4x1x32xf32>
    %t = arith.truncf %x : f32 to bf16
    memref.store %t, %o[%i, %h, %c0, %j] : memref<?x4x1x32xbf16>
    scf.reduce
  }
  return
}

// -----

// A gather (an embedding): the row comes from a uniform load, the scale is
// broadcast, a math function is applied lane by lane.
// CHECK-LABEL: func.func @gather_exp
// CHECK: %[[ID:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xi64>
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK: %[[W:.*]] = vector.load %{{.*}}[%[[ROW]], %{{.*}}] {alignment = 16 : i64} : memref<256x128xf32>, vector<4xf32>
// CHECK: %[[SC:.*]] = vector.broadcast %{{.*}} : f32 to vector<4xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[W]], %[[SC]] : vector<4xf32>
// CHECK-COUNT-4: math.exp %{{.*}} : f32
// CHECK: %[[E:.*]] = vector.from_elements {{.*}} : vector<4xf32>
// CHECK: vector.store %[[E]]
func.func @gather_exp(%ids: memref<?xi64>, %w: memref<256x128xf32>, %s: f32, %o: memref<?x128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c128) step (%c1, %c1) {
    %id = memref.load %ids[%i] : memref<?xi64>
    %row = arith.index_cast %id : i64 to index
    %x = memref.load %w[%row, %j] : memref<256x128xf32>
    %m = arith.mulf %x, %s : f32
    %e = math.exp %m : f32
    memref.store %e, %o[%i, %j] : memref<?x128xf32>
    scf.reduce
  }
  return
}

// -----

// A cache write spread over a tile's threads (inside an scf.forall): the
// page row is uniform, a constant stored is broadcast.
// CHECK-LABEL: func.func @tile_write
// CHECK: scf.forall
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.parallel {{.*}} step (%{{.*}}, %[[C4]])
// CHECK: %[[X:.*]] = vector.load {{.*}} : memref<?x2x1x32xf32>, vector<4xf32>
// CHECK: %[[T:.*]] = arith.truncf %[[X]] : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %[[T]], {{.*}} {alignment = 8 : i64} : memref<?x2x16x32xbf16>, vector<4xbf16>
// CHECK-LABEL: func.func @fill
// CHECK: %[[Z:.*]] = vector.broadcast %{{.*}} : bf16 to vector<8xbf16>
// CHECK: vector.store %[[Z]]
func.func @tile_write(%src: memref<?x2x1x32xf32>, %pool: memref<?x2x16x32xbf16>, %pages: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  scf.forall (%b) in (%n) {
    %p = memref.load %pages[%b] : memref<?xi32>
    %page = arith.index_cast %p : i32 to index
    scf.parallel (%h, %j) = (%c0, %c0) to (%c2, %c32) step (%c1, %c1) {
      %x = memref.load %src[%b, %h, %c0, %j] : memref<?x2x1x32xf32>
      %t = arith.truncf %x : f32 to bf16
      memref.store %t, %pool[%page, %h, %c1, %j] : memref<?x2x16x32xbf16>
      scf.reduce
    }
  }
  return
}
func.func @fill(%o: memref<?x64xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : bf16
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    memref.store %z, %o[%i, %j] : memref<?x64xbf16>
    scf.reduce
  }
  return
}

// -----

// Left alone: the iteration variable in index arithmetic (a rotary
// embedding's pair), a count of no lane multiple, a dynamic row stride,
// shared memory, a nested loop over the variable, an atomic under uniform
// control flow, elements of 3 bytes. A count of 6 f32
// takes 2 lanes.
// CHECK-LABEL: func.func @pairs
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @odd
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @nested
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @atomic
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @three_bytes
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @six
// CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<?x6xf32>, vector<2xf32>
// Row-major buffers with dynamic dims: their rows stay multiples of the
// static sizes after them (here of 32 elements); a dynamic last dimension
// tells nothing.
// CHECK-LABEL: func.func @heads
// CHECK: vector.load {{.*}} : memref<?x4x?x32xf32>, vector<4xf32>
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NOT: vector.
func.func @pairs(%a: memref<?x64xf32>, %o: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %k = arith.xori %j, %c1 : index
    %x = memref.load %a[%i, %k] : memref<?x64xf32>
    memref.store %x, %o[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}
func.func @odd(%a: memref<?x7xbf16>, %o: memref<?x7xbf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c7) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x7xbf16>
    memref.store %x, %o[%i, %j] : memref<?x7xbf16>
    scf.reduce
  }
  return
}
func.func @strided(%a: memref<?x64xf32, strided<[?, 1]>>, %o: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x64xf32, strided<[?, 1]>>
    memref.store %x, %o[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}
func.func @shared(%a: memref<4x64xf32, #gpu.address_space<workgroup>>, %o: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x64xf32, #gpu.address_space<workgroup>>
    memref.store %x, %o[%i, %j] : memref<4x64xf32>
    scf.reduce
  }
  return
}
func.func @nested(%a: memref<?x64x8xf32>, %o: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %z) -> f32 {
      %x = memref.load %a[%i, %j, %k] : memref<?x64x8xf32>
      %y = arith.addf %acc, %x : f32
      scf.yield %y : f32
    }
    memref.store %s, %o[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}
// An atomic under uniform control flow would run once for 4 iterations.
func.func @atomic(%a: memref<?x64xf32>, %o: memref<?x64xf32>, %cnt: memref<1xf32>, %c: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    scf.if %c {
      %old = memref.atomic_rmw addf %one, %cnt[%c0] : (f32, memref<1xf32>) -> f32
    }
    %x = memref.load %a[%i, %j] : memref<?x64xf32>
    memref.store %x, %o[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}
// Elements of 3 bytes: vectors would pack them, memrefs do not.
func.func @three_bytes(%a: memref<?x64xi24>, %o: memref<?x64xi24>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x64xi24>
    memref.store %x, %o[%i, %j] : memref<?x64xi24>
    scf.reduce
  }
  return
}
func.func @six(%a: memref<?x6xf32>, %o: memref<?x6xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c6) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x6xf32>
    %y = arith.negf %x : f32
    memref.store %y, %o[%i, %j] : memref<?x6xf32>
    scf.reduce
  }
  return
}
func.func @heads(%a: memref<?x4x?x32xf32>, %o: memref<?x4x?x32xbf16>, %n: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%b, %h, %i, %j) = (%c0, %c0, %c0, %c0) to (%n, %c4, %s, %c32) step (%c1, %c1, %c1, %c1) {
    %x = memref.load %a[%b, %h, %i, %j] : memref<?x4x?x32xf32>
    %t = arith.truncf %x : f32 to bf16
    memref.store %t, %o[%b, %h, %i, %j] : memref<?x4x?x32xbf16>
    scf.reduce
  }
  return
}
func.func @dynamic_rows(%a: memref<?x?xf32>, %o: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %x, %o[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}
