// mnemo.top_k as a radix select, a block of 512 threads a row: four
// histogram passes of a byte each (atomic adds to 256 bins in shared
// memory), then the indices in ascending order from warp ballots. With
// introselect ties the kernel also gets the reference selection's queue
// (scores, indices, marks: one row each), used by the rows whose cut ties;
// f64 scores keep the selection loops. Few long rows are split into chunks
// (a block each) and merged: a decode step's row of 2^18 scores, k 512,
// takes 16 chunks of 16384 and one merge block; a dynamic shape chooses at
// run time (the merge's grid is empty when a row is one chunk).
// REQUIRES: ptxas
// RUN: mnemo-opt %s --mnemo-gpu-top-k-kernel="report=true" --verify-diagnostics | FileCheck %s --check-prefix=IR
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.o 2>&1 | grep "bytes spill" | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t80.ptx
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.o

// IR-LABEL: func.func @lowest
// IR: memref.alloc() {alignment = 64 : i64} : memref<2x3x64xi64>
// IR: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
// IR-SAME: function(@top_k)
// IR: memref.atomic_rmw addi
// IR: nvvm.vote.sync ballot
// IR: gpu.shuffle  up
// IR-LABEL: func.func @intro
// IR-COUNT-3: memref.alloc({{.*}}) : memref<?x
// IR: gpu.launch
// IR: gpu.launch
// IR-SAME: function(@top_k_merge)
// IR-LABEL: func.func @decode
// IR: memref.alloc() {alignment = 64 : i64} : memref<1x1x512xi64>
// IR: memref.alloc(%c8192{{(_[0-9]+)?}}) {alignment = 64 : i64} : memref<?xi64>
// IR: gpu.launch {{.*}} in (%{{.*}} = %c16{{(_[0-9]+)?}},
// IR-SAME: function(@top_k)
// IR: gpu.launch {{.*}} in (%{{.*}} = %c1{{(_[0-9]+)?}},
// IR-SAME: function(@top_k_merge)
// IR-LABEL: func.func @wide
// IR: mnemo.top_k

// Six rows of 1000 scores; the introselect top-k's grid is B * S at run time.
// Shared memory: 525 words of the select's state, then the cache of the
// source's keys (a row of 1000; a chunk of at most 16384 at run time, or
// of 16384 in @decode) and a merge's candidates' indices (its 16 x 512).
// CHECK-DAG: mnemo.launch top_k grid 6 1 1 block 512 1 1 shared 6100 args
// CHECK-DAG: mnemo.launch top_k_{{[0-9]+}} grid e{{[0-9]+}} 1 1 block 512 1 1 shared 67636 args
// CHECK-DAG: mnemo.launch top_k_merge grid e{{[0-9]+}} 1 1 block 512 1 1 shared 133172 args
// CHECK-DAG: mnemo.launch top_k_{{[0-9]+}} grid 16 1 1 block 512 1 1 shared 67636 args
// CHECK-DAG: mnemo.launch top_k_merge_{{[0-9]+}} grid 1 1 1 block 512 1 1 shared 67636 args
// CHECK-DAG: vote.sync.ballot.b32
// CHECK-DAG: atom.shared.add.u32
// No kernel spills (the top-k kernels are capped at 64 registers a thread:
// two blocks a multiprocessor).
// CHECK-DAG: .maxnreg 64
// PTXAS-COUNT-6: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: spill

func.func @lowest(%s: tensor<2x3x1000xf32>, %len: tensor<2xi64>) -> tensor<2x3x64xi64> {
  // expected-remark @below {{radix select kernel, ties to the lower index}}
  %i = mnemo.top_k %s lengths(%len : tensor<2xi64>) k(64) : tensor<2x3x1000xf32> -> tensor<2x3x64xi64>
  return %i : tensor<2x3x64xi64>
}

func.func @intro(%s: tensor<?x?x?xbf16>) -> tensor<?x?x16xi64> {
  // expected-remark @below {{radix select kernel, the reference selection where the cut ties}}
  %i = mnemo.top_k %s k(16) ties(introselect) : tensor<?x?x?xbf16> -> tensor<?x?x16xi64>
  return %i : tensor<?x?x16xi64>
}

func.func @decode(%s: tensor<1x1x262144xf32>) -> tensor<1x1x512xi64> {
  // expected-remark @below {{radix select kernel, ties to the lower index}}
  %i = mnemo.top_k %s k(512) : tensor<1x1x262144xf32> -> tensor<1x1x512xi64>
  return %i : tensor<1x1x512xi64>
}

func.func @wide(%s: tensor<1x2x50xf64>) -> tensor<1x2x4xi64> {
  // expected-remark @below {{keeps the selection loops: scores are neither f32, bf16 nor f16}}
  %i = mnemo.top_k %s k(4) : tensor<1x2x50xf64> -> tensor<1x2x4xi64>
  return %i : tensor<1x2x4xi64>
}
