// RUN: mnemo-opt %s | mnemo-opt | FileCheck %s
// RUN: mnemo-opt %s --mlir-print-op-generic | mnemo-opt | FileCheck %s

// Checks that mnemo.mla_attention and its form attribute survive
// print → parse → print in both the custom and the generic form.

// CHECK-LABEL: func.func @mla_prefill
func.func @mla_prefill(%qn: tensor<2x4x16x32xf32>, %qp: tensor<2x4x16x16xf32>,
    %c: tensor<2x16x24xf32>, %kp: tensor<2x16x16xf32>,
    %wk: tensor<4x32x24xf32>, %wv: tensor<4x40x24xf32>) -> tensor<2x4x16x40xf32> {
  // CHECK: mnemo.mla_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x16x32xf32>, tensor<2x4x16x16xf32>, tensor<2x16x24xf32>, tensor<2x16x16xf32>, tensor<4x32x24xf32>, tensor<4x40x24xf32> -> tensor<2x4x16x40xf32>
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv
      : tensor<2x4x16x32xf32>, tensor<2x4x16x16xf32>, tensor<2x16x24xf32>,
        tensor<2x16x16xf32>, tensor<4x32x24xf32>, tensor<4x40x24xf32>
      -> tensor<2x4x16x40xf32>
  return %o : tensor<2x4x16x40xf32>
}

// CHECK-LABEL: func.func @mla_decode_every_option
func.func @mla_decode_every_option(%qn: tensor<?x8x1x16xbf16>,
    %qp: tensor<?x8x1x8xbf16>, %c: tensor<?x?x32xbf16>,
    %kp: tensor<?x?x8xbf16>, %wk: tensor<8x16x32xbf16>,
    %wv: tensor<8x16x32xbf16>, %past: index) -> tensor<?x8x1x16xbf16> {
  // CHECK: mnemo.mla_attention {{.+}} causal scale(1.250000e-01) q_offset(%{{.+}}) form(absorbed) : tensor<?x8x1x16xbf16>, tensor<?x8x1x8xbf16>, tensor<?x?x32xbf16>, tensor<?x?x8xbf16>, tensor<8x16x32xbf16>, tensor<8x16x32xbf16> -> tensor<?x8x1x16xbf16>
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal scale(0.125)
      q_offset(%past) form(absorbed)
      : tensor<?x8x1x16xbf16>, tensor<?x8x1x8xbf16>, tensor<?x?x32xbf16>,
        tensor<?x?x8xbf16>, tensor<8x16x32xbf16>, tensor<8x16x32xbf16>
      -> tensor<?x8x1x16xbf16>
  return %o : tensor<?x8x1x16xbf16>
}

// CHECK-LABEL: func.func @mla_expanded_form
func.func @mla_expanded_form(%qn: tensor<1x2x5x8xf32>, %qp: tensor<1x2x5x4xf32>,
    %c: tensor<1x5x6xf32>, %kp: tensor<1x5x4xf32>, %wk: tensor<2x8x6xf32>,
    %wv: tensor<2x8x6xf32>) -> tensor<1x2x5x8xf32> {
  // CHECK: mnemo.mla_attention {{.+}} causal form(expanded) :
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal form(expanded)
      : tensor<1x2x5x8xf32>, tensor<1x2x5x4xf32>, tensor<1x5x6xf32>,
        tensor<1x5x4xf32>, tensor<2x8x6xf32>, tensor<2x8x6xf32>
      -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}
