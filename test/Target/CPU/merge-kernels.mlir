// RUN: mnemo-opt %s --mnemo-cpu-merge-kernels | FileCheck %s
// RUN: mnemo-opt %s --mnemo-cpu-outline-parallel --mnemo-cpu-merge-kernels | FileCheck %s --check-prefix=OUTLINED

// Two bodies equal up to their names fold into the first; the dispatch
// declarations that then name the same body fold too. A body that differs
// in one constant stays, and so do two external declarations of the same
// signature (different functions), and the public entries.
// CHECK-LABEL: func.func @entry
// CHECK: call @k0(%arg0, %c0, %c4, %c4, %c1_i64)
// CHECK: call @k0(%arg1, %c0, %c4, %c4, %c1_i64)
// CHECK: call @k2(%arg1, %c0, %c4, %c4, %c1_i64)
// CHECK: call @ext_a(%arg0)
// CHECK: call @ext_b(%arg0)
// CHECK: func.func private @k0_body(
// CHECK-NOT: func.func private @k1_body(
// CHECK: func.func private @k2_body(
// CHECK: arith.constant 3.000000e+00
// CHECK: func.func private @k0({{.*}}) attributes {mnemo.parallel_body = @k0_body}
// CHECK-NOT: func.func private @k1(
// CHECK: func.func private @k2({{.*}}) attributes {mnemo.parallel_body = @k2_body}
// CHECK: func.func private @ext_a(memref<4xf32>)
// CHECK: func.func private @ext_b(memref<4xf32>)
// CHECK: func.func @entry_twin(
// CHECK: func.func @entry_twin2(
func.func @entry(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cost = arith.constant 1 : i64
  call @k0(%a, %c0, %c4, %c4, %cost) : (memref<4xf32>, index, index, index, i64) -> ()
  call @k1(%b, %c0, %c4, %c4, %cost) : (memref<4xf32>, index, index, index, i64) -> ()
  call @k2(%b, %c0, %c4, %c4, %cost) : (memref<4xf32>, index, index, index, i64) -> ()
  call @ext_a(%a) : (memref<4xf32>) -> ()
  call @ext_b(%a) : (memref<4xf32>) -> ()
  return
}
func.func private @k0_body(%m: memref<4xf32>, %lb: index, %b: index, %e: index) {
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %b to %e step %c1 {
    memref.store %two, %m[%i] : memref<4xf32>
  }
  return
}
func.func private @k1_body(%m: memref<4xf32>, %lb: index, %b: index, %e: index) {
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %b to %e step %c1 {
    memref.store %two, %m[%i] : memref<4xf32>
  }
  return
}
func.func private @k2_body(%m: memref<4xf32>, %lb: index, %b: index, %e: index) {
  %c1 = arith.constant 1 : index
  %three = arith.constant 3.0 : f32
  scf.for %i = %b to %e step %c1 {
    memref.store %three, %m[%i] : memref<4xf32>
  }
  return
}
func.func private @k0(memref<4xf32>, index, index, index, i64) attributes {mnemo.parallel_body = @k0_body}
func.func private @k1(memref<4xf32>, index, index, index, i64) attributes {mnemo.parallel_body = @k1_body}
func.func private @k2(memref<4xf32>, index, index, index, i64) attributes {mnemo.parallel_body = @k2_body}
func.func private @ext_a(memref<4xf32>)
func.func private @ext_b(memref<4xf32>)
// Public functions are entries: never folded, even when equal.
func.func @entry_twin(%a: memref<4xf32>) {
  return
}
func.func @entry_twin2(%a: memref<4xf32>) {
  return
}

// Outlined from two equal loops of one function: one body, one dispatch,
// called twice.
// OUTLINED-LABEL: func.func @twice
// OUTLINED: call @twice_parallel0(%arg0,
// OUTLINED: call @twice_parallel0(%arg1,
// OUTLINED: func.func private @twice_parallel0_body(
// OUTLINED-NOT: @twice_parallel1
func.func @twice(%x: memref<?x8xf32>, %y: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c8) step (%c1, %c1) {
    memref.store %two, %x[%i, %j] : memref<?x8xf32>
  }
  %m = memref.dim %y, %c0 : memref<?x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %c8) step (%c1, %c1) {
    memref.store %two, %y[%i, %j] : memref<?x8xf32>
  }
  return
}
