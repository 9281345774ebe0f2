// --input-shape compiles a model for one static input shape: the signature
// takes it, every derived size folds to a constant, and the result type is
// refined once the tensor IR is static; the GPU plan then has no `?`.
// RUN: mnemoc %s --input-shape=x=2x5 --emit=mnemo | FileCheck %s --check-prefix=SIG
// RUN: mnemoc %s --input-shape=x=2x5 --emit=tiled | FileCheck %s --check-prefix=TILED
// RUN: mnemoc %s --input-shape=x=2x5 --target=sm_90a --emit=ptx | FileCheck %s --check-prefix=PLAN
// RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --input-shape=input_ids=1x9 --target=sm_80 --emit=ptx | FileCheck %s --check-prefix=DECODER
//
// Errors: an unknown name, a wrong rank, a static dim that differs, syntax.
// RUN: not mnemoc %s --input-shape=y=2x5 --emit=mnemo 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not mnemoc %s --input-shape=x=2x5x1 --emit=mnemo 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not mnemoc %s --input-shape=x=3x5 --emit=mnemo 2>&1 | FileCheck %s --check-prefix=DIM
// RUN: not mnemoc %s --input-shape=x=2by5 --emit=mnemo 2>&1 | FileCheck %s --check-prefix=SYNTAX

// SIG: func.func @scale(%arg0: tensor<2x5xf32> {mnemo.name = "x"}) -> (tensor<2x?xf32> {mnemo.name = "y"})
// SIG-NEXT: tensor.cast %arg0 : tensor<2x5xf32> to tensor<2x?xf32>
// TILED: func.func @scale(%arg0: tensor<2x5xf32> {mnemo.name = "x"}) -> (tensor<2x5xf32> {mnemo.name = "y"})
// PLAN: // mnemo.input 0 x f32 2x5
// PLAN-NOT: ?
// PLAN: // mnemo.output 0 buffer {{[0-9]+}} y f32 2x5
// DECODER: // mnemo.input 0 input_ids i64 1x9
// DECODER-NOT: ?
// DECODER: // mnemo.output 0 buffer {{[0-9]+}} logits f32 1x9x
// NAME: error: --input-shape: no input named 'y'
// RANK: error: --input-shape x=2x5x1: input has type 'tensor<2x?xf32>'
// DIM: error: --input-shape x=3x5: input has shape 2x?
// SYNTAX: error: --input-shape 'x=2by5': expected NAME=DIMxDIM... with positive dims

func.func @scale(%x: tensor<2x?xf32> {mnemo.name = "x"}) -> (tensor<2x?xf32> {mnemo.name = "y"}) {
  %y = linalg.add ins(%x, %x : tensor<2x?xf32>, tensor<2x?xf32>) outs(%x : tensor<2x?xf32>) -> tensor<2x?xf32>
  return %y : tensor<2x?xf32>
}
