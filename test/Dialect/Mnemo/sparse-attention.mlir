// RUN: mnemo-opt %s | mnemo-opt | FileCheck %s
// RUN: mnemo-opt %s --mlir-print-op-generic | mnemo-opt | FileCheck %s
// RUN: mnemo-opt %s --convert-mnemo-to-linalg | FileCheck %s --check-prefix=LOWER

// The DeepSeek sparse attention ops round-trip through the custom and the
// generic form, and lower to linalg (indexer, sparse attention) and scf
// loops (top-k).

// CHECK-LABEL: func.func @dsa
// CHECK: mnemo.lightning_indexer %{{.*}}, %{{.*}}, %{{.*}} positions(%{{.*}} : tensor<?x?xi64>) lengths(%{{.*}} : tensor<?xi64>) causal scale(2.500000e-01) : tensor<?x?x4x32xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32> -> tensor<?x?x?xf32>
// CHECK: mnemo.top_k %{{.*}} lengths(%{{.*}} : tensor<?xi64>) k(8) ties(introselect) : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
// CHECK: mnemo.top_k %{{.*}} k(8) : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
// CHECK: mnemo.sparse_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) : tensor<?x16x?x80xf32>, tensor<?x1x?x80xf32>, tensor<?x1x?x64xf32>, tensor<?x?x8xi64> -> tensor<?x16x?x64xf32>
// CHECK: mnemo.mla_attention {{.*}} indices(%{{.*}} : tensor<?x?x8xi64>) form(absorbed)

// LOWER-LABEL: func.func @dsa
// LOWER-NOT: mnemo.
// LOWER: linalg.generic
// LOWER: memref.alloc
// LOWER: scf.while
// LOWER: tensor.insert
func.func @dsa(%q: tensor<?x?x4x32xf32>, %k: tensor<?x?x32xf32>, %w: tensor<?x?x4xf32>,
               %pos: tensor<?x?xi64>, %lens: tensor<?xi64>,
               %aq: tensor<?x16x?x80xf32>, %ak: tensor<?x1x?x80xf32>, %av: tensor<?x1x?x64xf32>,
               %qn: tensor<?x16x?x64xf32>, %qp: tensor<?x16x?x16xf32>, %c: tensor<?x?x64xf32>,
               %kp: tensor<?x?x16xf32>, %wk: tensor<16x64x64xf32>, %wv: tensor<16x48x64xf32>)
    -> (tensor<?x?x8xi64>, tensor<?x16x?x64xf32>, tensor<?x16x?x48xf32>) {
  %s = mnemo.lightning_indexer %q, %k, %w positions(%pos : tensor<?x?xi64>) lengths(%lens : tensor<?xi64>) causal scale(0.25)
      : tensor<?x?x4x32xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32> -> tensor<?x?x?xf32>
  %i = mnemo.top_k %s lengths(%lens : tensor<?xi64>) k(8) ties(introselect) : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
  %j = mnemo.top_k %s k(8) : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
  %o = mnemo.sparse_attention %aq, %ak, %av, %j scale(0.125)
      : tensor<?x16x?x80xf32>, tensor<?x1x?x80xf32>, tensor<?x1x?x64xf32>, tensor<?x?x8xi64> -> tensor<?x16x?x64xf32>
  %m = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv indices(%i : tensor<?x?x8xi64>) form(absorbed)
      : tensor<?x16x?x64xf32>, tensor<?x16x?x16xf32>, tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<16x64x64xf32>, tensor<16x48x64xf32> -> tensor<?x16x?x48xf32>
  return %i, %o, %m : tensor<?x?x8xi64>, tensor<?x16x?x64xf32>, tensor<?x16x?x48xf32>
}

// Paged keys: the pool [Pages, 1, P, Di] read through a block table; the
// decomposition gathers them first.
// CHECK-LABEL: func.func @paged_keys
// CHECK: mnemo.lightning_indexer %{{.*}}, %{{.*}}, %{{.*}} positions(%{{.*}} : tensor<?x1xi64>) lengths(%{{.*}} : tensor<?xi64>) table(%{{.*}} : tensor<?x?xi32>) causal : tensor<?x1x4x32xf32>, tensor<?x1x16x32xbf16>, tensor<?x1x4xf32> -> tensor<?x1x?xf32>
// LOWER-LABEL: func.func @paged_keys
// LOWER-NOT: mnemo.
// LOWER: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<?x?xi32>
// LOWER: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<?x1x16x32xbf16>
// LOWER: tensor.collapse_shape
func.func @paged_keys(%q: tensor<?x1x4x32xf32>, %pool: tensor<?x1x16x32xbf16>, %w: tensor<?x1x4xf32>,
                      %pos: tensor<?x1xi64>, %lens: tensor<?xi64>, %table: tensor<?x?xi32>) -> tensor<?x1x?xf32> {
  %s = mnemo.lightning_indexer %q, %pool, %w positions(%pos : tensor<?x1xi64>) lengths(%lens : tensor<?xi64>) table(%table : tensor<?x?xi32>) causal
      : tensor<?x1x4x32xf32>, tensor<?x1x16x32xbf16>, tensor<?x1x4xf32> -> tensor<?x1x?xf32>
  return %s : tensor<?x1x?xf32>
}
