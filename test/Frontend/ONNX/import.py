# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/make_models.py %t
# RUN: mnemoc %t/small.onnx --emit=mnemo | FileCheck %s
# RUN: mnemoc %t/small.onnx --target=host -o %t/small.mnemo
# RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(12, dtype=np.float32).reshape(3, 4))"
# RUN: %mnemo_run %t/small.mnemo --input x=%t/x.npy --output-dir %t
# RUN: %python -c "import numpy as np; x = np.load('%t/x.npy') + np.arange(4); e = np.exp(x - x.max(1, keepdims=True)); d = np.abs(np.load('%t/y.npy') - e / e.sum(1, keepdims=True)).max(); print('diff', d); assert d < 1e-6"

# Graph inputs and outputs keep their names; dim_params become dynamic dims.
# CHECK: func.func @g(%{{.*}}: tensor<?x4xf32> {mnemo.name = "x"}) -> (tensor<?x4xf32> {mnemo.name = "y"})
# CHECK: arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>
# CHECK: linalg.generic
# CHECK: arith.addf
# CHECK: arith.maximumf
# CHECK: math.exp
# CHECK: arith.divf
"""A small model with a dynamic batch: imported (names, `?` dims), compiled
and run at batch 3 against numpy."""
