// RUN: mnemo-opt %s --mnemo-attend-over-pages="paged-attention=true" --canonicalize | FileCheck %s
// RUN: mnemo-opt %s --mnemo-attend-over-pages | FileCheck %s --check-prefix=GEN

// A decode step as an ONNX decoder with past key/values computes it: each
// past right-aligned from the pools, concatenated with the new token, the
// graph's mask, the new keys and values written after the attention. The
// writes move before it and the attention reads the pools they return: a
// paged attention whose mask is the graph's read at column
// t + T - cached[b], over max(cached, 1 + position) tokens. The gathers
// and concats are gone.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: mnemo.kv_cache_gather
// CHECK: %[[KW:.*]] = mnemo.kv_cache_write %arg1 into %arg3 at %arg7 table %arg5
// CHECK: %[[VW:.*]] = mnemo.kv_cache_write %arg2 into %arg4 at %arg7 table %arg5
// CHECK: %[[MASK:.*]] = linalg.generic
// CHECK: tensor.extract %arg6
// CHECK: arith.subi
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %arg8
// CHECK: %[[LENS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg7 : tensor<?x1xi64>) outs(%arg6 : tensor<?xi64>)
// CHECK: mnemo.paged_attention %arg0, %[[KW]], %[[VW]] table %arg5 lengths %[[LENS]] positions %arg7 scale(4.000000e-01) mask(%[[MASK]] : tensor<?x1x1x?xf32>)
// CHECK-NOT: mnemo.attention
// CHECK-NOT: tensor.insert_slice
// Without the option the gathers become generics (concatenated below by
// mnemo-generate-concats) and the attention stays.
// GEN-LABEL: func.func @decode
// GEN-NOT: mnemo.kv_cache_gather
// GEN: linalg.generic
// GEN: mnemo.attention
func.func @decode(%q: tensor<?x4x1x8xf32>, %knew: tensor<?x2x1x8xf32>, %vnew: tensor<?x2x1x8xf32>,
                  %kp: tensor<10x2x4x8xf32>, %vp: tensor<10x2x4x8xf32>, %t: tensor<?x?xi32>,
                  %l: tensor<?xi64>, %p: tensor<?x1xi64>, %m: tensor<?x1x1x?xf32>)
    -> (tensor<?x4x1x8xf32>, tensor<10x2x4x8xf32>, tensor<10x2x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ps = arith.constant 4 : index
  %b = tensor.dim %t, %c0 : tensor<?x?xi32>
  %w = tensor.dim %t, %c1 : tensor<?x?xi32>
  %n = arith.muli %w, %ps : index
  %kpast = mnemo.kv_cache_gather %kp table %t lengths %l tokens %n : tensor<10x2x4x8xf32>, tensor<?x?xi32>, tensor<?xi64> -> tensor<?x2x?x8xf32>
  %vpast = mnemo.kv_cache_gather %vp table %t lengths %l tokens %n : tensor<10x2x4x8xf32>, tensor<?x?xi32>, tensor<?xi64> -> tensor<?x2x?x8xf32>
  // The importer reads the concat's offset off one past for both.
  %c2 = arith.constant 2 : index
  %split = tensor.dim %kpast, %c2 : tensor<?x2x?x8xf32>
  %all = arith.addi %n, %c1 : index
  %e = tensor.empty(%b, %all) : tensor<?x2x?x8xf32>
  %k0 = tensor.insert_slice %kpast into %e[0, 0, 0, 0] [%b, 2, %n, 8] [1, 1, 1, 1] : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32>
  %k = tensor.insert_slice %knew into %k0[0, 0, %n, 0] [%b, 2, 1, 8] [1, 1, 1, 1] : tensor<?x2x1x8xf32> into tensor<?x2x?x8xf32>
  %v0 = tensor.insert_slice %vpast into %e[0, 0, 0, 0] [%b, 2, %n, 8] [1, 1, 1, 1] : tensor<?x2x?x8xf32> into tensor<?x2x?x8xf32>
  %v = tensor.insert_slice %vnew into %v0[0, 0, %split, 0] [%b, 2, 1, 8] [1, 1, 1, 1] : tensor<?x2x1x8xf32> into tensor<?x2x?x8xf32>
  %o = mnemo.attention %q, %k, %v scale(0.4) mask(%m : tensor<?x1x1x?xf32>) : tensor<?x4x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x1x8xf32>
  %kw = mnemo.kv_cache_write %knew into %kp at %p table %t : tensor<?x2x1x8xf32>, tensor<10x2x4x8xf32>, tensor<?x1xi64>, tensor<?x?xi32> -> tensor<10x2x4x8xf32>
  %vw = mnemo.kv_cache_write %vnew into %vp at %p table %t : tensor<?x2x1x8xf32>, tensor<10x2x4x8xf32>, tensor<?x1xi64>, tensor<?x?xi32> -> tensor<10x2x4x8xf32>
  return %o, %kw, %vw : tensor<?x4x1x8xf32>, tensor<10x2x4x8xf32>, tensor<10x2x4x8xf32>
}

// An attention with its own causality is not the concat's alone: it stays,
// over the generated past.
// CHECK-LABEL: func.func @causal
// CHECK-NOT: mnemo.paged_attention
// CHECK: mnemo.attention
func.func @causal(%q: tensor<?x4x1x8xf32>, %knew: tensor<?x2x1x8xf32>,
                  %kp: tensor<10x2x4x8xf32>, %t: tensor<?x?xi32>, %l: tensor<?xi64>,
                  %p: tensor<?x1xi64>) -> (tensor<?x4x1x8xf32>, tensor<10x2x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 12 : index
  %b = tensor.dim %t, %c0 : tensor<?x?xi32>
  %kpast = mnemo.kv_cache_gather %kp table %t lengths %l tokens %n : tensor<10x2x4x8xf32>, tensor<?x?xi32>, tensor<?xi64> -> tensor<?x2x12x8xf32>
  %e = tensor.empty(%b) : tensor<?x2x13x8xf32>
  %k0 = tensor.insert_slice %kpast into %e[0, 0, 0, 0] [%b, 2, 12, 8] [1, 1, 1, 1] : tensor<?x2x12x8xf32> into tensor<?x2x13x8xf32>
  %k = tensor.insert_slice %knew into %k0[0, 0, 12, 0] [%b, 2, 1, 8] [1, 1, 1, 1] : tensor<?x2x1x8xf32> into tensor<?x2x13x8xf32>
  %o = mnemo.attention %q, %k, %k causal : tensor<?x4x1x8xf32>, tensor<?x2x13x8xf32>, tensor<?x2x13x8xf32> -> tensor<?x4x1x8xf32>
  %kw = mnemo.kv_cache_write %knew into %kp at %p table %t : tensor<?x2x1x8xf32>, tensor<10x2x4x8xf32>, tensor<?x1xi64>, tensor<?x?xi32> -> tensor<10x2x4x8xf32>
  return %o, %kw : tensor<?x4x1x8xf32>, tensor<10x2x4x8xf32>
}
