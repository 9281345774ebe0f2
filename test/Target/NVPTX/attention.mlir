// Attention cases compile to one PTX module per model for sm_80 and sm_90a:
// one thread block per (batch, KV head, query tile), the tile's temporaries
// in per-tile slots of global buffers, never a device-side malloc. (The
// tiled path on the CUDA cores, --precision=f32; by default the f32
// attention takes the TF32 kernel, attention-kernel-tf32-ptx.mlir.)
// RUN: mnemoc %s --target=sm_90a --precision=f32 --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s < %t.sm_90a.ptx
// RUN: mnemoc %s --target=sm_80 --precision=f32 --emit=ptx | FileCheck %s --check-prefix=SM80
// The same PTX through ptxas is in ptxas.mlir.

// CHECK-LABEL: // mnemo.function gqa_causal
// CHECK-DAG: // mnemo.buffer {{[0-9]+}} input 0 bytes 37888
// CHECK-DAG: // mnemo.buffer {{[0-9]+}} input 1 bytes 9472
// CHECK-DAG: // mnemo.buffer {{[0-9]+}} input 2 bytes 9472
// Two KV heads x two query tiles of 32 rows (37 is not a tile multiple).
// CHECK: // mnemo.launch [[TILE:gqa_causal_kernel_[0-9]+]] grid 4 1 1 block 128 1 1 shared 0 args buffer:
// CHECK: // mnemo.output 0 buffer

// CHECK-LABEL: // mnemo.function decode
// One query row: one tile per (batch, KV head).
// CHECK: // mnemo.launch {{decode_kernel_[0-9]+}} grid 4 1 1 block 128 1 1

// CHECK-LABEL: // mnemo.function window_dv
// CHECK: // mnemo.launch {{window_dv_kernel_[0-9]+}} grid 6 1 1 block 128 1 1

// Dynamic lengths: grid and sizes are expressions of the input dims.
// CHECK-LABEL: // mnemo.function dynamic
// CHECK: // mnemo.buffer {{[0-9]+}} input 0 bytes e{{[0-9]+}}
// CHECK: // mnemo.launch {{dynamic_kernel_[0-9]+}} grid e{{[0-9]+}} 1 1 block 128 1 1 shared 0 args {{.*}}i64:e{{[0-9]+}}

// CHECK: .version 8.0
// CHECK: .target sm_90a
// CHECK: .visible .entry [[TILE]](
// CHECK: bar.sync 0;
// CHECK-NOT: malloc

// SM80: .target sm_80
// SM80-NOT: malloc

func.func @gqa_causal(%q: tensor<1x8x37x32xf32>, %k: tensor<1x2x37x32xf32>,
                      %v: tensor<1x2x37x32xf32>) -> tensor<1x8x37x32xf32> {
  %r = mnemo.attention %q, %k, %v causal : tensor<1x8x37x32xf32>,
       tensor<1x2x37x32xf32>, tensor<1x2x37x32xf32> -> tensor<1x8x37x32xf32>
  return %r : tensor<1x8x37x32xf32>
}

func.func @decode(%q: tensor<2x8x1x128xf32>, %k: tensor<2x2x45x128xf32>,
                  %v: tensor<2x2x45x128xf32>) -> tensor<2x8x1x128xf32> {
  %off = arith.constant 44 : index
  %r = mnemo.attention %q, %k, %v causal q_offset(%off) : tensor<2x8x1x128xf32>,
       tensor<2x2x45x128xf32>, tensor<2x2x45x128xf32> -> tensor<2x8x1x128xf32>
  return %r : tensor<2x8x1x128xf32>
}

func.func @window_dv(%q: tensor<1x4x67x96xf32>, %k: tensor<1x2x67x96xf32>,
                     %v: tensor<1x2x67x64xf32>) -> tensor<1x4x67x64xf32> {
  %r = mnemo.attention %q, %k, %v causal window(16) softcap(2.0) :
       tensor<1x4x67x96xf32>, tensor<1x2x67x96xf32>, tensor<1x2x67x64xf32>
       -> tensor<1x4x67x64xf32>
  return %r : tensor<1x4x67x64xf32>
}

func.func @dynamic(%q: tensor<1x4x?x64xf32>, %k: tensor<1x2x?x64xf32>,
                   %v: tensor<1x2x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %r = mnemo.attention %q, %k, %v causal : tensor<1x4x?x64xf32>,
       tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x4x?x64xf32>
  return %r : tensor<1x4x?x64xf32>
}
