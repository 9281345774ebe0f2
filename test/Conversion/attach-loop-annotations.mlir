// RUN: mnemo-opt %s --split-input-file --pass-pipeline="builtin.module(llvm.func(mnemo-attach-loop-annotations))" | FileCheck %s
// RUN: mnemoc %S/../Target/CPU/Inputs/linear-37x45x71.mlir --emit=llvm --target=x86_64 | FileCheck %s --check-prefix=LLVM
// RUN: mnemoc %S/../Target/CPU/Inputs/linear-37x45x71.mlir --emit=llvm --target=x86_64 --verify-each | FileCheck %s --check-prefix=LLVM

// The latch branch's discardable llvm.loop_annotation (what scf-to-cf and
// cf-to-llvm leave) becomes the branch's own loop_annotation, which the
// translation writes as !llvm.loop; other branches are left alone.
// CHECK: #[[DISABLE:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[UNROLL:.*]] = #llvm.loop_annotation<unroll = #[[DISABLE]]>
// CHECK-LABEL: llvm.func @latch
// CHECK: llvm.br ^bb1(%{{.*}} : i64)
// CHECK-NOT: loop_annotation
// CHECK: llvm.cond_br
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #[[UNROLL]]}
// CHECK-NOT: llvm.loop_annotation
#unroll = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>
llvm.func @latch(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %c = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %c, ^bb2, ^bb3
^bb2:
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #unroll}
^bb3:
  llvm.return
}

// End to end: the CPU GEMM micro-kernel's K loop is not unrolled by LLVM
// (its step is already a register tile of FMAs), with or without
// verification after every pass.
// LLVM-LABEL: define internal void @packed_parallel0_trampoline
// (Metadata is printed only where an instruction refers to it: a loop ID
// with the hint is a loop's.)
// LLVM-DAG: ![[DISABLE:[0-9]+]] = !{!"llvm.loop.unroll.disable"}
// LLVM-DAG: ![[K:[0-9]+]] = distinct !{![[K]], ![[DISABLE]]}
