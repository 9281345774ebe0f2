// RUN: mnemo-opt %s --mnemo-select-mla-form | FileCheck %s

// Checks that one query row (decode) gets the absorbed form, longer or
// unknown query lengths (prefill) the expanded form, and that a form
// already chosen is kept.

// CHECK-LABEL: func.func @select
//       CHECK:   mnemo.mla_attention {{.+}} form(absorbed) : tensor<?x4x1x8xf32>
//       CHECK:   mnemo.mla_attention {{.+}} form(expanded) : tensor<?x4x?x8xf32>
//       CHECK:   mnemo.mla_attention {{.+}} form(expanded) : tensor<?x4x7x8xf32>
//       CHECK:   mnemo.mla_attention {{.+}} form(absorbed) : tensor<?x4x7x8xf32>
func.func @select(%d: tensor<?x4x1x8xf32>, %dp: tensor<?x4x1x4xf32>,
    %p: tensor<?x4x?x8xf32>, %pp: tensor<?x4x?x4xf32>,
    %s: tensor<?x4x7x8xf32>, %sp: tensor<?x4x7x4xf32>,
    %c: tensor<?x?x6xf32>, %kp: tensor<?x?x4xf32>, %wk: tensor<4x8x6xf32>,
    %wv: tensor<4x8x6xf32>)
    -> (tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x7x8xf32>,
        tensor<?x4x7x8xf32>) {
  %0 = mnemo.mla_attention %d, %dp, %c, %kp, %wk, %wv causal
      : tensor<?x4x1x8xf32>, tensor<?x4x1x4xf32>, tensor<?x?x6xf32>,
        tensor<?x?x4xf32>, tensor<4x8x6xf32>, tensor<4x8x6xf32>
      -> tensor<?x4x1x8xf32>
  %1 = mnemo.mla_attention %p, %pp, %c, %kp, %wk, %wv causal
      : tensor<?x4x?x8xf32>, tensor<?x4x?x4xf32>, tensor<?x?x6xf32>,
        tensor<?x?x4xf32>, tensor<4x8x6xf32>, tensor<4x8x6xf32>
      -> tensor<?x4x?x8xf32>
  %2 = mnemo.mla_attention %s, %sp, %c, %kp, %wk, %wv causal
      : tensor<?x4x7x8xf32>, tensor<?x4x7x4xf32>, tensor<?x?x6xf32>,
        tensor<?x?x4xf32>, tensor<4x8x6xf32>, tensor<4x8x6xf32>
      -> tensor<?x4x7x8xf32>
  %3 = mnemo.mla_attention %s, %sp, %c, %kp, %wk, %wv causal form(absorbed)
      : tensor<?x4x7x8xf32>, tensor<?x4x7x4xf32>, tensor<?x?x6xf32>,
        tensor<?x?x4xf32>, tensor<4x8x6xf32>, tensor<4x8x6xf32>
      -> tensor<?x4x7x8xf32>
  return %0, %1, %2, %3 : tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>,
      tensor<?x4x7x8xf32>, tensor<?x4x7x8xf32>
}
