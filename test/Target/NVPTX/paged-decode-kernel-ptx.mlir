// The decode kernel (FP8 pools, sm_90a) where its rows and pages vary:
// 2 heads x 5 query tokens (rows g and g + 8 of the fragments both used),
// D 64, pages of 8 keys (a warp's 16 keys on two pages), a window, a
// softcap and sinks; and MQA's 16 heads of one KV head at D 128 / Dv 64.
// ptxas keeps three blocks a multiprocessor without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --gpu-decode-kernel --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK-DAG: mnemo.launch attention_mma grid 1 4 3 block 128 1 1 shared {{[0-9]+}} args
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 1 1 {{[0-9]+}} block 128 1 1 shared {{[0-9]+}} args
// CHECK-LABEL: .entry attention_mma(
// CHECK: .minnctapersm 3
// CHECK-DAG: cvt.rn.f16x2.e4m3x2
// CHECK-DAG: tanh.approx.f32
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-DAG: stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [[[AT:%rd[0-9]+]]]
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{[{]}}%r{{[0-9]+}}, %r{{[0-9]+}}}, [[[AT]]]
// CHECK-LABEL: .entry attention_mma_{{[0-9]+}}(
// CHECK: .minnctapersm 3
// CHECK: cvt.rn.f16x2.e4m3x2
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
func.func @rows(%q: tensor<3x8x5x64xbf16>, %kp: tensor<90x4x8x64xf8E4M3FN>,
    %vp: tensor<90x4x8x64xf8E4M3FN>, %ks: tensor<90x4x8xf32>, %vs: tensor<90x4x8xf32>,
    %table: tensor<3x30xi32>, %lens: tensor<3xi64>, %pos: tensor<3x5xi64>,
    %sink: tensor<8xf32>) -> tensor<3x8x5x64xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<90x4x8xf32>, tensor<90x4x8xf32>)
      table %table lengths %lens positions %pos causal window(100) softcap(30.0) sink(%sink : tensor<8xf32>)
      : tensor<3x8x5x64xbf16>, tensor<90x4x8x64xf8E4M3FN>, tensor<90x4x8x64xf8E4M3FN>,
        tensor<3x30xi32>, tensor<3xi64>, tensor<3x5xi64> -> tensor<3x8x5x64xbf16>
  return %o : tensor<3x8x5x64xbf16>
}

func.func @mqa(%q: tensor<4x16x1x128xbf16>, %kp: tensor<64x1x16x128xf8E4M3FN>,
    %vp: tensor<64x1x16x64xf8E4M3FN>, %ks: tensor<64x1x16xf32>, %vs: tensor<64x1x16xf32>,
    %table: tensor<4x16xi32>, %lens: tensor<4xi64>, %pos: tensor<4x1xi64>) -> tensor<4x16x1x64xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<64x1x16xf32>, tensor<64x1x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<4x16x1x128xbf16>, tensor<64x1x16x128xf8E4M3FN>, tensor<64x1x16x64xf8E4M3FN>,
        tensor<4x16xi32>, tensor<4xi64>, tensor<4x1xi64> -> tensor<4x16x1x64xbf16>
  return %o : tensor<4x16x1x64xbf16>
}
