// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=16 block-kv=32}),canonicalize,cse)" \
// RUN:   | FileCheck %s
// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=16 block-kv=32 fuse-rope=false}))" \
// RUN:   | FileCheck %s --check-prefix=NOFUSE
// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=16 block-kv=32 group-in-block=true}),canonicalize,cse)" \
// RUN:   | FileCheck %s --check-prefix=GROUP
// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=16 block-kv=32 transpose-keys=true}),canonicalize,cse)" \
// RUN:   | FileCheck %s --check-prefix=KBLOCKS
// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=16 block-kv=32 fold-transposes=true}),canonicalize,cse)" \
// RUN:   | FileCheck %s --check-prefix=FOLD
// RUN: mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=16 block-kv=32 mask-edges-only=true}),canonicalize,cse)" \
// RUN:   | FileCheck %s --check-prefix=EDGES
// RUN: not mnemo-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(mnemo-tile-attention{block-q=0}))" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADTILE

// BADTILE: error: mnemo-tile-attention needs positive tile sizes, got block-q=0 block-kv=64

// Checks the FlashAttention structure for causal GQA (4 query heads per KV
// head) with a sliding window and ropes on Q and K:
//  - parallel (KV head, query tile) blocks, the batch of 1 folded away;
//  - the 4 query heads of a group packed into one [1, 4, 16, 64] Q tile;
//  - a sequential loop over KV tiles carrying (max, sum, acc), its bounds
//    derived from the causal limit and the window (tiles no row can see are
//    never visited);
//  - causal query tiles visited last to first (the longest first);
//  - the query's rope applied to each Q tile, not to the whole tensor; the
//    key's rope stays whole (applied once, not once per query tile);
//  - no [Sq, Skv] tensor anywhere.

// CHECK-LABEL: func.func @causal_gqa_window_rope
//  CHECK-SAME:   %[[X:[a-z0-9]+]]: tensor<1x8x?x64xf32>, %[[XK:[a-z0-9]+]]: tensor<1x2x?x64xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x?x64xf32>, %[[P:[a-z0-9]+]]: tensor<1x?xi64>
//   CHECK-NOT:   mnemo.rope {{.+}} tensor<1x8x?x64xf32>
//       CHECK:   %[[K:.+]] = mnemo.rope %[[XK]], %[[P]] {{.+}} : tensor<1x2x?x64xf32>
//   CHECK-NOT:   mnemo.rope {{.+}} tensor<1x8x?x64xf32>
//       CHECK:   %[[SQ:.+]] = tensor.dim %[[X]], %c2
//       CHECK:   %[[SKV:.+]] = tensor.dim %[[K]], %c2
//       CHECK:   %[[NQT:.+]] = arith.ceildivsi %[[SQ]], %c16
//       CHECK:   %[[QP:.+]] = tensor.pad %[[X]]
//       CHECK:   %[[KP:.+]] = tensor.pad %[[K]]
//       CHECK:   scf.forall (%[[H:.+]], %[[QT:.+]]) in (2, %[[NQT]])
//       CHECK:     %[[LASTQT:.+]] = arith.subi %[[NQT]], %c1
//       CHECK:     %[[QTR:.+]] = arith.subi %[[LASTQT]], %[[QT]]
//       CHECK:     %[[Q0:.+]] = arith.muli %[[QTR]], %c16
//       CHECK:     %[[QTILE:.+]] = tensor.extract_slice %[[QP]][0, %{{.+}}, %[[Q0]], 0] [1, 4, 16, 64]
//       CHECK:     %[[QROT:.+]] = mnemo.rope %[[QTILE]], %{{.+}} : tensor<1x4x16x64xf32>, tensor<1x16xi64>
//       CHECK:     %[[END:.+]] = arith.addi %[[Q0]], %c16
//       CHECK:     %[[LAST:.+]] = arith.minsi %[[END]], %[[SQ]]
//       CHECK:     %[[HI:.+]] = arith.minsi %[[SKV]], %[[LAST]]
//       CHECK:     %[[FIRST:.+]] = arith.addi %[[Q0]], %c-127
//       CHECK:     %[[LO:.+]] = arith.maxsi %[[FIRST]], %c0
//       CHECK:     %[[TLO:.+]] = arith.divsi %[[LO]], %c32
//       CHECK:     %[[THI:.+]] = arith.ceildivsi %{{.+}}, %c32
//       CHECK:     scf.for %[[KT:.+]] = %[[TLO]] to %[[THI]] step %c1 iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1x4x16x64xf32>)
//       CHECK:       %[[KTILE:.+]] = tensor.extract_slice %[[KP]][0, %[[H]], %{{.+}}, 0] [1, 1, 32, 64]
//   CHECK-NOT:       mnemo.rope
//       CHECK:       %[[KT:.+]] = linalg.transpose ins(%[[KTILE]] : tensor<1x1x32x64xf32>) outs(%{{.+}} : tensor<1x1x64x32xf32>) permutation = [0, 1, 3, 2]
//       CHECK:       linalg.generic {{.+}} ins(%[[QROT]], %[[KT]] : tensor<1x4x16x64xf32>, tensor<1x1x64x32xf32>) outs(%{{.+}} : tensor<1x4x16x32xf32>)
//       CHECK:       math.exp
//       CHECK:       scf.yield
//       CHECK:     tensor.parallel_insert_slice %{{.+}} into %{{.+}}[0, %{{.+}}, %[[Q0]], 0] [1, 4, 16, 64]
//   CHECK-NOT:   tensor<1x8x?x?xf32>
//   CHECK-NOT:   mnemo.attention

// With group-in-block (the CPU's register tiles) the group's 4 heads share
// the 16 rows: 4 positions per Q tile.
// GROUP-LABEL: func.func @causal_gqa_window_rope
//       GROUP:   arith.ceildivsi %{{.+}}, %c4
//       GROUP:   scf.forall
//       GROUP:     tensor.extract_slice %{{.+}}[0, %{{.+}}, %{{.+}}, 0] [1, 4, 4, 64]

// With transpose-keys (the CPU's QK^T) the padded keys are transposed once,
// before the forall, into one [64, 32] block per key tile, which each step
// slices instead of transposing its tile.
// KBLOCKS-LABEL: func.func @causal_gqa_window_rope
//       KBLOCKS:   tensor.pad %arg0
//       KBLOCKS:   %[[KP:.+]] = tensor.pad %{{.+}} low[0, 0, 0, 0]
//       KBLOCKS:   %[[NKT:.+]] = arith.ceildivsi %{{.+}}, %c32
//       KBLOCKS:   %[[SPLIT:.+]] = tensor.expand_shape %[[KP]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 2, %[[NKT]], 32, 64] : tensor<1x2x?x64xf32> into tensor<1x2x?x32x64xf32>
//       KBLOCKS:   %[[BLOCKS:.+]] = linalg.transpose ins(%[[SPLIT]] : tensor<1x2x?x32x64xf32>) outs(%{{.+}} : tensor<1x2x?x64x32xf32>) permutation = [0, 1, 2, 4, 3]
//       KBLOCKS:   scf.forall (%[[H:.+]], %{{.+}}) in (2,
//       KBLOCKS:     scf.for %[[KT:.+]] = %{{.+}} to %{{.+}} step %c1
//       KBLOCKS:       %[[BLOCK:.+]] = tensor.extract_slice %[[BLOCKS]][0, %[[H]], %[[KT]], 0, 0] [1, 1, 1, 64, 32] [1, 1, 1, 1, 1] : tensor<1x2x?x64x32xf32> to tensor<1x1x64x32xf32>
//   KBLOCKS-NOT:       linalg.transpose
//       KBLOCKS:       linalg.generic {{.+}} ins(%{{.+}}, %[[BLOCK]] : tensor<1x4x16x64xf32>, tensor<1x1x64x32xf32>)
//       KBLOCKS:       scf.yield

// With mask-edges-only, a step masks its scores only when its key tile
// (keys k0 .. k0 + 31) hides a key from some row: a padded key, a key past
// the first row (causal), or one 128 or more before the last row (the
// window). The other steps only scale.
// EDGES-LABEL: func.func @causal_gqa_window_rope
//       EDGES:   scf.for
//       EDGES:     %[[LASTKEY:.+]] = arith.addi %{{.+}}, %c31
//       EDGES:     %[[PAD:.+]] = arith.cmpi sge, %[[LASTKEY]], %{{.+}}
//       EDGES:     %[[CAUSAL:.+]] = arith.cmpi sgt, %[[LASTKEY]], %{{.+}}
//       EDGES:     arith.ori %[[PAD]], %[[CAUSAL]]
//       EDGES:     %[[WINDOW:.+]] = arith.cmpi sge, %{{.+}}, %c128
//       EDGES:     %[[HIDES:.+]] = arith.ori %{{.+}}, %[[WINDOW]]
//       EDGES:     scf.if %[[HIDES]]
//       EDGES:       arith.select
//       EDGES:     } else {
//  EDGES-NEXT:       linalg.generic
//  EDGES-NEXT:       ^bb0
//  EDGES-NEXT:         arith.mulf
//  EDGES-NEXT:         linalg.yield
//       EDGES:     math.exp

// NOFUSE-LABEL: func.func @causal_gqa_window_rope
//       NOFUSE:   mnemo.rope {{.+}} : tensor<1x8x?x64xf32>
//       NOFUSE:   mnemo.rope {{.+}} : tensor<1x2x?x64xf32>
//       NOFUSE:   scf.forall
//   NOFUSE-NOT:   mnemo.rope
func.func @causal_gqa_window_rope(%x: tensor<1x8x?x64xf32>, %xk: tensor<1x2x?x64xf32>,
    %v: tensor<1x2x?x64xf32>, %p: tensor<1x?xi64>) -> tensor<1x8x?x64xf32> {
  %q = mnemo.rope %x, %p theta(10000.0)
      : tensor<1x8x?x64xf32>, tensor<1x?xi64> -> tensor<1x8x?x64xf32>
  %k = mnemo.rope %xk, %p theta(10000.0)
      : tensor<1x2x?x64xf32>, tensor<1x?xi64> -> tensor<1x2x?x64xf32>
  %o = mnemo.attention %q, %k, %v causal window(128)
      : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>
      -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// Checks a sink seeds the running max from the group's sink logits with a
// running sum of 1, and that a mask tile is cut per (head group, query tile,
// KV tile) with broadcast dims kept at size 1.

// CHECK-LABEL: func.func @sink_and_mask
//       CHECK:   scf.forall
//       CHECK:     %[[SINK:.+]] = tensor.extract_slice %{{.+}}[%{{.+}}] [2] [1] : tensor<4xf32> to tensor<2xf32>
//       CHECK:     %[[M0:.+]] = linalg.generic {{.+}} ins(%[[SINK]] : tensor<2xf32>)
//       CHECK:     %[[L0:.+]] = linalg.fill ins(%cst{{.*}} : f32) outs(%{{.+}} : tensor<1x2x16xf32>)
//       CHECK:     scf.for {{.+}} iter_args(%{{.+}} = %[[M0]], %{{.+}} = %[[L0]],
//       CHECK:       tensor.extract_slice %{{.+}}[0, %{{.+}}, %{{.+}}] [1, 16, 32] [1, 1, 1] : tensor<1x?x?xf32> to tensor<1x16x32xf32>
func.func @sink_and_mask(%q: tensor<2x4x?x8xf32>, %k: tensor<2x2x?x8xf32>,
    %v: tensor<2x2x?x8xf32>, %m: tensor<1x?x?xf32>, %s: tensor<4xf32>)
    -> tensor<2x4x?x8xf32> {
  %o = mnemo.attention %q, %k, %v mask(%m : tensor<1x?x?xf32>) sink(%s : tensor<4xf32>)
      : tensor<2x4x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>
      -> tensor<2x4x?x8xf32>
  return %o : tensor<2x4x?x8xf32>
}

// -----

// A decode step (one query row per head, static): the Q tile is that row
// for each of the group's heads, [1, 2, 1, 8], not block-q rows of padding
// that would all be computed; the query is not padded. One query tile reads
// each key tile once, so even with transpose-keys each step transposes its
// own key tile (no key blocks).
// KBLOCKS-LABEL: func.func @one_query_row
//   KBLOCKS-NOT:   tensor.expand_shape
//       KBLOCKS:   scf.for
//       KBLOCKS:     linalg.transpose ins(%{{.+}} : tensor<1x1x32x8xf32>) outs(%{{.+}} : tensor<1x1x8x32xf32>) permutation = [0, 1, 3, 2]
// CHECK-LABEL: func.func @one_query_row
//   CHECK-NOT:   tensor.pad %arg0
//       CHECK:   scf.forall
//       CHECK:     tensor.extract_slice %arg0[%{{.+}}, %{{.+}}, 0, 0] [1, 2, 1, 8] [1, 1, 1, 1] : tensor<?x4x1x8xf32> to tensor<1x2x1x8xf32>
//       CHECK:     linalg.fill ins(%cst{{.*}} : f32) outs(%{{.+}} : tensor<1x2x1xf32>)
func.func @one_query_row(%q: tensor<?x4x1x8xf32>, %k: tensor<?x2x?x8xf32>,
    %v: tensor<?x2x?x8xf32>, %m: tensor<?x1x1x?xf32>)
    -> tensor<?x4x1x8xf32> {
  %o = mnemo.attention %q, %k, %v mask(%m : tensor<?x1x1x?xf32>)
      : tensor<?x4x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      -> tensor<?x4x1x8xf32>
  return %o : tensor<?x4x1x8xf32>
}

// -----

// Keys computed from their indices alone (as the paged cache's gather
// through a block table is): each K tile is computed where the loop loads
// it, from the tile's indices offset by its position and clamped to the
// last key (padding keys are masked), instead of padding and copying the
// whole gathered tensor. V, read from a tensor, is padded as before.
// CHECK-LABEL: func.func @generated_keys
//   CHECK-NOT:   linalg.generic
//       CHECK:   tensor.pad %arg1
//   CHECK-NOT:   linalg.generic
//       CHECK:   scf.for
//       CHECK:     %[[KT:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x1x32x8xf32>)
//       CHECK:       linalg.index 2
//       CHECK:       arith.addi
//       CHECK:       arith.minsi
//       CHECK:       tensor.extract %arg3
func.func @generated_keys(%q: tensor<?x4x1x8xf32>, %v: tensor<?x2x?x8xf32>,
    %m: tensor<?x1x1x?xf32>, %pool: tensor<64x2x8xf32>, %table: tensor<?x?xi32>)
    -> tensor<?x4x1x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %table, %c0 : tensor<?x?xi32>
  %t = tensor.dim %table, %c1 : tensor<?x?xi32>
  %e = tensor.empty(%b, %t) : tensor<?x2x?x8xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(i, h, t, d) -> (i, h, t, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x2x?x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %h = linalg.index 1 : index
    %tt = linalg.index 2 : index
    %d = linalg.index 3 : index
    %p = tensor.extract %table[%i, %tt] : tensor<?x?xi32>
    %pi = arith.index_cast %p : i32 to index
    %x = tensor.extract %pool[%pi, %h, %d] : tensor<64x2x8xf32>
    linalg.yield %x : f32
  } -> tensor<?x2x?x8xf32>
  %o = mnemo.attention %q, %k, %v mask(%m : tensor<?x1x1x?xf32>)
      : tensor<?x4x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      -> tensor<?x4x1x8xf32>
  return %o : tensor<?x4x1x8xf32>
}

// -----

// A decode step's query: one row, its static count hidden by a cast (a
// paged attention's decomposition makes it). The tile takes that one row
// instead of padding it to block-q rows.
// CHECK-LABEL: func.func @cast_one_row
//   CHECK-NOT:   tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 15, 0]
//       CHECK:   scf.forall
//       CHECK:     tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}, 0, 0] [1, 4, 1, 64]
func.func @cast_one_row(%q1: tensor<?x8x1x64xf32>, %k: tensor<?x2x?x64xf32>,
                        %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %q = tensor.cast %q1 : tensor<?x8x1x64xf32> to tensor<?x8x?x64xf32>
  %o = mnemo.attention %q, %k, %v
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>
      -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// -----

// With fold-transposes, a result whose only user transposes it to
// [B, S, H, D] is written in that layout: each tile's O = acc / l goes to a
// [1, 16, 4, 64] tile (an output map that swaps heads and rows) at (row,
// head), and no transpose is left. Without the option the transpose stays.
// FOLD-LABEL: func.func @heads_last
//       FOLD:   %[[OUT:.+]] = scf.forall (%[[H:.+]], %[[QT:.+]]) in (2, %{{.+}}) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x?x8x64xf32>)
//       FOLD:     %[[TILE:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<1x16x4x64xf32>)
//       FOLD:     tensor.parallel_insert_slice %[[TILE]] into %{{.+}}[0, %{{.+}}, %{{.+}}, 0] [1, 16, 4, 64] [1, 1, 1, 1] : tensor<1x16x4x64xf32> into tensor<1x?x8x64xf32>
//   FOLD-NOT:   linalg.transpose
//       FOLD:   return %{{.+}} : tensor<1x?x8x64xf32>
// CHECK-LABEL: func.func @heads_last
//       CHECK:   linalg.transpose ins(%{{.+}} : tensor<1x8x?x64xf32>) outs(%{{.+}} : tensor<1x?x8x64xf32>) permutation = [0, 2, 1, 3]
func.func @heads_last(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                      %v: tensor<1x2x?x64xf32>, %init: tensor<1x?x8x64xf32>)
    -> tensor<1x?x8x64xf32> {
  %o = mnemo.attention %q, %k, %v
      : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>
      -> tensor<1x8x?x64xf32>
  %t = linalg.transpose ins(%o : tensor<1x8x?x64xf32>)
      outs(%init : tensor<1x?x8x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x?x8x64xf32>
}
