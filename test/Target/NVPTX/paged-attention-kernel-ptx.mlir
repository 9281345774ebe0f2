// The paged decode kernel in PTX: K and V rows copied from their pages by
// cp.async (the block table read per row), two copy groups in flight while
// the scores are computed (wait_group 2: the last real group and the
// empty one committed before the wait), a combine kernel for the splits.
// ptxas accepts it on both chips without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=CHECK < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: mnemo.launch attention_mma grid 1 2 e{{[0-9]+}} block 128 1 1 shared 49152
// CHECK: mnemo.launch attention_combine
// CHECK-LABEL: .entry attention_mma(
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.wait_group 2;
// SM90: wgmma.mma_async
// PTXAS-LABEL: Compiling entry function 'attention_mma'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @decode(%q: tensor<?x8x1x128xf32>, %kp: tensor<64x2x16x128xbf16>,
    %vp: tensor<64x2x16x128xbf16>, %table: tensor<?x32xi32>,
    %lens: tensor<?xi64>, %pos: tensor<?x1xi64>) -> tensor<?x8x1x128xf32> {
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal window(300)
      : tensor<?x8x1x128xf32>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16>,
        tensor<?x32xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x8x1x128xf32>
  return %o : tensor<?x8x1x128xf32>
}
