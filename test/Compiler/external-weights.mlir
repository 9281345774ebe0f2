// Checks --external-weights: the weights segment goes to OUT.weights, the
// artifact records that name, mnemo-run maps it and computes the same
// result; a missing side file is an error naming it.
// RUN: rm -rf %t && mkdir -p %t
// The generic x86-64 target (128-bit vectors) packs the weight into one
// 4-wide panel, the weight's own size, whatever the host's vectors.
// RUN: mnemoc %s -o %t/model.mnemo --external-weights --target=x86_64
// RUN: %python -c "import os; print(os.path.getsize('%t/model.mnemo.weights'))" | FileCheck %s --check-prefix=SIZE
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.ones((3, 256), np.float32))"
// RUN: %mnemo_run %t/model.mnemo --input x=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python -c "import numpy as np; print(np.load('%t/out/y.npy')[0, :4].tolist())" | FileCheck %s --check-prefix=VALUES
// RUN: mv %t/model.mnemo.weights %t/elsewhere
// RUN: not %mnemo_run %t/model.mnemo --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mnemoc %s -o %t/model.mlir.out --emit=llvm --external-weights 2>&1 | FileCheck %s --check-prefix=STAGE

// The 256x4 f32 weight (4 KiB) lives in the side file.
// SIZE: 4096
// CHECK: y: f32 [3, 4]
// Every weight is 0.5 and every input 1, so y = 256 * 0.5.
// VALUES: [128.0, 128.0, 128.0, 128.0]
// MISSING: mnemo-run: error: {{.*}}model.mnemo.weights{{.*}}
// STAGE: mnemoc: error: --external-weights applies to artifacts only

func.func @proj(%x: tensor<3x256xf32> {mnemo.name = "x"})
    -> (tensor<3x4xf32> {mnemo.name = "y"}) {
  %w = arith.constant dense<0.5> : tensor<256x4xf32>
  %y = mnemo.linear %x, %w layout(in_out) : tensor<3x256xf32>, tensor<256x4xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
