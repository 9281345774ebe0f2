// RUN: mnemo-opt %s | mnemo-opt | FileCheck %s
// RUN: mnemo-opt %s --mnemo-decompose-paged-cache --canonicalize | FileCheck %s --check-prefix=DEC

// The paged KV cache ops round-trip.
// CHECK-LABEL: func.func @step
// CHECK: mnemo.kv_cache_write %{{.*}} into %{{.*}} at %{{.*}} table %{{.*}} : tensor<?x2x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xbf16>
// CHECK: mnemo.paged_attention %{{.*}} table %{{.*}} lengths %{{.*}} positions %{{.*}} causal window(8) softcap(3.000000e+01)

// The write is left for bufferization (kv-cache-bufferize.mlir).
// DEC-LABEL: func.func @step
// DEC: mnemo.kv_cache_write %arg1 into %arg3 at %arg6 table %arg5
// DEC: mnemo.kv_cache_write %arg2 into %arg4 at %arg6 table %arg5
// The attention: K and V gathered through the table (f32, the query's
// type), a mask from lengths, positions, causality and window, then one
// mnemo.attention without causal or window of its own.
// DEC: linalg.generic
// DEC: arith.extf %{{.*}} : bf16 to f32
// DEC: linalg.generic
// DEC: arith.cmpi slt
// DEC: arith.cmpi sge
// DEC: arith.cmpi sle
// DEC: arith.subi
// DEC: arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// DEC: mnemo.attention %arg0, %{{.*}}, %{{.*}} scale(0.17677669529663687) softcap(3.000000e+01) mask(%{{.*}} : tensor<?x1x?x?xf32>) : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>
func.func @step(%q: tensor<?x4x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>,
                %kpool: tensor<10x2x4x32xbf16>, %vpool: tensor<10x2x4x32xbf16>,
                %table: tensor<?x?xi32>, %pos: tensor<?x?xi64>, %lens: tensor<?xi64>)
    -> tensor<?x4x?x32xf32> {
  %kp = mnemo.kv_cache_write %k into %kpool at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xbf16>
  %vp = mnemo.kv_cache_write %v into %vpool at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xbf16>
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal window(8) softcap(30.0)
      : tensor<?x4x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<?x?xi32>, tensor<?xi64>, tensor<?x?xi64> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}

// FP8 pools with their scales round-trip; the write quantizes each row per
// head (amax over D, divided by 448) and stores the row and its scales; the
// gather dequantizes with the token's scale.
// CHECK-LABEL: func.func @step_fp8
// CHECK: %{{.*}}, %{{.*}} = mnemo.kv_cache_write %{{.*}} into %{{.*}} scales %{{.*}} at
// CHECK: mnemo.paged_attention %{{.*}}, %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}} : tensor<64x2x16xf32>, tensor<64x2x16xf32>) table
// DEC-LABEL: func.func @step_fp8
// DEC: mnemo.kv_cache_write %{{.*}} into %{{.*}} scales %{{.*}} at
// DEC: linalg.generic
// DEC: arith.bitcast %{{.*}} : f8E4M3FN to i8
// DEC: arith.mulf
// DEC: mnemo.attention
func.func @step_fp8(%q: tensor<?x4x1x32xf32>, %k: tensor<?x2x1x32xf32>,
                    %kpool: tensor<64x2x16x32xf8E4M3FN>, %kscales: tensor<64x2x16xf32>,
                    %vpool: tensor<64x2x16x32xf8E4M3FN>, %vscales: tensor<64x2x16xf32>,
                    %table: tensor<?x?xi32>, %pos: tensor<?x1xi64>, %lens: tensor<?xi64>)
    -> tensor<?x4x1x32xf32> {
  %kp, %ks = mnemo.kv_cache_write %k into %kpool scales %kscales at %pos table %table
      : tensor<?x2x1x32xf32>, tensor<64x2x16x32xf8E4M3FN>, tensor<?x1xi64>, tensor<?x?xi32>, tensor<64x2x16xf32>
      -> tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16xf32>
  %o = mnemo.paged_attention %q, %kp, %vpool scales(%ks, %vscales : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<?x4x1x32xf32>, tensor<64x2x16x32xf8E4M3FN>, tensor<64x2x16x32xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x4x1x32xf32>
  return %o : tensor<?x4x1x32xf32>
}

// Selected keys (DeepSeek-V3.2's top-k) round-trip. The decomposition
// gathers the pages and attends with mnemo.sparse_attention over the
// indices that name a cached token of a query that is not padding (-1
// for the others: past the length, negative, a padding query).
// CHECK-LABEL: func.func @selected
// CHECK: mnemo.paged_attention %{{.*}} table %{{.*}} lengths %{{.*}} positions %{{.*}} scale(1.000000e-01) indices(%{{.*}} : tensor<?x1x8xi64>)
// DEC-LABEL: func.func @selected
// DEC: linalg.generic
// DEC: arith.cmpi slt
// DEC: arith.cmpi sge
// DEC: arith.cmpi sge
// DEC: arith.select %{{.*}}, %{{.*}}, %c-1_i64 : i64
// DEC: mnemo.sparse_attention %arg0, %{{.*}}, %{{.*}}, %{{.*}} scale(1.000000e-01) : tensor<?x16x1x48xf32>, tensor<?x1x?x48xf32>, tensor<?x1x?x32xf32>, tensor<?x1x8xi64> -> tensor<?x16x1x32xf32>
// DEC-NOT: mnemo.attention
func.func @selected(%q: tensor<?x16x1x48xf32>, %kpool: tensor<10x1x4x48xbf16>,
                    %table: tensor<?x?xi32>, %pos: tensor<?x1xi64>, %lens: tensor<?xi64>,
                    %idx: tensor<?x1x8xi64>) -> tensor<?x16x1x32xf32> {
  %vpool = tensor.extract_slice %kpool[0, 0, 0, 0] [10, 1, 4, 32] [1, 1, 1, 1] : tensor<10x1x4x48xbf16> to tensor<10x1x4x32xbf16>
  %o = mnemo.paged_attention %q, %kpool, %vpool table %table lengths %lens positions %pos scale(0.1) indices(%idx : tensor<?x1x8xi64>)
      : tensor<?x16x1x48xf32>, tensor<10x1x4x48xbf16>, tensor<10x1x4x32xbf16>, tensor<?x?xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x16x1x32xf32>
  return %o : tensor<?x16x1x32xf32>
}
