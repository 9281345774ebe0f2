// RUN: mnemo-opt %s --load-pass-plugin=%example_plugin \
// RUN:   --pass-pipeline="builtin.module(func.func(example-annotate-attention-cost))" \
// RUN:   --split-input-file --verify-diagnostics | FileCheck %s
// RUN: mnemo-opt %s --load-pass-plugin=%example_plugin --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(example-annotate-attention-cost{attr-name=cost}))" \
// RUN:   --verify-diagnostics | FileCheck %s --check-prefix=RENAMED

// Checks that the example plug-in loads into mnemo-opt, sees mnemo ops
// through the dialect's C++ API, and counts only visible (query, key) pairs.

// Dense: 2 * B1 * Hq4 * (8 * 8 pairs) * (D32 + Dv16) = 24576.
// CHECK-LABEL: func.func @dense
//       CHECK:   mnemo.attention {{.+}} {example.flops = 24576 : i64}
// RENAMED:     mnemo.attention {{.+}} {cost = 24576 : i64}
func.func @dense(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>,
                 %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = mnemo.attention %q, %k, %v
      : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x16xf32>
      -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Causal over 8 tokens leaves 36 pairs; with window 3 only 3*8 - 3 = 21.
// CHECK-LABEL: func.func @masked
//       CHECK:   mnemo.attention {{.+}} causal {example.flops = 13824 : i64}
//       CHECK:   mnemo.attention {{.+}} causal window(3) {example.flops = 8064 : i64}
func.func @masked(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>,
                  %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = mnemo.attention %q, %k, %v causal
      : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x16xf32>
      -> tensor<1x4x8x16xf32>
  %w = mnemo.attention %q, %k, %v causal window(3)
      : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x16xf32>
      -> tensor<1x4x8x16xf32>
  return %w : tensor<1x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic
//   CHECK-NOT:   example.flops
func.func @dynamic(%q: tensor<1x4x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                   %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  // expected-remark @+1 {{cost not annotated: dynamic shape or offset}}
  %o = mnemo.attention %q, %k, %v
      : tensor<1x4x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x16xf32>
      -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
