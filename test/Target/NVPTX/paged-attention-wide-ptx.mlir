// Paged decode attention at D 256 takes the tensor-core kernel: bf16 pools
// with two blocks a multiprocessor (O's 128 accumulators a thread), FP8
// pools with their ring of raw rows beside the bf16 tiles (129 KiB of
// shared memory, past the 99 KiB a two-block chip allows: one block).
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.o

// CHECK-DAG: mnemo.launch attention_mma grid 1 8 {{[0-9]+}} block 128 1 1 shared 98304 args
// CHECK-DAG: mnemo.launch attention_mma_0 grid 1 8 {{[0-9]+}} block 128 1 1 shared 132096 args
// CHECK-DAG: .minnctapersm 2
// CHECK-DAG: .minnctapersm 1
// CHECK-NOT: paged_kernel

func.func @bf16(%q: tensor<3x16x1x256xbf16>, %kp: tensor<60x8x16x256xbf16>, %vp: tensor<60x8x16x256xbf16>, %table: tensor<3x20xi32>, %lens: tensor<3xi64>, %pos: tensor<3x1xi64>) -> tensor<3x16x1x256xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal
      : tensor<3x16x1x256xbf16>, tensor<60x8x16x256xbf16>, tensor<60x8x16x256xbf16>, tensor<3x20xi32>, tensor<3xi64>, tensor<3x1xi64> -> tensor<3x16x1x256xbf16>
  return %o : tensor<3x16x1x256xbf16>
}

func.func @fp8(%q: tensor<3x16x1x256xbf16>, %kp: tensor<60x8x16x256xf8E4M3FN>, %vp: tensor<60x8x16x256xf8E4M3FN>, %ks: tensor<60x8x16xf32>, %vs: tensor<60x8x16xf32>, %table: tensor<3x20xi32>, %lens: tensor<3xi64>, %pos: tensor<3x1xi64>) -> tensor<3x16x1x256xbf16> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<60x8x16xf32>, tensor<60x8x16xf32>) table %table lengths %lens positions %pos causal
      : tensor<3x16x1x256xbf16>, tensor<60x8x16x256xf8E4M3FN>, tensor<60x8x16x256xf8E4M3FN>, tensor<3x20xi32>, tensor<3xi64>, tensor<3x1xi64> -> tensor<3x16x1x256xbf16>
  return %o : tensor<3x16x1x256xbf16>
}
