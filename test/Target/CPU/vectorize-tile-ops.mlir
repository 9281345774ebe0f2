// RUN: mnemo-opt %s --mnemo-cpu-vectorize-tile-ops --split-input-file | FileCheck %s
// RUN: mnemo-opt %s --mnemo-cpu-vectorize-tile-ops=scalable=true --split-input-file | FileCheck %s --check-prefix=SVE

// An attention tile's row maximum and exp inside its KV loop: one op per
// row, each a 40-wide vector (not a tile multiple), the maximum a
// vector.reduction seeded with the running value.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @softmax_parts
// CHECK: scf.for
// CHECK: scf.for %[[I:.*]] = %c0 to %c2
// CHECK: scf.for %[[J:.*]] = %c0 to %c3
// CHECK: %[[ROW:.*]] = vector.transfer_read %{{.*}}[%[[I]], %[[J]], %c0], %{{.*}} {in_bounds = [true]} : tensor<2x3x40xf32>, vector<40xf32>
// CHECK: %[[OLD:.*]] = vector.extract
// CHECK: vector.reduction <maximumf>, %[[ROW]], %[[OLD]] : vector<40xf32> into f32
// CHECK: scf.for %{{.*}} = %c0 to %c2
// CHECK: scf.for %{{.*}} = %c0 to %c3
// CHECK: arith.subf %{{.*}}, %{{.*}} : vector<40xf32>
// CHECK: math.exp %{{.*}} : vector<40xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<40xf32>, tensor<1x1x40xf32>
// CHECK-NOT: linalg.generic
// With scalable vectors (SVE) each op is a choice on the vector length:
// at 128 bits (vscale 1) its rows are the same 40-wide row vectors;
// longer, each row a loop over chunks of 4 x vscale lanes, the last one
// partial (masked), the maximum carried across the chunks.
// SVE-LABEL: func.func @softmax_parts
// SVE: %[[VS:[0-9a-z_]+]] = vector.vscale
// SVE: %[[NARROW:[0-9a-z_]+]] = arith.cmpi eq, %[[VS]], %c1 : index
// SVE: scf.if %[[NARROW]] -> (tensor<2x3xf32>)
// SVE: scf.for
// SVE: scf.for
// SVE: vector.reduction <maximumf>, %{{[0-9a-z_]+}}, %{{[0-9a-z_]+}} : vector<40xf32> into f32
// SVE: } else {
// SVE: scf.for
// SVE: scf.for
// SVE: %[[LANES:[0-9a-z_]+]] = arith.muli %{{[0-9a-z_]+}}, %c4 : index
// SVE: scf.for %[[C:[0-9a-z_]+]] = %c0 to %c40 step %[[LANES]] iter_args(%{{[0-9a-z_]+}} = %{{[0-9a-z_]+}}) -> (tensor<1x1xf32>)
// SVE: %[[MASK:[0-9a-z_]+]] = vector.create_mask %{{[0-9a-z_]+}} : vector<[4]xi1>
// SVE: %[[CHUNK:[0-9a-z_]+]] = vector.transfer_read %{{.*}}, %[[MASK]] {in_bounds = [true]} : tensor<?xf32>, vector<[4]xf32>
// SVE: vector.mask %[[MASK]] { vector.reduction <maximumf>, %[[CHUNK]], %{{[0-9a-z_]+}} : vector<[4]xf32> into f32 }
// SVE: scf.if %{{[0-9a-z_]+}} -> (tensor<2x3x40xf32>)
// SVE: math.exp %{{[0-9a-z_]+}} : vector<40xf32>
// SVE: } else {
// SVE: math.exp %{{[0-9a-z_]+}} : vector<[4]xf32>
// SVE: vector.transfer_write %{{.*}} : vector<[4]xf32>, tensor<?xf32>
// SVE-NOT: linalg.generic
func.func @softmax_parts(%s: tensor<2x3x40xf32>, %m0: tensor<2x3xf32>, %n: index) -> (tensor<2x3xf32>, tensor<2x3x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %t = %s) -> (tensor<2x3xf32>, tensor<2x3x40xf32>) {
    %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t : tensor<2x3x40xf32>) outs(%m : tensor<2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %x = arith.maximumf %in, %out : f32
      linalg.yield %x : f32
    } -> tensor<2x3xf32>
    %e = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%max : tensor<2x3xf32>) outs(%t : tensor<2x3x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      %d = arith.subf %out, %in : f32
      %x = math.exp %d : f32
      linalg.yield %x : f32
    } -> tensor<2x3x40xf32>
    scf.yield %max, %e : tensor<2x3xf32>, tensor<2x3x40xf32>
  }
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<2x3x40xf32>
}

// -----

// Left alone: an op outside any loop (a model's top level, parallelized
// later), one that reads across rows (a transpose), one that gathers along
// a column (its row index is the innermost loop's), and a dynamic one.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @left_alone
// SVE-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%a: tensor<8x8xf32>, %d: tensor<?x8xf32>, %n: index) -> (tensor<8x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %top = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x8xf32>) outs(%a : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.addf %in, %in : f32
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%t = %top, %u = %d) -> (tensor<8x8xf32>, tensor<?x8xf32>) {
    %tr = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<8x8xf32>) outs(%t : tensor<8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x8xf32>
    %g = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%tr : tensor<8x8xf32>) {
    ^bb0(%out: f32):
      %j = linalg.index 1 : index
      %x = tensor.extract %tr[%j, %c0] : tensor<8x8xf32>
      linalg.yield %x : f32
    } -> tensor<8x8xf32>
    %dyn = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%u : tensor<?x8xf32>) {
    ^bb0(%out: f32):
      %x = arith.addf %out, %out : f32
      linalg.yield %x : f32
    } -> tensor<?x8xf32>
    scf.yield %g, %dyn : tensor<8x8xf32>, tensor<?x8xf32>
  }
  return %r#0, %r#1 : tensor<8x8xf32>, tensor<?x8xf32>
}

// -----

// A row sum adds its lanes in any order (reassoc: a tree of vector adds,
// not a chain of scalar ones); the maximum keeps no such flag (it needs
// none), and a reduction that was there before the pass is left alone.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// CHECK: scf.for
// CHECK: vector.reduction <add>, %{{.*}}, %{{.*}} fastmath<reassoc> : vector<64xf32> into f32
func.func @row_sum(%p: tensor<4x64xf32>, %l0: tensor<4xf32>, %v: vector<8xf32>, %n: index) -> (tensor<4xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %before = vector.reduction <add>, %v : vector<8xf32> into f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%l = %l0) -> (tensor<4xf32>) {
    %sum = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<4x64xf32>) outs(%l : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %x = arith.addf %in, %out : f32
      linalg.yield %x : f32
    } -> tensor<4xf32>
    scf.yield %sum : tensor<4xf32>
  }
  return %r, %before : tensor<4xf32>, f32
}

// -----

// A value tile gathered from a paged cache, as the attention tiling leaves
// it in a decode step: each row's page is a block-table entry (one scalar
// read per row, broadcast), the row's features one contiguous load, and rows past the
// cached ones take the new token's (a select of whole rows). The loads stay
// loads: no vector.gather.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @page_rows
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read %{{.*}} {in_bounds = [true], permutation_map = #{{.*}}} : tensor<2x4xi32>, vector<32xi32>
// CHECK: vector.transfer_read %{{.*}} : tensor<8x2x16x32xf32>, vector<32xf32>
// CHECK: vector.transfer_read %{{.*}} : tensor<2x2x1x32xf32>, vector<32xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xf32>
// CHECK-NOT: vector.gather
// CHECK-NOT: linalg.generic
func.func @page_rows(%pool: tensor<8x2x16x32xf32>, %table: tensor<2x4xi32>, %new: tensor<2x2x1x32xf32>, %cached: index, %n: index) -> tensor<1x1x64x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %init = tensor.empty() : tensor<1x1x64x32xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<1x1x64x32xf32>) {
    %g = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : tensor<1x1x64x32xf32>) {
    ^bb0(%out: f32):
      %row = linalg.index 2 : index
      %d = linalg.index 3 : index
      %past = arith.cmpi ult, %row, %cached : index
      %p = arith.divui %row, %c16 : index
      %slot = arith.remui %row, %c16 : index
      %q = arith.minui %p, %c1 : index
      %entry = tensor.extract %table[%i, %q] : tensor<2x4xi32>
      %page = arith.index_cast %entry : i32 to index
      %x = tensor.extract %pool[%page, %c1, %slot, %d] : tensor<8x2x16x32xf32>
      %y = tensor.extract %new[%i, %c1, %c0, %d] : tensor<2x2x1x32xf32>
      %v = arith.select %past, %x, %y : f32
      linalg.yield %v : f32
    } -> tensor<1x1x64x32xf32>
    scf.yield %g : tensor<1x1x64x32xf32>
  }
  return %r : tensor<1x1x64x32xf32>
}

// -----

// A sparse attention's keys gathered from the pages outside any loop (a
// decode step's standalone gather): the batch and token dims are dynamic,
// the rows static. Its rows become the parallel iterations of an
// scf.forall, each a block-table entry and one contiguous load. A
// standalone op that reads no tensor (the scale) and a gather along a
// column are left to the later passes.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @standalone_gather
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) shared_outs
// CHECK: vector.transfer_read %{{.*}} : tensor<?x?xi32>, vector<48xi32>
// CHECK: vector.transfer_read %{{.*}} : tensor<8x16x48xf32>, vector<48xf32>
// CHECK: vector.transfer_write %{{.*}} : vector<48xf32>, tensor<1x1x48xf32>
// CHECK-NOT: vector.gather
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.*}} : tensor<8x16x48xf32>
func.func @standalone_gather(%pool: tensor<8x16x48xf32>, %table: tensor<?x?xi32>, %b: index, %t: index) -> (tensor<?x?x48xf32>, tensor<?x?x48xf32>, tensor<?x?x16xf32>) {
  %c16 = arith.constant 16 : index
  %init = tensor.empty(%b, %t) : tensor<?x?x48xf32>
  %g = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%init : tensor<?x?x48xf32>) {
  ^bb0(%out: f32):
    %bi = linalg.index 0 : index
    %ti = linalg.index 1 : index
    %d = linalg.index 2 : index
    %p = arith.divui %ti, %c16 : index
    %slot = arith.remui %ti, %c16 : index
    %entry = tensor.extract %table[%bi, %p] : tensor<?x?xi32>
    %page = arith.index_cast %entry : i32 to index
    %x = tensor.extract %pool[%page, %slot, %d] : tensor<8x16x48xf32>
    linalg.yield %x : f32
  } -> tensor<?x?x48xf32>
  %s = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g : tensor<?x?x48xf32>) outs(%init : tensor<?x?x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %in, %two : f32
    linalg.yield %y : f32
  } -> tensor<?x?x48xf32>
  %init2 = tensor.empty(%b, %t) : tensor<?x?x16xf32>
  %col = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%init2 : tensor<?x?x16xf32>) {
  ^bb0(%out: f32):
    %ti = linalg.index 1 : index
    %d = linalg.index 2 : index
    %c1 = arith.constant 1 : index
    %x = tensor.extract %pool[%c1, %d, %ti] : tensor<8x16x48xf32>
    linalg.yield %x : f32
  } -> tensor<?x?x16xf32>
  return %g, %s, %col : tensor<?x?x48xf32>, tensor<?x?x48xf32>, tensor<?x?x16xf32>
}
