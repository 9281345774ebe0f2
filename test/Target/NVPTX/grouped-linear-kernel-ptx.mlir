// mnemo.grouped_linear (a mixture of experts' rows in blocks of 64, each
// block naming its expert) as the tensor-core linear kernel on both chips:
// rows unknown until run time (the grid's y follows them), the block's
// expert read from the groups list (one 32-bit load) before its K loop,
// the weight [5, N, 520] streamed as [5 N, 520] (on sm_90a through a tensor
// map over all the experts' rows, 680 = 5 x 136, and 1000 = 5 x 200 for
// the down projection); a 16-bit input by TMA and wgmma, an f32 one (here
// SwiGLU's, computed by a kernel of its own and rounded by another) as
// well. N = 136 and 200 are no tile multiples. ptxas accepts every kernel
// without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 -v %t.sm_80.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS

// SM80: mnemo.launch linear_mma grid 2 e{{[0-9]+}} 1 block 128 1 1 shared 49152
// SM80: mnemo.launch linear_mma_0 grid 2 e{{[0-9]+}} 1 block 128 1 1 shared 49152
// SM90: mnemo.buffer [[XMAP:[0-9]+]] tensormap of 2 bf16 dims 520xe0 strides 1040 box 64x64 swizzle 128
// SM90: mnemo.buffer [[WMAP:[0-9]+]] tensormap of 4 bf16 dims 520x680 strides 1040 box 64x128 swizzle 128
// SM90: mnemo.buffer {{[0-9]+}} tensormap of {{[0-9]+}} bf16 dims 520x1000 strides 1040 box 64x128 swizzle 128
// SM90: mnemo.launch linear_mma grid 2 e{{[0-9]+}} 1 block 128 1 1 shared 98336 args buffer:0 i64:e0 buffer:1 i64:e7 buffer:[[XMAP]] buffer:[[WMAP]]
// SM90: mnemo.launch linear_mma_1 grid 2 e{{[0-9]+}} 1 block 128 1 1 shared 98336
// CHECK-LABEL: .entry linear_mma(
// CHECK: ld.global.{{[sb]}}32
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SM90: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTXAS: Compiling entry function
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill

func.func @grouped(%x: tensor<?x520xbf16> {mnemo.name = "x"}, %w: tensor<5x136x520xbf16> {mnemo.name = "w"}, %g: tensor<?xi32> {mnemo.name = "groups"}, %u: tensor<?x520xf32> {mnemo.name = "u"}, %v: tensor<?x520xf32> {mnemo.name = "v"}, %d: tensor<5x200x520xbf16> {mnemo.name = "d"}) -> (tensor<?x136xf32> {mnemo.name = "y"}, tensor<?x200xf32> {mnemo.name = "z"}) {
  %y = mnemo.grouped_linear %x, %w groups(%g) rows(64) : tensor<?x520xbf16>, tensor<5x136x520xbf16>, tensor<?xi32> -> tensor<?x136xf32>
  %a = mnemo.swiglu %u, %v : tensor<?x520xf32>
  %z = mnemo.grouped_linear %a, %d groups(%g) rows(64) : tensor<?x520xf32>, tensor<5x200x520xbf16>, tensor<?xi32> -> tensor<?x200xf32>
  return %y, %z : tensor<?x136xf32>, tensor<?x200xf32>
}
