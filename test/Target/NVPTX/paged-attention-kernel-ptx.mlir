// The paged decode kernel in PTX: K and V rows copied from their pages by
// cp.async (the block table read per row), two copy groups in flight while
// the scores are computed (wait_group 2: the last real group and the
// empty one committed before the wait), a combine kernel for the splits.
// ptxas accepts it on both chips without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --gpu-decode-kernel --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: mnemo.launch attention_mma grid 1 2 e{{[0-9]+}} block 128 1 1 shared 49152
// CHECK: mnemo.launch attention_combine
// SM80: mnemo.launch attention_mma_{{[0-9]+}} grid 1 2 e{{[0-9]+}} block 128 1 1 shared 66560
// SM90: mnemo.launch attention_mma_{{[0-9]+}} grid 1 2 e{{[0-9]+}} block 128 1 1 shared 68608
// CHECK-LABEL: .entry attention_mma(
// Three blocks a multiprocessor, which the split count assumes.
// SM90: .minnctapersm 3
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.wait_group 2;
// SM90: wgmma.mma_async
// (ptxas reports the kernels last to first.)
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// PTXAS: Compiling entry function 'attention_mma_{{[0-9]+}}'
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// PTXAS: Compiling entry function 'attention_mma'
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
func.func @decode(%q: tensor<?x8x1x128xf32>, %kp: tensor<64x2x16x128xbf16>,
    %vp: tensor<64x2x16x128xbf16>, %table: tensor<?x32xi32>,
    %lens: tensor<?xi64>, %pos: tensor<?x1xi64>) -> tensor<?x8x1x128xf32> {
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal window(300)
      : tensor<?x8x1x128xf32>, tensor<64x2x16x128xbf16>, tensor<64x2x16x128xbf16>,
        tensor<?x32xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x8x1x128xf32>
  return %o : tensor<?x8x1x128xf32>
}

// FP8 pools on sm_80: raw rows and 4-byte scales copied into the ring,
// three tiles in flight (wait_group 4 counts two tiles and two waits'
// empty groups), byte permutes and bf16 multiplies dequantizing them. On
// sm_90a a decode step takes the decode kernel: each warp's ring of raw
// rows (16-byte copies, three tiles in flight, the warp's barrier), E4M3
// pairs converted to f16 for mma.sync.
// (The launch line is checked above: the plan's lines come first.)
// CHECK-LABEL: .entry attention_mma_{{[0-9]+}}(
// SM90: .minnctapersm 3
// SM80: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 4, %{{.*}};
// SM80: cp.async.wait_group 4;
// SM80: prmt.b32 {{.*}}, 0, 0x1404U;
// SM80: prmt.b32 {{.*}}, 0, 0x3424U;
// SM90: cp.async.cg.shared.global [%{{.*}}], [%{{.*}}], 16, %{{.*}};
// SM90: bar.warp.sync -1;
// SM90: cp.async.wait_group 3;
// SM90: cvt.rn.f16x2.e4m3x2
// SM90: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @decode_fp8(%q: tensor<?x8x1x128xf32>, %kp: tensor<64x2x16x128xf8E4M3FN>,
    %vp: tensor<64x2x16x128xf8E4M3FN>, %ks: tensor<64x2x16xf32>,
    %vs: tensor<64x2x16xf32>, %table: tensor<?x32xi32>,
    %lens: tensor<?xi64>, %pos: tensor<?x1xi64>) -> tensor<?x8x1x128xf32> {
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<64x2x16xf32>, tensor<64x2x16xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<?x8x1x128xf32>, tensor<64x2x16x128xf8E4M3FN>, tensor<64x2x16x128xf8E4M3FN>,
        tensor<?x32xi32>, tensor<?xi64>, tensor<?x1xi64> -> tensor<?x8x1x128xf32>
  return %o : tensor<?x8x1x128xf32>
}
