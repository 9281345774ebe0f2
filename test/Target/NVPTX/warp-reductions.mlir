// RUN: mnemo-opt %s --mnemo-gpu-warp-reductions --canonicalize --cse | FileCheck %s

// A row sum over a contiguous last dimension (a norm's sum of squares):
// one output a warp, 15 outputs in 2 blocks of 8 warps; each lane walks
// the 100 entries from its lane index in steps of 32 with the partial in a
// register, five xor shuffles sum the lanes, and lane 0 adds the output's
// initial value and stores.
// CHECK-LABEL: func.func @row_sum
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C2]], {{.*}}) threads(%[[TID:[^,]*]], {{.*}}) in ({{.*}} = %[[C256]],
// CHECK:   %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[WARP:.*]], %c15
// CHECK:   %[[LEN:.*]] = arith.select %[[IN]], %c100, %c0
// CHECK:   %[[SUM:.*]] = scf.for %[[R:.*]] = %[[LANE]] to %[[LEN]] step %c32 iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK:     %[[X:.*]] = memref.load %arg0[{{.*}}, {{.*}}, %[[R]]]
// CHECK:     %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK:     %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK:     scf.yield %[[NEXT]]
// CHECK:   gpu.shuffle  xor %[[SUM]], %c16_i32, %c32_i32
// CHECK:   gpu.shuffle  xor {{.*}}, %c8_i32
// CHECK:   gpu.shuffle  xor {{.*}}, %c4_i32
// CHECK:   gpu.shuffle  xor {{.*}}, %c2_i32
// CHECK:   %[[S1:.*]], %{{.*}} = gpu.shuffle  xor {{.*}}, %c1_i32
// CHECK:   %[[TOTAL:.*]] = arith.addf
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:   %[[WRITE:.*]] = arith.andi %[[IN]], %[[FIRST]]
// CHECK:   scf.if %[[WRITE]] {
// CHECK:     %[[OLD:.*]] = memref.load %arg1
// CHECK:     %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK:     memref.store %[[NEW]], %arg1
// CHECK-NOT: linalg.generic
func.func @row_sum(%x: memref<3x5x100xf32>, %s: memref<3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<3x5x100xf32>) outs(%s : memref<3x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return
}

// A linear layer over a [K, N] weight, (m, n, k) after
// mnemo-gpu-reductions-innermost: the weight's last dimension is the
// innermost parallel loop, so a warp holds 8 consecutive outputs (one
// 32-byte sector of f32) and splits each one's 128 products into 4
// slices: steps of 4, two shuffles (16 and 8). 2 x 344 outputs: 86 warps,
// 11 blocks.
// CHECK-LABEL: func.func @linear_in_out
// CHECK-DAG: %[[C11:.*]] = arith.constant 11 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C11]],
// CHECK:   scf.for {{.*}} step %c4 iter_args
// CHECK:     arith.mulf
// CHECK:     arith.addf
// CHECK:   gpu.shuffle  xor {{.*}}, %c16_i32
// CHECK:   gpu.shuffle  xor {{.*}}, %c8_i32
// CHECK-NOT: gpu.shuffle
// CHECK:   scf.if
func.func @linear_in_out(%x: memref<2x128xf32>, %w: memref<128x344xf32>,
                         %y: memref<2x344xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x128xf32>, memref<128x344xf32>) outs(%y : memref<2x344xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A row max of dynamic size over two reduction loops: their linearized
// index is split back into both, the partials start from -inf (not
// maxnumf's NaN, which nnan rules out), and the combiner (with its
// fast-math flags) is the generic's own. The output's value is folded in
// last: linalg.index reads the loop indices.
// CHECK-LABEL: func.func @dynamic_max
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gpu.launch
// CHECK:   scf.for {{.*}} step %c32 iter_args({{.*}} = %[[NINF]])
// CHECK:     arith.remui
// CHECK:     arith.divui
// CHECK:     memref.load %arg0
// CHECK:     arith.index_cast
// CHECK:     arith.maxnumf {{.*}} fastmath<nnan> : f32
// CHECK:   gpu.shuffle  xor
// CHECK:   arith.maxnumf {{.*}} fastmath<nnan> : f32
func.func @dynamic_max(%x: memref<?x?x?xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<?x?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %j = linalg.index 2 : index
    %i = arith.index_cast %j : index to i32
    %f = arith.sitofp %i : i32 to f32
    %v = arith.addf %a, %f : f32
    %r = arith.maxnumf %acc, %v fastmath<nnan> : f32
    linalg.yield %r : f32
  }
  return
}

// A named op (linalg.reduce, a row max with maximumf): the same kernel.
// CHECK-LABEL: func.func @named_reduce
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gpu.launch
// CHECK:   scf.for {{.*}} step %c32 iter_args({{.*}} = %[[NINF]])
// CHECK:     arith.maximumf
// CHECK:   gpu.shuffle  xor
// CHECK-NOT: linalg.reduce
func.func @named_reduce(%x: memref<7x1000xf32>, %m: memref<7xf32>) {
  linalg.reduce ins(%x : memref<7x1000xf32>) outs(%m : memref<7xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  return
}

// An integer sum: the partials drop the combiner's no-wrap flags (a
// reassociated partial may wrap where the loop's order did not).
// CHECK-LABEL: func.func @int_sum
// CHECK: gpu.launch
// CHECK-NOT: overflow<nsw>
// CHECK: arith.addi
// CHECK-NOT: overflow<nsw>
// CHECK: return
func.func @int_sum(%x: memref<4x96xi32>, %s: memref<4xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x96xi32>) outs(%s : memref<4xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %r = arith.addi %acc, %a overflow<nsw> : i32
    linalg.yield %r : i32
  }
  return
}

// Left to mnemo-gpu-launch-loops: a reduction of 16, a body that is no
// single combiner (a subtraction), a 16-bit accumulator, an output read
// by more than the combiner, an output map without a parallel loop (two
// rows into one element), the output's buffer as an input, and a generic
// inside a tile loop.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic
func.func @unchanged(%short: memref<8x16xf32>, %s: memref<8xf32>,
                     %x: memref<8x64xf32>, %h: memref<8x64xbf16>,
                     %hs: memref<8xbf16>, %one: memref<1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%one : memref<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %s : memref<8x64xf32>, memref<8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.subf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<8x64xbf16>) outs(%hs : memref<8xbf16>) {
  ^bb0(%a: bf16, %acc: bf16):
    %r = arith.addf %acc, %a : bf16
    linalg.yield %r : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %acc, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  scf.forall (%t) in (2) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<8x64xf32>) outs(%s : memref<8xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    }
  }
  return
}

// Two norms' sums of squares as bufferized: one zero fill, copied for the
// first sum and written in place by the second. Both start from the
// constant (no load of the output), and the fill and the copy, whose
// values nobody else reads, are gone.
// CHECK-LABEL: func.func @filled_sums
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch
// CHECK:   scf.if
// CHECK-NEXT: %[[T1:.*]] = arith.addf %{{.*}}, %cst
// CHECK-NEXT: memref.store %[[T1]], %[[B:.*]][
// CHECK: gpu.launch
// CHECK:   scf.if
// CHECK-NEXT: %[[T2:.*]] = arith.addf %{{.*}}, %cst
// CHECK-NEXT: memref.store %[[T2]], %[[A:.*]][
// CHECK: return %[[B]], %[[A]]
func.func @filled_sums(%x: memref<?x64xf32>, %y: memref<?x64xf32>)
    -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?xf32>)
  %b = memref.alloc(%n) : memref<?xf32>
  linalg.copy ins(%a : memref<?xf32>) outs(%b : memref<?xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x64xf32>) outs(%a : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return %b, %a : memref<?xf32>, memref<?xf32>
}

// The output read between the fill and the sum (here by a copy that
// stays), a fill of a value that is not a constant, and a buffer that is
// an argument: each sum loads its output's initial value, and the fills
// stay.
// CHECK-LABEL: func.func @unknown_inits
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: gpu.launch
// CHECK:   %[[OLD1:.*]] = memref.load %[[A:.*]][
// CHECK:   arith.addf %[[OLD1]]
// CHECK: linalg.fill
// CHECK: gpu.launch
// CHECK:   memref.load %{{.*}}[
// CHECK:   arith.addf
// CHECK: gpu.launch
// CHECK:   memref.load %arg2[
func.func @unknown_inits(%x: memref<?x64xf32>, %init: f32,
                         %arg: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<?xf32>)
  %keep = memref.alloc(%n) : memref<?xf32>
  linalg.copy ins(%a : memref<?xf32>) outs(%keep : memref<?xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%a : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%init : f32) outs(%b : memref<?xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%arg : memref<?xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xf32>) outs(%arg : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  return %a, %b, %keep : memref<?xf32>, memref<?xf32>, memref<?xf32>
}
