// Checks that bad input gives a located diagnostic and a non-zero exit, not
// a crash: a malformed op, an op the verifier rejects, an unknown pass, a
// missing file.

// RUN: split-file %s %t
// RUN: not mnemo-opt %t/malformed.mlir 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not mnemo-opt %t/invalid.mlir --convert-mnemo-to-linalg 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: not mnemo-opt %t/invalid.mlir --no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not mnemo-opt %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mnemo-opt %t/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED

// MALFORMED: malformed.mlir:2:{{[0-9]+}}: error: expected ','
// INVALID: invalid.mlir:2:{{[0-9]+}}: error: 'mnemo.attention' op query heads (3) must be a multiple of key/value heads (2)
// PASS: Unknown command line argument '--no-such-pass'
// MISSING: cannot open input file {{.*}}does-not-exist.mlir
// TRUNCATED: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error: expected

//--- malformed.mlir
func.func @f(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %o = mnemo.attention %q %q, %q : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}
//--- invalid.mlir
func.func @f(%q: tensor<1x3x3x4xf32>, %k: tensor<1x2x3x4xf32>) -> tensor<1x3x3x4xf32> {
  %o = mnemo.attention %q, %k, %k : tensor<1x3x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x3x3x4xf32>
  return %o : tensor<1x3x3x4xf32>
}
//--- truncated.mlir
func.func @f(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<yarn, factor =
