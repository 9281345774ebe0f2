// RUN: mnemo-opt %s --mnemo-reference-pipeline \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

// Checks the host reference path end to end on values worked out by hand.
// Two keys at e1 and e2, queries 0.5·(1,1,1,1) and scale 1/sqrt(4): both
// keys score 0.25, so a row that sees both averages the values.
//   row 0 (causal) sees key 0 only   → (1, 2)
//   rows 1, 2 see both keys          → (2, 3)
// Both query heads share the single key/value head (MQA).

func.func @main() {
  %q = arith.constant dense<0.5> : tensor<1x2x3x4xf32>
  %k = arith.constant dense<[[[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]]]> : tensor<1x1x2x4xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %o = mnemo.attention %q, %k, %v causal
      : tensor<1x2x3x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x2xf32> -> tensor<1x2x3x2xf32>
  %m = bufferization.to_buffer %o : tensor<1x2x3x2xf32> to memref<1x2x3x2xf32>
  %u = memref.cast %m : memref<1x2x3x2xf32> to memref<*xf32>
  // CHECK: sizes = [1, 2, 3, 2]
  // CHECK-NEXT: {{\[\[\[\[}}1, 2],
  // CHECK-NEXT: [2, 3],
  // CHECK-NEXT: [2, 3]],
  // CHECK-NEXT: {{\[\[}}1, 2],
  // CHECK-NEXT: [2, 3],
  // CHECK-NEXT: [2, 3]]]]
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()

  // rms_norm of (3, 4) with weight (1, 2): rms = sqrt(12.5) → (0.848528, 2.26274)
  %x = arith.constant dense<[[3.0, 4.0]]> : tensor<1x2xf32>
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %n = mnemo.rms_norm %x, %w eps(0.0) : tensor<1x2xf32>, tensor<2xf32> -> tensor<1x2xf32>
  %nm = bufferization.to_buffer %n : tensor<1x2xf32> to memref<1x2xf32>
  %nu = memref.cast %nm : memref<1x2xf32> to memref<*xf32>
  // CHECK: {{\[\[}}0.848528, 2.26274]]
  call @printMemrefF32(%nu) : (memref<*xf32>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>) attributes { llvm.emit_c_interface }
