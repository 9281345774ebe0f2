// Host code is generated without LLVM's loop strength reduction, which the
// kernels' addressing does not need and which took a tenth of the code
// generator's time (lib/Target/CPU/SerializeObject.cpp, docs/CPU.md). The
// setting is LLVM's process-wide option, set for the compile only: a
// -disable-lsr=false on mnemoc's command line wins.
//
// RUN: mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.mnemo --target=host --time-passes 2>&1 | FileCheck %s
// RUN: mnemoc %S/../../Runtime/Inputs/model.mlir --max-seq-len=32 -o %t.mnemo --target=host --time-passes --disable-lsr=false 2>&1 | FileCheck %s --check-prefix=LSR
//
// CHECK: Pass execution timing report
// CHECK-NOT: Loop Strength Reduction
// CHECK: Greedy Register Allocator
// CHECK-NOT: Loop Strength Reduction
// LSR: Loop Strength Reduction
