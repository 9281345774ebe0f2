// RUN: mnemo-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(mnemo-cpu-linear-kernel{lanes=16 vectors=2 rows=12}))" | FileCheck %s

// A constant [N=71, K=45] weight is packed into three 32-wide panels
// [3, 45, 32] at compile time; the 37 rows (a multiple of no micro-tile
// height) make four row tiles of one 12-row micro-tile each (a short GEMM
// still gets several tiles for the threads). Rows 180 bytes apart fall in
// different cache sets, so the micro-tiles read x in place and nothing is
// packed at run time. Whole 12-row micro-tiles read rows that exist; the
// rows past them (37 = 3 x 12 + 1: the last tile's one row) take 4-row
// micro-tiles, which read the last row again past it (minsi). The first K
// block starts from zeros, later ones from the tile's partial sums; each
// micro-tile is written by one 2-D transfer, masked at N and, in the 4-row
// ones, at the tile's last row.
// CHECK: #[[UNROLL:.+]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[NOUNROLL_DEF:.+]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @packed
// CHECK: arith.constant dense<"0x
// CHECK-SAME: > : tensor<3x45x32xf32>
// CHECK: scf.forall ({{.*}}) in (1, 4)
// CHECK-NOT: linalg.generic
// CHECK: scf.if
// CHECK: } else {
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true, false]} : tensor<?x?xf32>, vector<12x32xf32>
// CHECK-NOT: arith.minsi
// CHECK: scf.for
// CHECK: tensor.extract %arg0[
// CHECK-COUNT-24: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {in_bounds = [true, false]} : vector<12x32xf32>, tensor<?x?xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<?x?xf32>, vector<4x32xf32>
// CHECK-COUNT-4: arith.minsi
// CHECK: scf.for
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : vector<4x32xf32>, tensor<?x?xf32>
// LLVM unrolls none of the kernel's loops (the K steps' loops above, the
// micro-tiles, the K blocks, the panels).
// CHECK: } {llvm.loop_annotation = #[[NOUNROLL_DEF]]}
// CHECK: } {llvm.loop_annotation = #[[NOUNROLL_DEF]]}
// CHECK: } {llvm.loop_annotation = #[[NOUNROLL_DEF]]}
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: mnemo.linear
func.func @packed(%x: tensor<37x45xf32>) -> tensor<37x71xf32> {
  %w = arith.constant dense<0.5> : tensor<71x45xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<37x45xf32>, tensor<71x45xf32> -> tensor<37x71xf32>
  return %y : tensor<37x71xf32>
}

// -----

// Rows 4 KiB apart (K = 1024) would all fall in one cache set: each row
// tile packs its rows of x into 12-row panels [?, K, 12], past the last
// row repeating it (minsi), and the micro-tiles (12 rows of one 16-lane
// vector: N = 16, then 4-row ones in the last tile's panel) read those.
// CHECK-LABEL: func.func @packed_rows
// CHECK: scf.forall ({{.*}}) in (1, 4)
// CHECK: linalg.generic
// CHECK: arith.minsi
// CHECK: tensor.extract
// CHECK: -> tensor<?x1024x12xf32>
// CHECK: scf.for
// CHECK-COUNT-12: vector.fma
// CHECK: arith.remui
// CHECK: scf.for
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: vector.fma
func.func @packed_rows(%x: tensor<37x1024xf32>, %w: tensor<1024x16xf32>) -> tensor<37x16xf32> {
  %y = mnemo.linear %x, %w layout(in_out) : tensor<37x1024xf32>, tensor<1024x16xf32> -> tensor<37x16xf32>
  return %y : tensor<37x16xf32>
}

// -----

// Few rows and many columns: two row tiles of 12 rows, so the 1000 columns
// split into tiles of 128 (whole panels, the narrowest made), 8 of them, for
// 16 tiles in all.
// CHECK-LABEL: func.func @column_tiles
// CHECK: scf.forall ({{.*}}) in (8, 2)
func.func @column_tiles(%x: tensor<24x64xf32>, %w: tensor<64x1000xf32>) -> tensor<24x1000xf32> {
  %y = mnemo.linear %x, %w layout(in_out) : tensor<24x64xf32>, tensor<64x1000xf32> -> tensor<24x1000xf32>
  return %y : tensor<24x1000xf32>
}

// -----

// One row (decode): a one-row micro-tile, two accumulators, reading the
// weight panels in bounds; N = 64 is a multiple of the panel, so the writes
// are not masked either.
// CHECK-LABEL: func.func @decode
// CHECK: tensor<2x128x32xf32>
// CHECK-COUNT-2: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true, true]} : vector<1x32xf32>
func.func @decode(%x: tensor<1x1x128xf32>) -> tensor<1x1x64xf32> {
  %w = arith.constant dense<0.25> : tensor<128x64xf32>
  %y = mnemo.linear %x, %w layout(in_out) : tensor<1x1x128xf32>, tensor<128x64xf32> -> tensor<1x1x64xf32>
  return %y : tensor<1x1x64xf32>
}

// -----

// One row per batch position (a decode step over B sequences): the batch
// is the GEMM's rows, so the weights are read once for all of them, not
// once per sequence: [?, 1, 128] collapses to [?, 128], full-height
// micro-tiles of 12 rows (then 4-row ones for the rows past them), and the
// result expands back to [?, 1, 64].
// CHECK-LABEL: func.func @decode_batch
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x1x128xf32> into tensor<?x128xf32>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (1, %{{.*}})
// CHECK-COUNT-24: vector.fma
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: vector.fma
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 1, 64] : tensor<?x64xf32> into tensor<?x1x64xf32>
func.func @decode_batch(%x: tensor<?x1x128xf32>) -> tensor<?x1x64xf32> {
  %w = arith.constant dense<0.25> : tensor<128x64xf32>
  %y = mnemo.linear %x, %w layout(in_out) : tensor<?x1x128xf32>, tensor<128x64xf32> -> tensor<?x1x64xf32>
  return %y : tensor<?x1x64xf32>
}

// -----

// A weight computed at run time, [N, K]: transposed once to [K, N], then
// read in place with masked loads past N; batch and rows dynamic, one GEMM
// over batch x rows (column tiles, then row tiles), expanded back to
// [B, S, N]. One column tile: the rows are split so that there are at
// least 32 tiles where there are enough rows. Unmasked transfers print no in_bounds.
// CHECK-LABEL: func.func @computed
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x?x20xf32> into tensor<?x20xf32>
// CHECK: linalg.transpose
// Rows per tile: a 32nd of the rows in whole 12-row micro-tiles, within
// [12, 192].
// CHECK: %[[SHARE:.*]] = arith.ceildivsi %[[M:.*]], %c32
// CHECK: %[[MICRO:.*]] = arith.ceildivsi %[[SHARE]], %c12
// CHECK: %[[WHOLE:.*]] = arith.muli %[[MICRO]]
// CHECK: %[[LOW:.*]] = arith.maxsi %[[WHOLE]]
// CHECK: %[[ROWS:.*]] = arith.minsi %[[LOW]]
// CHECK: %[[TILES:.*]] = arith.ceildivsi %[[M]], %[[ROWS]]
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (1, %[[TILES]])
// CHECK: vector.transfer_read %transposed[%{{.*}}, %{{.*}}], %{{.*}} : tensor<20x37xf32>, vector<16xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%{{.*}}, %{{.*}}, 37] : tensor<?x37xf32> into tensor<?x?x37xf32>
func.func @computed(%x: tensor<?x?x20xf32>, %w: tensor<37x20xf32>) -> tensor<?x?x37xf32> {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<?x?x20xf32>, tensor<37x20xf32> -> tensor<?x?x37xf32>
  return %y : tensor<?x?x37xf32>
}

// -----

// bf16 weights are widened as they load; f64 layers keep the generic
// tiling.
// CHECK-LABEL: func.func @widths
// CHECK: arith.extf {{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: mnemo.linear {{.*}} -> tensor<4x8xf64>
func.func @widths(%x: tensor<4x16xf32>, %w: tensor<16x8xbf16>, %xd: tensor<4x16xf64>, %wd: tensor<16x8xf64>) -> (tensor<4x8xf32>, tensor<4x8xf64>) {
  %y = mnemo.linear %x, %w layout(in_out) : tensor<4x16xf32>, tensor<16x8xbf16> -> tensor<4x8xf32>
  %z = mnemo.linear %xd, %wd layout(in_out) : tensor<4x16xf64>, tensor<16x8xf64> -> tensor<4x8xf64>
  return %y, %z : tensor<4x8xf32>, tensor<4x8xf64>
}


// -----

// Inside a parallel loop (an attention tile's QK^T), 32 rows stay one tile
// (a forall of one iteration: no row tiles for the threads, which already
// have their share), and rows that every step of a sequential loop reads (the tile's
// queries, for each key tile) are packed once, before that loop; the
// weight changes with the step and is read in place.
// CHECK-LABEL: func.func @tile_product
// CHECK: scf.forall
// CHECK: %[[PANELS:.+]] = linalg.generic
// CHECK: -> tensor<4x128x8xf32>
// CHECK: scf.for
// CHECK-NOT: linalg.generic
// CHECK: scf.forall ({{.*}}) in (1, 1)
// CHECK-NOT: linalg.generic
// CHECK: tensor.extract %[[PANELS]]
// CHECK-COUNT-16: vector.fma
func.func @tile_product(%q: tensor<4x32x128xf32>, %k: tensor<16x128x64xf32>) -> tensor<4x32x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %init = tensor.empty() : tensor<4x32x64xf32>
  %r = scf.forall (%h) in (4) shared_outs(%out = %init) -> (tensor<4x32x64xf32>) {
    %qt = tensor.extract_slice %q[%h, 0, 0] [1, 32, 128] [1, 1, 1] : tensor<4x32x128xf32> to tensor<32x128xf32>
    %s0 = tensor.empty() : tensor<32x64xf32>
    %s = scf.for %t = %c0 to %c16 step %c1 iter_args(%acc = %s0) -> (tensor<32x64xf32>) {
      %kt = tensor.extract_slice %k[%t, 0, 0] [1, 128, 64] [1, 1, 1] : tensor<16x128x64xf32> to tensor<128x64xf32>
      %p = mnemo.linear %qt, %kt layout(in_out) : tensor<32x128xf32>, tensor<128x64xf32> -> tensor<32x64xf32>
      %sum = arith.addf %acc, %p : tensor<32x64xf32>
      scf.yield %sum : tensor<32x64xf32>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %out[%h, 0, 0] [1, 32, 64] [1, 1, 1] : tensor<32x64xf32> into tensor<4x32x64xf32>
    }
  }
  return %r : tensor<4x32x64xf32>
}
