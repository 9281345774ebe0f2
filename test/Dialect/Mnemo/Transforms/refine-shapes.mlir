// RUN: mnemo-opt %s --mnemo-refine-shapes --canonicalize | FileCheck %s

// A model specialized to one input shape: the casts that dropped the sizes
// are looked through, each op gets the static result its operands imply,
// and the consumers (mnemo ops and the generic ops alike) see it.
// CHECK-LABEL: func.func @decoder_layer
// CHECK: %[[E:.*]] = mnemo.embedding {{.*}} -> tensor<1x7x64xf32>
// CHECK: %[[N:.*]] = mnemo.rms_norm %[[E]], {{.*}} -> tensor<1x7x64xf32>
// CHECK: %[[G:.*]] = mnemo.linear %[[N]], {{.*}} -> tensor<1x7x96xf32>
// CHECK: %[[U:.*]] = mnemo.linear %[[N]], {{.*}} -> tensor<1x7x96xf32>
// CHECK: %[[S:.*]] = mnemo.swiglu %[[G]], %[[U]] : tensor<1x7x96xf32>
// CHECK: %[[D:.*]] = mnemo.linear %[[S]], {{.*}} : tensor<1x7x96xf32>, tensor<64x96xbf16> -> tensor<1x7x64xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[D]] : tensor<1x7x64xf32> to tensor<?x?x64xf32>
// CHECK: return %[[C]]
func.func @decoder_layer(%ids: tensor<1x7xi64>, %t: tensor<100x64xf32>, %n: tensor<64xf32>,
                         %wg: tensor<96x64xbf16>, %wu: tensor<96x64xbf16>,
                         %wd: tensor<64x96xbf16>) -> tensor<?x?x64xf32> {
  %i = tensor.cast %ids : tensor<1x7xi64> to tensor<?x?xi64>
  %e = mnemo.embedding %t[%i] : tensor<100x64xf32>, tensor<?x?xi64> -> tensor<?x?x64xf32>
  %x = mnemo.rms_norm %e, %n eps(1.0e-05) : tensor<?x?x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  %g = mnemo.linear %x, %wg layout(out_in) : tensor<?x?x64xf32>, tensor<96x64xbf16> -> tensor<?x?x96xf32>
  %u = mnemo.linear %x, %wu layout(out_in) : tensor<?x?x64xf32>, tensor<96x64xbf16> -> tensor<?x?x96xf32>
  %s = mnemo.swiglu %g, %u : tensor<?x?x96xf32>
  %d = mnemo.linear %s, %wd layout(out_in) : tensor<?x?x96xf32>, tensor<64x96xbf16> -> tensor<?x?x64xf32>
  return %d : tensor<?x?x64xf32>
}

// Attention takes Q's leading sizes and V's head dim; rope keeps its
// input's shape. Only one operand of swiglu is static: both are cast.
// CHECK-LABEL: func.func @attention_rope
// CHECK: mnemo.rope {{.*}} -> tensor<2x4x9x32xf32>
// CHECK: mnemo.attention {{.*}} -> tensor<2x4x9x16xf32>
// CHECK: mnemo.swiglu {{.*}} : tensor<2x4x9x16xf32>
func.func @attention_rope(%q: tensor<2x4x9x32xf32>, %k: tensor<2x2x11x32xf32>,
                          %v: tensor<2x2x11x16xf32>, %pos: tensor<2x9xi64>,
                          %other: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %qd = tensor.cast %q : tensor<2x4x9x32xf32> to tensor<?x4x?x32xf32>
  %r = mnemo.rope %qd, %pos theta(10000.0) : tensor<?x4x?x32xf32>, tensor<2x9xi64> -> tensor<?x4x?x32xf32>
  %a = mnemo.attention %r, %k, %v causal : tensor<?x4x?x32xf32>, tensor<2x2x11x32xf32>, tensor<2x2x11x16xf32> -> tensor<?x4x?x16xf32>
  %s = mnemo.swiglu %a, %other : tensor<?x4x?x16xf32>
  return %s : tensor<?x4x?x16xf32>
}

// Dynamic sizes that nothing fixes stay dynamic.
// CHECK-LABEL: func.func @stays_dynamic
// CHECK: mnemo.rms_norm {{.*}} -> tensor<?x64xf32>
func.func @stays_dynamic(%x: tensor<?x64xf32>, %n: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// Sizes the result type left dynamic come from the weight and the table.
// CHECK-LABEL: func.func @from_weights
// CHECK: mnemo.embedding {{.*}} -> tensor<3x32xf32>
// CHECK: mnemo.linear {{.*}} -> tensor<3x96xf32>
func.func @from_weights(%ids: tensor<3xi64>, %t: tensor<100x32xf32>, %w: tensor<96x32xbf16>) -> tensor<?x?xf32> {
  %e = mnemo.embedding %t[%ids] : tensor<100x32xf32>, tensor<3xi64> -> tensor<?x?xf32>
  %y = mnemo.linear %e, %w layout(out_in) : tensor<?x?xf32>, tensor<96x32xbf16> -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// rope_tables (what the ONNX importer makes of RotaryEmbedding) keeps its
// input's shape: a decode step's one query row reaches the attention.
// CHECK-LABEL: func.func @rope_tables_decode
// CHECK: %[[R:.*]] = mnemo.rope_tables {{.*}} -> tensor<?x4x1x32xf32>
// CHECK: mnemo.attention %[[R]], {{.*}} -> tensor<?x4x1x32xf32>
func.func @rope_tables_decode(%q: tensor<?x4x1x32xf32>, %cos: tensor<?x?x16xf32>,
                              %sin: tensor<?x?x16xf32>, %k: tensor<?x2x?x32xf32>,
                              %v: tensor<?x2x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %c = tensor.cast %q : tensor<?x4x1x32xf32> to tensor<?x4x?x32xf32>
  %r = mnemo.rope_tables %c, %cos, %sin : tensor<?x4x?x32xf32>, tensor<?x?x16xf32> -> tensor<?x4x?x32xf32>
  %o = mnemo.attention %r, %k, %v scale(0.25) : tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}
