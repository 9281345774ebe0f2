// A prompt's attention over selected keys (DeepSeek-V3.2's top-k) on the
// tensor-core kernel: a block's rows are one position's heads of a key
// head, its key tiles the position's entries, each the key row it names
// (cp.async; entries outside [0, Skv) masked). The absorbed MLA form (128
// heads over one latent row: D 576 / Dv 512, two head tiles) and MQA at
// D 128 take it; the expanded form's one head a key head keeps the
// decomposition, as do tiles past sm_80's shared memory.
// REQUIRES: ptxas
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a shared-bytes-limit=232448 report=true" --verify-diagnostics -o /dev/null
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_80 shared-bytes-limit=166912 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=SM80

// Absorbed MLA: grid.x the 37 positions, grid.y 2 head tiles; K, V and Q
// tiles (208 KiB), the P tile and the statistics.
// CHECK-DAG: mnemo.launch attention_mma grid 37 2 {{[0-9]+}} block 256 1 1 shared 221696 args
// MQA 16/1 at D 128: one block a position, 64 rows of which 16 are heads.
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 37 1 {{[0-9]+}} block 128 1 1 shared 49152 args
// V4's union: one position, one head tile, 2 sequences x 5 splits of the
// 640 listed keys (10 tiles), K, V and Q tiles of 512 (205 KiB), then the
// combine.
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 1 1 10 block 256 1 1 shared 205312 args
// PTXAS: Compiling entry function 'attention_mma{{[_0-9]*}}' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores
// PTXAS: Compiling entry function 'attention_mma{{[_0-9]*}}' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores
// SM80: keeps the decomposition: head dim above 256 without wgmma
// SM80: reads its selected keys in the kernel
// SM80: keeps the decomposition: fewer than 16 query heads a key head
// SM80: keeps the decomposition: head dim above 256 without wgmma

func.func @absorbed(%q: tensor<2x128x37x576xbf16>, %k: tensor<2x1x300x576xbf16>, %v: tensor<2x1x300x512xbf16>, %idx: tensor<2x37x64xi64>) -> tensor<2x128x37x512xbf16> {
  // expected-remark @below {{reads its selected keys in the kernel}}
  %o = mnemo.sparse_attention %q, %k, %v, %idx scale(0.1352)
      : tensor<2x128x37x576xbf16>, tensor<2x1x300x576xbf16>, tensor<2x1x300x512xbf16>, tensor<2x37x64xi64> -> tensor<2x128x37x512xbf16>
  return %o : tensor<2x128x37x512xbf16>
}

func.func @mqa_d128(%q: tensor<2x16x37x128xbf16>, %k: tensor<2x1x300x128xbf16>, %v: tensor<2x1x300x128xbf16>, %idx: tensor<2x37x40xi32>) -> tensor<2x16x37x128xbf16> {
  // expected-remark @below {{reads its selected keys in the kernel}}
  %o = mnemo.sparse_attention %q, %k, %v, %idx
      : tensor<2x16x37x128xbf16>, tensor<2x1x300x128xbf16>, tensor<2x1x300x128xbf16>, tensor<2x37x40xi32> -> tensor<2x16x37x128xbf16>
  return %o : tensor<2x16x37x128xbf16>
}

func.func @expanded(%q: tensor<2x16x37x192xbf16>, %k: tensor<2x16x300x192xbf16>, %v: tensor<2x16x300x128xbf16>, %idx: tensor<2x37x64xi64>) -> tensor<2x16x37x128xbf16> {
  // expected-remark @below {{keeps the decomposition: fewer than 16 query heads a key head}}
  %o = mnemo.sparse_attention %q, %k, %v, %idx
      : tensor<2x16x37x192xbf16>, tensor<2x16x300x192xbf16>, tensor<2x16x300x128xbf16>, tensor<2x37x64xi64> -> tensor<2x16x37x128xbf16>
  return %o : tensor<2x16x37x128xbf16>
}

// DeepSeek-V4's decode attention in its selected form (64 heads on the
// K = V head of 512, each query over its 128 window keys and 512 listed
// entries, the sink in the denominator): one query a sequence, so a block
// is a sequence's 64 heads; the sink operand is the kernel's last.
func.func @v4_union(%q: tensor<2x64x1x512xbf16>, %kv: tensor<2x1x656x512xbf16>, %idx: tensor<2x1x640xi64>, %sink: tensor<64xf32>) -> tensor<2x64x1x512xbf16> {
  // expected-remark @below {{reads its selected keys in the kernel}}
  %o = mnemo.sparse_attention %q, %kv, %kv, %idx sink(%sink : tensor<64xf32>) scale(0.0441941738)
      : tensor<2x64x1x512xbf16>, tensor<2x1x656x512xbf16>, tensor<2x1x656x512xbf16>, tensor<2x1x640xi64> -> tensor<2x64x1x512xbf16>
  return %o : tensor<2x64x1x512xbf16>
}
