// RUN: mnemo-opt %s --mnemo-approximate-math="expand-pow=true" \
// RUN: | mlir-opt --convert-math-to-llvm --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:     --convert-scf-to-cf --convert-vector-to-llvm --finalize-memref-to-llvm \
// RUN:     --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

// The NVPTX pipeline's powf (expand-pow), run on the host: C's powf on
// every sign of base and exponent. A negative base with an integral
// exponent is defined (a TorchScript export's RMSNorm squares its input
// through a broadcast constant exponent that the simplification cannot
// see: upstream's exp(b * log(a)) made every negative square NaN); with a
// fractional one it is NaN; b = 0 or a = 1 give 1, a = 0 gives 0 or inf.

func.func @pow(%x: f32, %e: f32) -> f32 {
  %y = math.powf %x, %e : f32
  return %y : f32
}

// CHECK:      9
// CHECK-NEXT: -8
// CHECK-NEXT: nan
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: 0.5
// CHECK-NEXT: 10
// CHECK-NEXT: -8
// CHECK-NEXT: 1
// CHECK-NEXT: inf
// CHECK-NEXT: nan
// CHECK-NEXT: 5.1961
// CHECK-NEXT: 0.0001
func.func @main() {
  // (base, exponent) rows.
  %cases = arith.constant dense<[[-3.0, 2.0], [-2.0, 3.0], [-2.0, 0.5],
      [0.0, 2.0], [0.0, 0.0], [2.0, -1.0], [10000.0, 0.25], [-0.5, -3.0],
      [1.0, 0x7FC00000], [0.0, -1.0], [-1.5, 2.5], [3.0, 1.5],
      [-10.0, -4.0]]> : tensor<13x2xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 13 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = tensor.extract %cases[%i, %c0] : tensor<13x2xf32>
    %e = tensor.extract %cases[%i, %c1] : tensor<13x2xf32>
    %y = func.call @pow(%x, %e) : (f32, f32) -> f32
    vector.print %y : f32
  }
  return
}
