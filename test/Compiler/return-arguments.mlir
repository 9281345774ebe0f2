// Checks that a function may return its argument and a constant: buffer
// deallocation hands the caller copies it owns (bufferization.clone lowered
// to alloc + copy), so the artifact compiles and runs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: mnemoc %s -o %t/ident.mnemo
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(6, dtype=np.float32).reshape(2, 3))"
// RUN: %mnemo_run %t/ident.mnemo --input x=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python -c "import numpy as np; x = np.load('%t/out/y.npy'); c = np.load('%t/out/c.npy'); print(x.tolist(), c.tolist())" | FileCheck %s --check-prefix=VALUES

// CHECK: y: f32 [2, 3]
// CHECK: c: f32 [4]
// VALUES: {{\[\[}}0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] [1.0, 2.0, 3.0, 4.0]

func.func @ident(%x: tensor<2x?xf32> {mnemo.name = "x"})
    -> (tensor<2x?xf32> {mnemo.name = "y"}, tensor<4xf32> {mnemo.name = "c"}) {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  return %x, %c : tensor<2x?xf32>, tensor<4xf32>
}
