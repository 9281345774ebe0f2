// RUN: mnemo-opt %s --mnemo-chunk-indexer-top-k=head-rows=64 | FileCheck %s
// RUN: mnemo-opt %s --mnemo-chunk-indexer-top-k | FileCheck %s --check-prefix=OFF

// A prefill's indexer (4 heads) and its top-k by chunks of 64 / 4 = 16
// query rows: an scf.forall over (sequence, chunk), each iteration the two
// ops on its rows, the keys and lengths of its sequence, its listings
// inserted at (b, s0).
// CHECK-LABEL: func.func @prefill
// CHECK: %[[CHUNKS:.+]] = arith.ceildivsi %{{.+}}, %c16
// CHECK: scf.forall (%[[B:.+]], %[[C:.+]]) in (%{{.+}}, %[[CHUNKS]]) shared_outs(%[[OUT:.+]] =
// CHECK: %[[S0:.+]] = arith.muli %[[C]], %c16
// CHECK: %[[N:.+]] = arith.minsi %c16
// CHECK: tensor.extract_slice %arg0[%[[B]], %[[S0]], 0, 0] [1, %[[N]], 4, 32]
// CHECK: tensor.extract_slice %arg1[%[[B]], 0, 0] [1, %{{.+}}, 32]
// CHECK: %[[L:.+]] = tensor.extract_slice %arg4[%[[B]]] [1]
// CHECK: %[[S:.+]] = mnemo.lightning_indexer {{.*}} lengths(%[[L]] : tensor<1xi64>) causal : tensor<1x?x4x32xf32>
// CHECK: %[[I:.+]] = mnemo.top_k %[[S]] lengths(%[[L]] : tensor<1xi64>) k(8) ties(introselect)
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[I]] into %[[OUT]][%[[B]], %[[S0]], 0] [1, %[[N]], 8]
// OFF-LABEL: func.func @prefill
// OFF-NOT: scf.forall
func.func @prefill(%q: tensor<?x?x4x32xf32>, %k: tensor<?x?x32xf32>,
                   %w: tensor<?x?x4xf32>, %pos: tensor<?x?xi64>,
                   %len: tensor<?xi64>) -> tensor<?x?x8xi64> {
  %s = mnemo.lightning_indexer %q, %k, %w positions(%pos : tensor<?x?xi64>)
      lengths(%len : tensor<?xi64>) causal
      : tensor<?x?x4x32xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32>
      -> tensor<?x?x?xf32>
  %i = mnemo.top_k %s lengths(%len : tensor<?xi64>) k(8) ties(introselect)
      : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
  return %i : tensor<?x?x8xi64>
}

// A decode step (one static query row) stays whole.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: scf.forall
// CHECK: mnemo.top_k
func.func @decode(%q: tensor<?x1x4x32xf32>, %k: tensor<?x?x32xf32>,
                  %w: tensor<?x1x4xf32>) -> tensor<?x1x8xi64> {
  %s = mnemo.lightning_indexer %q, %k, %w
      : tensor<?x1x4x32xf32>, tensor<?x?x32xf32>, tensor<?x1x4xf32>
      -> tensor<?x1x?xf32>
  %i = mnemo.top_k %s k(8) : tensor<?x1x?xf32> -> tensor<?x1x8xi64>
  return %i : tensor<?x1x8xi64>
}

// A top-k typed with less static information than its query (batch 1
// against ?): the result is cast after the forall, not inside it.
// CHECK-LABEL: func.func @cast_result
// CHECK: %[[F:.+]] = scf.forall
// CHECK: scf.forall.in_parallel
// CHECK: tensor.cast %[[F]] : tensor<1x?x8xi64> to tensor<?x?x8xi64>
func.func @cast_result(%q: tensor<1x?x4x32xf32>, %k: tensor<1x?x32xf32>,
                       %w: tensor<1x?x4xf32>) -> tensor<?x?x8xi64> {
  %s = mnemo.lightning_indexer %q, %k, %w causal
      : tensor<1x?x4x32xf32>, tensor<1x?x32xf32>, tensor<1x?x4xf32>
      -> tensor<?x?x?xf32>
  %i = mnemo.top_k %s k(8) : tensor<?x?x?xf32> -> tensor<?x?x8xi64>
  return %i : tensor<?x?x8xi64>
}
