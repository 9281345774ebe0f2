// RUN: mnemo-opt %s --convert-mnemo-to-linalg | FileCheck %s --check-prefix=SHARED
// RUN: mnemo-opt %s --convert-mnemo-to-linalg="top-k-row-scratch=true" | FileCheck %s --check-prefix=ROW

// mnemo.top_k's scratch queue (scores, indices, marks). By default one
// queue for all rows, B * S * T entries allocated before the loop over the
// rows, each row at its own offset (the GPU targets: a thread per row).
// With top-k-row-scratch (the CPU targets) each row allocates a queue of
// T entries in its own iteration, read from offset 0.
func.func @select(%s: tensor<?x?x?xf32>) -> tensor<?x?x8xi64> {
  %i = mnemo.top_k %s k(8) : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
  return %i : tensor<?x?x8xi64>
}
// SHARED-LABEL: func.func @select
// SHARED: %[[B:.*]] = tensor.dim %{{.*}}, %c0
// SHARED: %[[S:.*]] = tensor.dim %{{.*}}, %c1
// SHARED: %[[T:.*]] = tensor.dim %{{.*}}, %c2
// SHARED: %[[BS:.*]] = arith.muli %[[B]], %[[S]]
// SHARED: %[[N:.*]] = arith.muli %[[BS]], %[[T]]
// SHARED: memref.alloc(%[[N]]) : memref<?xf32>
// SHARED: memref.alloc(%[[N]]) : memref<?xi32>
// SHARED: memref.alloc(%[[N]]) : memref<?xi8>
// SHARED: scf.parallel
// SHARED-NOT: memref.alloc
// SHARED: bufferization.to_tensor

// ROW-LABEL: func.func @select
// ROW: %[[T:.*]] = tensor.dim %{{.*}}, %c2
// ROW: memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x8xi64>
// ROW-NOT: memref.alloc
// ROW: scf.parallel
// ROW: memref.alloc(%[[T]]) : memref<?xf32>
// ROW: memref.alloc(%[[T]]) : memref<?xi32>
// ROW: memref.alloc(%[[T]]) : memref<?xi8>
// ROW: bufferization.to_tensor
