// Quantized weights in the decode tile: a mnemo.linear whose weight is a
// mnemo.dequantize of E4M3, int8 (without zero points) or int4 codes and
// f32 scales in groups of a multiple of 32 reads the codes and scales in
// the tile (cp.async of 16-byte code rows and 4-byte scales), decodes them into
// its f32 W tile as exact TF32 values, multiplies them with the input's
// two TF32 parts (two mma.sync m16n8k8 a term: the codes have no rest) and
// adds each K step's sums times the columns' scales. No kernel decodes the
// whole weight. A prefill's rows keep that kernel: the weight decoded once
// per call, then the TF32 GEMM. ptxas accepts every kernel without spills.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --max-batch=4 --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s < %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=INT8 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_80 --max-batch=4 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// The decode steps: the launches read the input, the codes and the scales
// (buffers 0 to 2); 6 stages of 10240 + 2048 + 256 bytes.
// CHECK-NOT: mnemo.launch decode_fp8
// CHECK: mnemo.launch linear_mma grid 5 e2 7 block 128 1 1 shared 75264 args buffer:0 i64:e0 i64:e7 buffer:1 i64:e0 buffer:2 buffer:3
// CHECK-NEXT: mnemo.launch linear_reduce
// CHECK-NOT: mnemo.launch decode_int8
// CHECK: mnemo.launch linear_mma_0 grid 3 1 1 block 128 1 1 shared 75264 args buffer:0 buffer:1 buffer:2 buffer:3 buffer:4
// The prefill: the whole weight decoded, then the GEMM reads it.
// CHECK: mnemo.launch prefill_int8_kernel
// CHECK-NEXT: mnemo.launch linear_mma_1
// int4: 16 bytes a row and step (5 stages, one more than a split's K steps,
// of 10240 + 1024 + 256 bytes).
// CHECK-NOT: mnemo.launch decode_int4
// CHECK: mnemo.launch linear_mma_2 grid 3 1 2 block 128 1 1 shared 57600 args buffer:0 buffer:1 buffer:2 buffer:3

// CHECK-LABEL: .entry linear_mma(
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// CHECK-DAG: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4, %r{{[0-9]+}};
// E4M3: sign and fields moved into an f32's, times 2^120 (no flush to zero).
// CHECK-DAG: and.b32 {{.*}}, -2014314496;
// CHECK-DAG: mul.rn.f32 {{.*}}, 0f7B800000;
// CHECK-DAG: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-LABEL: .entry linear_reduce(
// CHECK-LABEL: .entry linear_mma_0(
// One m16 block, two n8 blocks, four k8 steps of a K step: 16, not 24.
// CHECK-COUNT-16: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-NOT: mma.sync
// CHECK-LABEL: .entry prefill_int8_kernel(
// int8 codes widened to f32 in the tile.
// INT8-LABEL: .entry linear_mma_0(
// INT8: cvt.rn.f32.s16
// INT8-LABEL: .entry prefill_int8_kernel(

// PTXAS-NOT: bytes spill stores, {{[1-9]}}
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: bytes spill stores, {{[1-9]}}

// E4M3 codes in 128 x 128 blocks, K off the 32-code steps (split-K).
func.func @decode_fp8(%x: tensor<?x1x1040xf32>, %c: tensor<264x1040xi8>, %s: tensor<264x9xf32>) -> tensor<?x1x264xf32> {
  %w = mnemo.dequantize %c, %s format(fp8_e4m3) group(128) : tensor<264x1040xi8>, tensor<264x9xf32> -> tensor<264x1040xf32>
  %r = mnemo.linear %x, %w layout(out_in) : tensor<?x1x1040xf32>, tensor<264x1040xf32> -> tensor<?x1x264xf32>
  return %r : tensor<?x1x264xf32>
}
// int8 codes in groups of 32 (a partial last group), a bias.
func.func @decode_int8(%x: tensor<3x1x208xf32>, %c: tensor<136x208xi8>, %s: tensor<136x7xf32>, %b: tensor<136xf32>) -> tensor<3x1x136xf32> {
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<136x208xi8>, tensor<136x7xf32> -> tensor<136x208xf32>
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<136xf32>) : tensor<3x1x208xf32>, tensor<136x208xf32> -> tensor<3x1x136xf32>
  return %r : tensor<3x1x136xf32>
}
func.func @prefill_int8(%x: tensor<100x208xf32>, %c: tensor<136x208xi8>, %s: tensor<136x7xf32>) -> tensor<100x136xf32> {
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<136x208xi8>, tensor<136x7xf32> -> tensor<136x208xf32>
  %r = mnemo.linear %x, %w layout(out_in) : tensor<100x208xf32>, tensor<136x208xf32> -> tensor<100x136xf32>
  return %r : tensor<100x136xf32>
}
// int4 codes two a byte (the even column in the low nibble), split-K.
func.func @decode_int4(%x: tensor<2x1x256xf32>, %c: tensor<136x128xi8>, %s: tensor<136x4xf32>) -> tensor<2x1x136xf32> {
  %w = mnemo.dequantize %c, %s format(int4) group(64) : tensor<136x128xi8>, tensor<136x4xf32> -> tensor<136x256xf32>
  %r = mnemo.linear %x, %w layout(out_in) : tensor<2x1x256xf32>, tensor<136x256xf32> -> tensor<2x1x136xf32>
  return %r : tensor<2x1x136xf32>
}
