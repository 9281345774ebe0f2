// Every emitted module is valid PTX for its chip (ptxas, from the CUDA
// toolkit: the `ptxas` lit feature; UNSUPPORTED without it).
// REQUIRES: ptxas
// RUN: mnemoc %S/attention.mlir --target=sm_80 --precision=f32 --emit=ptx -o %t.attention.sm_80.ptx
// RUN: %ptxas -arch=sm_80 %t.attention.sm_80.ptx -o %t.o
// RUN: mnemoc %S/attention.mlir --target=sm_90a --precision=f32 --emit=ptx -o %t.attention.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a %t.attention.sm_90a.ptx -o %t.o
// RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --target=sm_80 --emit=ptx -o %t.decoder.sm_80.ptx
// RUN: %ptxas -arch=sm_80 %t.decoder.sm_80.ptx -o %t.o
// RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --target=sm_90a --emit=ptx -o %t.decoder.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a %t.decoder.sm_90a.ptx -o %t.o
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.layers.ptx
// RUN: %ptxas -arch=sm_90a %t.layers.ptx -o %t.o

// The layer ops on their own, with dynamic lengths.
func.func @layers(%x: tensor<2x?x48xf32>, %w: tensor<40x48xf32>,
                  %n: tensor<48xf32>, %ids: tensor<2x?xi64>,
                  %t: tensor<50x48xf32>) -> (tensor<2x?x40xf32>, tensor<2x?x48xf32>, tensor<2x?x48xf32>) {
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x?x48xf32>, tensor<40x48xf32> -> tensor<2x?x40xf32>
  %r = mnemo.rms_norm %x, %n eps(1.0e-05) : tensor<2x?x48xf32>, tensor<48xf32> -> tensor<2x?x48xf32>
  %s = mnemo.swiglu %r, %x : tensor<2x?x48xf32>
  %e = mnemo.embedding %t[%ids] : tensor<50x48xf32>, tensor<2x?xi64> -> tensor<2x?x48xf32>
  return %y, %s, %e : tensor<2x?x40xf32>, tensor<2x?x48xf32>, tensor<2x?x48xf32>
}

// Dynamic-NTK rope: the base depends on max(positions), reduced in a kernel
// and read by the next (no host read between launches, no libdevice pow).
func.func @rope_dynamic_ntk(%x: tensor<1x4x9x64xf32>, %pos: tensor<9xi64>) -> tensor<1x4x9x64xf32> {
  %r = mnemo.rope %x, %pos theta(10000.0) scaling(<dynamic, factor = 2.0, original_max_position = 4>) : tensor<1x4x9x64xf32>, tensor<9xi64> -> tensor<1x4x9x64xf32>
  return %r : tensor<1x4x9x64xf32>
}
