// Host code is generated without LLVM's loop strength reduction, which the
// kernels' addressing does not need and which took a tenth of the code
// generator's time, and without LLVM's partial and run-time unrolling
// (the tiles are unrolled in MLIR; the small loops around them were copied
// with their prologue and epilogue for no speed): lib/Target/CPU/
// SerializeObject.cpp, docs/CPU.md. The settings are LLVM's process-wide
// options, set for the compile only: the same options on mnemoc's command
// line win.
//
// RUN: mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.mnemo --target=host --time-passes 2>&1 | FileCheck %s
// RUN: mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.mnemo --target=host --time-passes --disable-lsr=false 2>&1 | FileCheck %s --check-prefix=LSR
//
// CHECK: Pass execution timing report
// CHECK-NOT: Loop Strength Reduction
// CHECK: Greedy Register Allocator
// CHECK-NOT: Loop Strength Reduction
// LSR: Loop Strength Reduction
//
// A run-time unrolled loop has a remainder loop (`.epil`) or a prologue
// (`.prol`): none by default, some when the command line asks for it.
// RUN: mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.ll --emit=llvm --target=host
// RUN: FileCheck %s --check-prefix=NO-UNROLL --input-file=%t.ll
// RUN: mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.unrolled.ll --emit=llvm --target=host --unroll-runtime=true --unroll-allow-partial=true
// RUN: FileCheck %s --check-prefix=UNROLL --input-file=%t.unrolled.ll
// NO-UNROLL: ModuleID
// NO-UNROLL-NOT: {{\.(epil|prol)[.: ]}}
// UNROLL: {{\.(epil|prol)[.: ]}}
//
// The LLVM passes: a pipeline LLVM cannot parse is a one-line error.
// RUN: not mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.bad.mnemo --target=host --mnemo-cpu-llvm-passes=no-such-pass 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: -mnemo-cpu-llvm-passes: unknown pass name 'no-such-pass'
// BAD-NOT: Stack dump
