// Checks mnemoc's one-line errors and non-zero exits on bad invocations and
// bad input.
// RUN: split-file %s %t
// RUN: not mnemoc %t/ok.mlir --target=riscv -o %t.out 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not mnemoc %t/ok.mlir 2>&1 | FileCheck %s --check-prefix=NOOUT
// RUN: not mnemoc %t/missing.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: cp %t/ok.mlir %t/model.txt
// RUN: not mnemoc %t/model.txt -o %t.out 2>&1 | FileCheck %s --check-prefix=SUFFIX
// RUN: not mnemoc %t/invalid.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=INVALID
// RUN: not mnemoc %t/empty.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not mnemoc %t/ok.mlir -o %t.out --max-seq-len=0 2>&1 | FileCheck %s --check-prefix=MAX
// A diagnostic on an op is its line alone; the op (often a model's whole
// function) only with --mlir-print-op-on-diagnostic.
// RUN: not mnemoc %t/ok.mlir --input-shape=y=2x5 --emit=mnemo 2>&1 | FileCheck %s --check-prefix=ONE-LINE
// RUN: not mnemoc %t/ok.mlir --input-shape=y=2x5 --emit=mnemo --mlir-print-op-on-diagnostic 2>&1 | FileCheck %s --check-prefix=WITH-OP
// --help lists mnemoc's options and a few of MLIR's; LLVM's internal ones
// are behind --help-hidden.
// RUN: mnemoc --help | FileCheck %s --check-prefix=HELP
// RUN: mnemoc --help | wc -l | FileCheck %s --check-prefix=HELP-LINES
// RUN: mnemoc --help-hidden | FileCheck %s --check-prefix=HIDDEN

// TARGET: mnemoc: error: unknown target 'riscv' (expected host, x86_64, aarch64, aarch64-sve, sm_80, sm_90a)
// NOOUT: mnemoc: error: binary output needs -o FILE
// MISSING: mnemoc: error: cannot open input file '{{.*}}missing.mlir': No such file or directory
// SUFFIX: mnemoc: error: {{.*}}model.txt: unsupported input (this build reads .mlir and .onnx models and checkpoint directories)
// INVALID: invalid.mlir:2:8: error: 'mnemo.rms_norm' op weight size (3) must match the normalized (last) dimension (4)
// EMPTY: error: no public function to compile
// MAX: mnemoc: error: --max-batch and --max-seq-len must be positive
// ONE-LINE: ok.mlir:0:0: error: --input-shape: no input named 'y'{{$}}
// ONE-LINE-NOT: {{.}}
// WITH-OP: error: --input-shape: no input named 'y'
// WITH-OP-NEXT: note: see current operation
// HELP: mnemoc options:
// HELP: --emit=<value>
// HELP: --mlir-timing
// HELP: --target=<string>
// HELP-NOT: --x86-
// HELP-LINES: {{^ *[1-7][0-9]$}}
// HIDDEN: --x86-

//--- ok.mlir
func.func @f(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = mnemo.rms_norm %x, %w eps(1.0e-5) : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
//--- invalid.mlir
func.func @f(%x: tensor<2x4xf32>, %w: tensor<3xf32>) -> tensor<2x4xf32> {
  %y = mnemo.rms_norm %x, %w eps(1.0e-5) : tensor<2x4xf32>, tensor<3xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
//--- empty.mlir
func.func private @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32>
