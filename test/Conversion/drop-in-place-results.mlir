// RUN: mnemo-opt %s --split-input-file --mnemo-read-only-arguments --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --mnemo-drop-in-place-results --verify-diagnostics | FileCheck %s

// A pool updated row by row in loops and a branch comes back as the loops'
// result; folding the loop-carried buffer leads back to the argument, and
// the result that returned it is removed: the function returns the rest.
// CHECK-LABEL: func.func @write_rows(
// CHECK-SAME: %{{.*}}: memref<8x4xf32> {mnemo.in_place}
// CHECK-SAME: -> memref<?x4xf32>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x4xf32, strided<[4, 1], offset: ?>> to memref<1x4xf32, strided<[4, 1], offset: ?>>
// CHECK: return %arg1 : memref<?x4xf32>
func.func @write_rows(%pool: tensor<8x4xf32> {mnemo.in_place}, %rows: tensor<?x4xf32>,
                      %at: tensor<?xindex>) -> (tensor<8x4xf32> {mnemo.in_place_of = 0 : i64}, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = tensor.dim %rows, %c0 : tensor<?x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%p = %pool) -> tensor<8x4xf32> {
    %row = tensor.extract %at[%i] : tensor<?xindex>
    %inside = arith.cmpi ult, %row, %c8 : index
    %next = scf.if %inside -> tensor<8x4xf32> {
      %src = tensor.extract_slice %rows[%i, 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<1x4xf32>
      %w = tensor.insert_slice %src into %p[%row, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<8x4xf32>
      scf.yield %w : tensor<8x4xf32>
    } else {
      scf.yield %p : tensor<8x4xf32>
    }
    scf.yield %next : tensor<8x4xf32>
  }
  return %r, %rows : tensor<8x4xf32>, tensor<?x4xf32>
}

// -----

// A result that does not return its argument's buffer is an error, never a
// silent copy: here the old pool is still read after the update, so
// bufferization must copy.
// expected-error @below {{result 0 of 'read_after_write' does not return argument 0's buffer: its in-place update was bufferized as a copy}}
func.func @read_after_write(%pool: tensor<4xf32> {mnemo.in_place}, %i: index)
    -> (tensor<4xf32> {mnemo.in_place_of = 0 : i64}, f32) {
  %c = arith.constant 1.0 : f32
  %r = tensor.insert %c into %pool[%i] : tensor<4xf32>
  %old = tensor.extract %pool[%i] : tensor<4xf32>
  return %r, %old : tensor<4xf32>, f32
}
