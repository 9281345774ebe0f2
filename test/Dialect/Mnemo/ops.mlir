// RUN: mnemo-opt %s | mnemo-opt | FileCheck %s
// RUN: mnemo-opt %s --mlir-print-op-generic | mnemo-opt | FileCheck %s

// Checks that every op and attribute of the dialect survives print → parse
// → print in both the custom and the generic form.

// CHECK-LABEL: func.func @attention_mha
func.func @attention_mha(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>,
                         %v: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  // CHECK: mnemo.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x16x32xf32>
  %o = mnemo.attention %q, %k, %v
      : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
      -> tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}

// CHECK-LABEL: func.func @attention_gqa_every_option
func.func @attention_gqa_every_option(
    %q: tensor<1x8x3x64xbf16>, %k: tensor<1x2x?x64xbf16>,
    %v: tensor<1x2x?x48xbf16>, %m: tensor<3x?xf32>, %s: tensor<8xf32>,
    %off: index) -> tensor<1x8x3x48xbf16> {
  // CHECK: mnemo.attention %{{.+}}, %{{.+}}, %{{.+}} causal window(16) scale(1.250000e-01) softcap(5.000000e+01) mask(%{{.+}} : tensor<3x?xf32>) sink(%{{.+}} : tensor<8xf32>) q_offset(%{{.+}}) : tensor<1x8x3x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x48xbf16> -> tensor<1x8x3x48xbf16>
  %o = mnemo.attention %q, %k, %v causal window(16) scale(0.125) softcap(50.0)
      mask(%m : tensor<3x?xf32>) sink(%s : tensor<8xf32>) q_offset(%off)
      : tensor<1x8x3x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x48xbf16>
      -> tensor<1x8x3x48xbf16>
  return %o : tensor<1x8x3x48xbf16>
}

// CHECK-LABEL: func.func @attention_mqa_dynamic_batch
func.func @attention_mqa_dynamic_batch(%q: tensor<?x4x?x40xf16>,
    %k: tensor<?x1x?x40xf16>, %v: tensor<?x1x?x40xf16>) -> tensor<?x4x?x40xf16> {
  // CHECK: mnemo.attention {{.+}} causal : tensor<?x4x?x40xf16>, tensor<?x1x?x40xf16>
  %o = mnemo.attention %q, %k, %v causal
      : tensor<?x4x?x40xf16>, tensor<?x1x?x40xf16>, tensor<?x1x?x40xf16>
      -> tensor<?x4x?x40xf16>
  return %o : tensor<?x4x?x40xf16>
}

// CHECK-LABEL: func.func @rope_forms
func.func @rope_forms(%x: tensor<2x4x16x64xf32>, %p: tensor<2x16xi64>,
                      %p1: tensor<16xi32>) -> tensor<2x4x16x64xf32> {
  // CHECK: mnemo.rope %{{.+}}, %{{.+}} theta(1.000000e+04) : tensor<2x4x16x64xf32>, tensor<2x16xi64> -> tensor<2x4x16x64xf32>
  %a = mnemo.rope %x, %p theta(10000.0)
      : tensor<2x4x16x64xf32>, tensor<2x16xi64> -> tensor<2x4x16x64xf32>
  // CHECK: mnemo.rope {{.+}} theta(5.000000e+05) interleaved rotary_dim(32) scaling(<linear, factor = 2.000000e+00>)
  %b = mnemo.rope %a, %p1 theta(500000.0) interleaved rotary_dim(32)
      scaling(<linear, factor = 2.0>)
      : tensor<2x4x16x64xf32>, tensor<16xi32> -> tensor<2x4x16x64xf32>
  // CHECK: scaling(<dynamic, factor = 2.000000e+00, original_max_position = 2048>)
  %c = mnemo.rope %b, %p theta(10000.0)
      scaling(<dynamic, factor = 2.0, original_max_position = 2048>)
      : tensor<2x4x16x64xf32>, tensor<2x16xi64> -> tensor<2x4x16x64xf32>
  // CHECK: scaling(<yarn, factor = 4.000000e+00, original_max_position = 4096, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, attention_factor = 1.100000e+00, truncate = false>)
  %d = mnemo.rope %c, %p theta(10000.0)
      scaling(<yarn, factor = 4.0, original_max_position = 4096,
               attention_factor = 1.1, truncate = false>)
      : tensor<2x4x16x64xf32>, tensor<2x16xi64> -> tensor<2x4x16x64xf32>
  // CHECK: scaling(<llama3, factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>)
  %e = mnemo.rope %d, %p theta(500000.0)
      scaling(<llama3, factor = 8.0, original_max_position = 8192,
               low_freq_factor = 1.0, high_freq_factor = 4.0>)
      : tensor<2x4x16x64xf32>, tensor<2x16xi64> -> tensor<2x4x16x64xf32>
  return %e : tensor<2x4x16x64xf32>
}

// CHECK-LABEL: func.func @rope_tables_forms
func.func @rope_tables_forms(%x: tensor<2x4x?x64xf32>, %c: tensor<1x?x64xf32>,
                             %s: tensor<1x?x64xf32>, %c2: tensor<?x32xf32>,
                             %s2: tensor<?x32xf32>) -> tensor<2x4x?x64xf32> {
  // CHECK: mnemo.rope_tables %{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x?x64xf32>, tensor<1x?x64xf32> -> tensor<2x4x?x64xf32>
  %a = mnemo.rope_tables %x, %c, %s
      : tensor<2x4x?x64xf32>, tensor<1x?x64xf32> -> tensor<2x4x?x64xf32>
  // CHECK: mnemo.rope_tables %{{.+}}, %{{.+}}, %{{.+}} interleaved : tensor<2x4x?x64xf32>, tensor<?x32xf32> -> tensor<2x4x?x64xf32>
  %b = mnemo.rope_tables %a, %c2, %s2 interleaved
      : tensor<2x4x?x64xf32>, tensor<?x32xf32> -> tensor<2x4x?x64xf32>
  return %b : tensor<2x4x?x64xf32>
}

// CHECK-LABEL: func.func @layers
func.func @layers(%ids: tensor<2x?xi64>, %table: tensor<256x128xf32>,
                  %w: tensor<128xf32>, %wg: tensor<344x128xf32>,
                  %wu: tensor<128x344xf32>, %b: tensor<344xf32>)
    -> tensor<2x?x344xf32> {
  // CHECK: mnemo.embedding %{{.+}}[%{{.+}}] : tensor<256x128xf32>, tensor<2x?xi64> -> tensor<2x?x128xf32>
  %h = mnemo.embedding %table[%ids]
      : tensor<256x128xf32>, tensor<2x?xi64> -> tensor<2x?x128xf32>
  // CHECK: mnemo.rms_norm %{{.+}}, %{{.+}} eps(9.9999999999999995E-7) unit_offset
  %n = mnemo.rms_norm %h, %w eps(1.0e-6) unit_offset
      : tensor<2x?x128xf32>, tensor<128xf32> -> tensor<2x?x128xf32>
  // CHECK: mnemo.linear %{{.+}}, %{{.+}} layout(out_in) : tensor<2x?x128xf32>, tensor<344x128xf32> -> tensor<2x?x344xf32>
  %g = mnemo.linear %n, %wg layout(out_in)
      : tensor<2x?x128xf32>, tensor<344x128xf32> -> tensor<2x?x344xf32>
  // CHECK: mnemo.linear %{{.+}}, %{{.+}} layout(in_out) bias(%{{.+}} : tensor<344xf32>)
  %u = mnemo.linear %n, %wu layout(in_out) bias(%b : tensor<344xf32>)
      : tensor<2x?x128xf32>, tensor<128x344xf32> -> tensor<2x?x344xf32>
  // CHECK: mnemo.swiglu %{{.+}}, %{{.+}} : tensor<2x?x344xf32>
  %s = mnemo.swiglu %g, %u : tensor<2x?x344xf32>
  // CHECK: mnemo.swiglu %{{.+}}, %{{.+}} limit(1.000000e+01) : tensor<2x?x344xf32>
  %c = mnemo.swiglu %g, %u limit(10.0) : tensor<2x?x344xf32>
  return %s : tensor<2x?x344xf32>
}
