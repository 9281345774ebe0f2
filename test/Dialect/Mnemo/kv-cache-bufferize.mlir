// RUN: mnemo-opt %s --one-shot-bufferize="bufferize-function-boundaries" --canonicalize | FileCheck %s

// mnemo.kv_cache_write bufferizes in place into its pool as a parallel loop
// over the new tokens: a token at position p >= 0 (padding, -1, is
// skipped) stores each head's values, rounded to bf16, at row p % 4 of page
// table[b, p / 4], a parallel loop over its heads and values (on the GPU
// the token's block spreads it over its threads). A writable pool (an argument the generation step updates
// in place) is written directly: no allocation, no copy.
// CHECK-LABEL: func.func @write_in_place
// CHECK-SAME: (%[[NEW:.*]]: memref<?x2x?x32xf32{{.*}}>, %[[POOL:.*]]: memref<10x2x4x32xbf16{{.*}}>, %[[POS:.*]]: memref<?x?xi64{{.*}}>, %[[TABLE:.*]]: memref<?x?xi32{{.*}}>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: scf.forall (%[[B:.*]], %[[S:.*]]) in (%{{.*}}, %{{.*}})
// CHECK: %[[P:.*]] = memref.load %[[POS]][%[[B]], %[[S]]]
// CHECK: %[[VALID:.*]] = arith.cmpi sge, %[[P]], %c0_i64
// CHECK: scf.if %[[VALID]]
// CHECK: %[[I:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK: %[[LOGICAL:.*]] = arith.divui %[[I]], %c4
// CHECK: %[[ROW:.*]] = arith.remui %[[I]], %c4
// CHECK: %[[ENTRY:.*]] = memref.load %[[TABLE]][%[[B]], %[[LOGICAL]]]
// CHECK: %[[PAGE:.*]] = arith.index_cast %[[ENTRY]] : i32 to index
// CHECK: scf.parallel (%[[H:.*]], %[[D:.*]]) = (%c0, %c0) to (%c2, %c32)
// CHECK: %[[X:.*]] = memref.load %[[NEW]][%[[B]], %[[H]], %[[S]], %[[D]]]
// CHECK: %[[R:.*]] = arith.truncf %[[X]] : f32 to bf16
// CHECK: memref.store %[[R]], %[[POOL]][%[[PAGE]], %[[H]], %[[ROW]], %[[D]]]
// CHECK: return %[[POOL]]
func.func @write_in_place(%new: tensor<?x2x?x32xf32>,
                          %pool: tensor<10x2x4x32xbf16> {bufferization.writable = true},
                          %pos: tensor<?x?xi64>, %table: tensor<?x?xi32>)
    -> tensor<10x2x4x32xbf16> {
  %r = mnemo.kv_cache_write %new into %pool at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xbf16>
  return %r : tensor<10x2x4x32xbf16>
}

// A pool that may not be written (a read-only argument) is copied first,
// whole: the rows no token writes keep their contents in the result.
// CHECK-LABEL: func.func @write_copy
// CHECK: %[[ALLOC:.*]] = memref.alloc() {{.*}} : memref<10x2x4x32xf32>
// CHECK: memref.copy %arg1, %[[ALLOC]]
// CHECK: scf.forall
// CHECK: memref.store %{{.*}}, %[[ALLOC]]
// CHECK: return %[[ALLOC]]
func.func @write_copy(%new: tensor<?x2x?x32xf32>,
                      %pool: tensor<10x2x4x32xf32> {bufferization.writable = false},
                      %pos: tensor<?x?xi64>, %table: tensor<?x?xi32>)
    -> tensor<10x2x4x32xf32> {
  %r = mnemo.kv_cache_write %new into %pool at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xf32>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xf32>
  return %r : tensor<10x2x4x32xf32>
}

// FP8: per token and head, amax over D, scale = max(amax / 448, 2^-126)
// stored in the scale pool (a loop over the heads), then each value / its
// head's scale, read back, as E4M3 (integer ops; a loop over heads and values).
// CHECK-LABEL: func.func @write_fp8
// CHECK: scf.forall
// CHECK: scf.if
// CHECK: scf.parallel (%[[H:.*]]) = (%c0) to (%c2)
// CHECK: %[[AMAX:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[DIV:.*]] = arith.divf %[[AMAX]], %cst
// CHECK: %[[SCALE:.*]] = arith.maximumf %[[DIV]], %cst
// CHECK: memref.store %[[SCALE]], %arg2[%[[PAGE:[0-9a-z_]+]], %[[H]], %[[ROW:[0-9a-z_]+]]]
// CHECK: scf.parallel (%[[H2:.*]], %[[D:.*]]) = (%c0, %c0) to (%c2, %c32)
// CHECK-DAG: %[[S2:.*]] = memref.load %arg2[%[[PAGE]], %[[H2]], %[[ROW]]]
// CHECK-DAG: %[[X:.*]] = memref.load %arg0[%{{.*}}, %[[H2]], %c0, %[[D]]]
// CHECK: arith.divf %[[X]], %[[S2]]
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: memref.store %{{.*}}, %arg1[%[[PAGE]], %[[H2]], %[[ROW]], %[[D]]]
func.func @write_fp8(%new: tensor<?x2x1x32xf32>,
                     %pool: tensor<64x2x16x32xf8E4M3FN> {bufferization.writable = true},
                     %scales: tensor<64x2x16xf32> {bufferization.writable = true},
                     %pos: tensor<?x1xi64>, %table: tensor<?x?xi32>)
    -> (tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16xf32>) {
  %p, %s = mnemo.kv_cache_write %new into %pool scales %scales at %pos table %table
      : tensor<?x2x1x32xf32>, tensor<64x2x16x32xf8E4M3FN>, tensor<?x1xi64>, tensor<?x?xi32>, tensor<64x2x16xf32>
      -> tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16xf32>
  return %p, %s : tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16xf32>
}
