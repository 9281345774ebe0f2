// RUN: mnemo-opt %s | mnemo-opt | FileCheck %s --check-prefix=ROUND
// RUN: mnemo-opt %s --mnemo-decompose-compressed-attention | FileCheck %s
// RUN: mnemo-opt %s --mnemo-decompose-compressed-attention=query-chunk=64 | FileCheck %s --check-prefix=CHUNK
// RUN: mnemo-opt %s --mnemo-decompose-compressed-attention=selected-group=16 | FileCheck %s --check-prefix=SEL

// DeepSeek-V4's attention over a window of raw keys (K = V) and the
// entries of closed windows: round trip, then its reference form, one
// mnemo.attention over [raw, entries] with an additive mask.

// ROUND-LABEL: func.func @csa
// ROUND: mnemo.compressed_attention %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}}) indices(%{{.+}} : tensor<1x?x8xi64>) sink(%{{.+}} : tensor<4xf32>) window(32) rate(4) : tensor<1x4x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x?xi64> -> tensor<1x4x?x64xf32>

// CHECK-LABEL: func.func @csa
// The keys: raw then entries on the key axis.
// CHECK: %[[E0:.+]] = tensor.empty
// CHECK: %[[K0:.+]] = tensor.insert_slice %arg1 into %[[E0]][0, 0, 0, 0]
// CHECK: %[[K:.+]] = tensor.insert_slice %arg2 into %[[K0]][0, 0, %{{.+}}, 0]
// The listed entries (a reduction over the K indices), then the mask.
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.cmpi eq
// CHECK: %[[MASK:.+]] = linalg.generic
// CHECK: arith.divsi
// CHECK: mnemo.attention %arg0, %[[K]], %[[K]] mask(%[[MASK]] : tensor<1x1x?x?xf32>) sink(%arg5 : tensor<4xf32>)
// CHECK-NOT: mnemo.compressed_attention
// By chunks of 64 queries of each sequence: with indices, each query is a
// row of its own (a [64, 4, 1, 64] query) over its window's raw keys
// (min(32, R) rows, gathered) and its 8 listings (no test for repeats: they are not a
// mnemo.top_k's here, so they are tested).
// CHUNK-LABEL: func.func @csa
// CHUNK: scf.for %[[B:.+]] = %c0 to %{{.+}} step %c1
// CHUNK: scf.for %[[C0:.+]] = %c0 to %{{.+}} step %c64
// CHUNK: %[[N:.+]] = arith.minsi %c64
// CHUNK: tensor.extract_slice %arg0[%[[B]], 0, %[[C0]], 0] [1, 4, %[[N]], 64]
// CHUNK: tensor.extract %arg1[%[[B]]
// CHUNK: -> tensor<?x1x?x64xf32>
// CHUNK: linalg.transpose {{.*}} permutation = [2, 1, 0, 3]
// CHUNK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHUNK: mnemo.attention {{.*}} : tensor<?x4x1x64xf32>, tensor<?x1x?x64xf32>
// CHUNK: linalg.transpose {{.*}} permutation = [2, 1, 0, 3]
// CHUNK: tensor.insert_slice {{.*}}[%[[B]], 0, %[[C0]], 0] [1, 4, %[[N]], 64]
func.func @csa(%q: tensor<1x4x?x64xf32>, %raw: tensor<1x1x?x64xf32>,
               %e: tensor<1x1x?x64xf32>, %pos: tensor<1x?xi64>,
               %idx: tensor<1x?x8xi64>, %sink: tensor<4xf32>)
    -> tensor<1x4x?x64xf32> {
  %o = mnemo.compressed_attention %q, %raw, %e positions(%pos)
      indices(%idx : tensor<1x?x8xi64>) sink(%sink : tensor<4xf32>)
      window(32) rate(4)
      : tensor<1x4x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>,
        tensor<1x?xi64> -> tensor<1x4x?x64xf32>
  return %o : tensor<1x4x?x64xf32>
}

// ROUND-LABEL: func.func @hca
// ROUND: mnemo.compressed_attention {{.*}} window(128) rate(128) scale(1.250000e-01)
// CHECK-LABEL: func.func @hca
// CHECK-NOT: arith.cmpi eq
// CHECK: mnemo.attention {{.*}} scale(1.250000e-01) mask(
// Without indices a chunk shares the raw keys from the first its windows
// reach (the smallest real position less 127) to its last query's.
// CHUNK-LABEL: func.func @hca
// CHUNK: scf.for
// CHUNK: scf.for
// CHUNK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHUNK: arith.minsi
// CHUNK: arith.maxsi
// CHUNK: %[[LO:.+]] = arith.index_cast
// CHUNK: tensor.extract_slice %arg1[%{{.+}}, 0, %[[LO]], 0] [1, 2, %{{.+}}, 32]
// CHUNK: mnemo.attention {{.*}} : tensor<1x8x?x32xf32>, tensor<1x2x?x32xf32>
func.func @hca(%q: tensor<?x8x?x32xf32>, %raw: tensor<?x2x?x32xf32>,
               %e: tensor<?x2x?x32xf32>, %pos: tensor<?x?xi64>)
    -> tensor<?x8x?x32xf32> {
  %o = mnemo.compressed_attention %q, %raw, %e positions(%pos)
      window(128) rate(128) scale(0.125)
      : tensor<?x8x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>,
        tensor<?x?xi64> -> tensor<?x8x?x32xf32>
  return %o : tensor<?x8x?x32xf32>
}

// A step over its window's raw keys: raw key j at raw_start[b] + j in the
// mask.
// ROUND-LABEL: func.func @window_keys
// ROUND: mnemo.compressed_attention %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}}) raw_start(%{{.+}} : tensor<?xi64>) window(16) rate(4)
// CHECK-LABEL: func.func @window_keys
// CHECK: linalg.generic
// CHECK: %[[S:.+]] = tensor.extract %arg4
// CHECK: %[[SI:.+]] = arith.index_cast %[[S]]
// CHECK: arith.addi %{{.+}}, %[[SI]]
// CHECK: mnemo.attention
func.func @window_keys(%q: tensor<?x2x1x16xf32>, %raw: tensor<?x1x?x16xf32>,
                       %e: tensor<?x1x?x16xf32>, %pos: tensor<?x1xi64>,
                       %start: tensor<?xi64>) -> tensor<?x2x1x16xf32> {
  %o = mnemo.compressed_attention %q, %raw, %e positions(%pos)
      raw_start(%start : tensor<?xi64>) window(16) rate(4)
      : tensor<?x2x1x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>,
        tensor<?x1xi64> -> tensor<?x2x1x16xf32>
  return %o : tensor<?x2x1x16xf32>
}

// A decode step (one static query row) with listed entries: the K = 8
// listed rows are gathered and attended ([raw, listed] keys), each listing
// seen once (a reduction over the earlier listings), not all T entries
// under a mask.
// CHECK-LABEL: func.func @csa_decode
// CHECK: %[[L:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK: tensor.extract %arg2
// CHECK: -> tensor<1x1x8x64xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: tensor.insert_slice %[[L]]
// CHECK: mnemo.attention {{.*}} : tensor<1x4x1x64xf32>, tensor<1x1x?x64xf32>
func.func @csa_decode(%q: tensor<1x4x1x64xf32>, %raw: tensor<1x1x?x64xf32>,
                      %e: tensor<1x1x?x64xf32>, %pos: tensor<1x1xi64>,
                      %idx: tensor<1x1x8xi64>) -> tensor<1x4x1x64xf32> {
  %o = mnemo.compressed_attention %q, %raw, %e positions(%pos)
      indices(%idx : tensor<1x1x8xi64>) window(32) rate(4)
      : tensor<1x4x1x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>,
        tensor<1x1xi64> -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}

// Paged entries (a generation step's pool, bf16, pages of 16 entries): the
// K = 8 listed rows are read through the table, page table[b, w / 16], row
// w % 16, then widened; the pool is never gathered whole. With 16 query
// heads a key head and selected-group=16, one mnemo.sparse_attention with
// the sink lists each query's 32 window keys and 8 entries (40 columns,
// static although the query's length is not: the positions are [B, 1]).
// ROUND-LABEL: func.func @csa_decode_paged
// ROUND: entry_table(%{{.+}} : tensor<?x?xi32>) sink(
// CHECK-LABEL: func.func @csa_decode_paged
// CHECK-NOT: tensor<?x1x?x64xbf16>
// CHECK: tensor.extract %arg5
// CHECK: arith.remui
// CHECK: tensor.extract %arg2[{{.*}}] : tensor<?x1x16x64xbf16>
// CHECK: -> tensor<?x1x8x64xbf16>
// CHECK: arith.extf
// CHECK: mnemo.attention
// SEL-LABEL: func.func @csa_decode_paged
// SEL-NOT: mnemo.attention
// SEL: tensor.extract %arg2[{{.*}}] : tensor<?x1x16x64xbf16>
// SEL: tensor.empty({{.*}}) : tensor<?x1x40xi64>
// SEL: mnemo.sparse_attention %arg0, %[[K:.+]], %[[K]], %{{.+}} sink(%arg6 : tensor<16xf32>) scale(1.250000e-01) : {{.*}}, tensor<?x1x40xi64> -> tensor<?x16x?x64xf32>
func.func @csa_decode_paged(%q: tensor<?x16x?x64xf32>, %raw: tensor<?x1x?x64xf32>,
                            %pool: tensor<?x1x16x64xbf16>, %pos: tensor<?x1xi64>,
                            %idx: tensor<?x1x8xi64>, %table: tensor<?x?xi32>,
                            %sink: tensor<16xf32>) -> tensor<?x16x?x64xf32> {
  %o = mnemo.compressed_attention %q, %raw, %pool positions(%pos)
      indices(%idx : tensor<?x1x8xi64>) entry_table(%table : tensor<?x?xi32>)
      sink(%sink : tensor<16xf32>) window(32) rate(4)
      : tensor<?x16x?x64xf32>, tensor<?x1x?x64xf32>, tensor<?x1x16x64xbf16>,
        tensor<?x1xi64> -> tensor<?x16x?x64xf32>
  return %o : tensor<?x16x?x64xf32>
}

// The compressor's pool: round trip; its lowering is checked numerically
// (Numerics/gated_pool.py).
// ROUND-LABEL: func.func @pool
// ROUND: mnemo.gated_pool %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} rate(4) overlapping : tensor<1x?x128xf32>, tensor<1x?x128xf32>, tensor<8x64xf32>, tensor<1x?xi64> -> tensor<1x?x64xf32>
// ROUND: mnemo.gated_pool %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} rate(16) : tensor<1x?x64xf32>
func.func @pool(%kv: tensor<1x?x128xf32>, %g: tensor<1x?x128xf32>,
                %bias: tensor<8x64xf32>, %e: tensor<1x?xi64>,
                %kv2: tensor<1x?x64xf32>, %bias2: tensor<16x64xf32>)
    -> (tensor<1x?x64xf32>, tensor<1x?x64xf32>) {
  %p = mnemo.gated_pool %kv, %g, %bias, %e rate(4) overlapping
      : tensor<1x?x128xf32>, tensor<1x?x128xf32>, tensor<8x64xf32>,
        tensor<1x?xi64> -> tensor<1x?x64xf32>
  %h = mnemo.gated_pool %kv2, %kv2, %bias2, %e rate(16)
      : tensor<1x?x64xf32>, tensor<1x?x64xf32>, tensor<16x64xf32>,
        tensor<1x?xi64> -> tensor<1x?x64xf32>
  return %p, %h : tensor<1x?x64xf32>, tensor<1x?x64xf32>
}
