// The decode kernel copying its FP8 pages by TMA boxes (--gpu-decode-tma):
// pages of 8 keys (two boxes a warp) at D 64 with a window, a softcap and
// sinks; MQA at D 128 / Dv 64 on pages of 16 (one box); D 32 on pages of
// 32 (a box at row 0 or 16 of its page); pages of 4 keep the cp.async
// copies. Each pool's map has the swizzle of its row's bytes (128, 64, 32),
// the scales' none; ptxas keeps three blocks a multiprocessor without
// spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --gpu-decode-tma --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK-DAG: tensormap of {{[0-9]+}} f8e4m3 dims 64x8x4x90 strides 64x512x2048 box 64x8x1x1 swizzle 64 bytes 128
// CHECK-DAG: tensormap of {{[0-9]+}} f32 dims 8x4x90 strides 32x128 box 8x1x1 swizzle 0 bytes 128
// CHECK-DAG: tensormap of {{[0-9]+}} f8e4m3 dims 128x16x1x64 strides 128x2048x2048 box 128x16x1x1 swizzle 128 bytes 128
// CHECK-DAG: tensormap of {{[0-9]+}} f8e4m3 dims 64x16x1x64 strides 64x1024x1024 box 64x16x1x1 swizzle 64 bytes 128
// CHECK-DAG: tensormap of {{[0-9]+}} f8e4m3 dims 32x32x2x40 strides 32x1024x2048 box 32x16x1x1 swizzle 32 bytes 128
// CHECK-DAG: tensormap of {{[0-9]+}} f32 dims 32x2x40 strides 128x256 box 16x1x1 swizzle 0 bytes 128

// CHECK-LABEL: .entry attention_mma(
// CHECK: .minnctapersm 3
// CHECK-NOT: cp.async.cg
// CHECK-DAG: mbarrier.init.shared.b64
// CHECK-DAG: mbarrier.arrive.expect_tx.shared.b64
// CHECK-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-DAG: mbarrier.try_wait.parity.shared.b64
// CHECK-DAG: fence.proxy.async.shared::cta
// CHECK-DAG: shfl.sync.idx.b32
// CHECK-DAG: cvt.rn.f16x2.e4m3x2
// CHECK-DAG: tanh.approx.f32
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry attention_mma_{{[0-9]+}}(
// CHECK: .minnctapersm 3
// CHECK-NOT: cp.async.cg
// CHECK: cp.async.bulk.tensor.4d
// CHECK-LABEL: .entry attention_mma_{{[0-9]+}}(
// CHECK: .minnctapersm 3
// CHECK-NOT: cp.async.cg
// CHECK: cp.async.bulk.tensor.4d
// CHECK-LABEL: .entry attention_mma_{{[0-9]+}}(
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: cp.async.cg
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

func.func @narrow(%q: tensor<2x8x1x32xbf16>, %kp: tensor<40x2x32x32xf8E4M3FN>,
    %vp: tensor<40x2x32x32xf8E4M3FN>, %ks: tensor<40x2x32xf32>, %vs: tensor<40x2x32xf32>,
    %table: tensor<2x20xi64>, %lens: tensor<2xi64>, %pos: tensor<2x1xi64>) -> tensor<2x8x1x32xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<40x2x32xf32>, tensor<40x2x32xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<2x8x1x32xbf16>, tensor<40x2x32x32xf8E4M3FN>, tensor<40x2x32x32xf8E4M3FN>,
        tensor<2x20xi64>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x8x1x32xbf16>
  return %o : tensor<2x8x1x32xbf16>
}

func.func @pages4(%q: tensor<2x8x1x64xbf16>, %kp: tensor<80x2x4x64xf8E4M3FN>,
    %vp: tensor<80x2x4x64xf8E4M3FN>, %ks: tensor<80x2x4xf32>, %vs: tensor<80x2x4xf32>,
    %table: tensor<2x40xi32>, %lens: tensor<2xi64>, %pos: tensor<2x1xi64>) -> tensor<2x8x1x64xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<80x2x4xf32>, tensor<80x2x4xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<2x8x1x64xbf16>, tensor<80x2x4x64xf8E4M3FN>, tensor<80x2x4x64xf8E4M3FN>,
        tensor<2x40xi32>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x8x1x64xbf16>
  return %o : tensor<2x8x1x64xbf16>
}
