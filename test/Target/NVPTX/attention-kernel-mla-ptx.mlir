// DeepSeek's absorbed MLA on the tensor cores (sm_90a): D 576 (latent 512 +
// rope 64) against keys, Dv 512 (the latent) as values. Past one
// warpgroup's Dv (256), two warpgroups share the block's 64 rows, each
// scoring half of a tile's keys (m64n32k16) and computing its half of O
// (m64n256k16); 128 heads over one KV head take two blocks of 64 heads a
// position. A value pool that is the key pool's leading 512 features (the
// latent cached once) is read from the K tile, which then has two buffers
// (16-bit pools) or is dequantized from a ring of two raw tiles (FP8 pools:
// the E4M3 values, exact in bf16, and each key's scale on its columns of S
// and P, in f32). The KV loop keeps its
// wgmma descriptors and copy addresses (no LICM), so that ptxas neither
// spills nor runs out of registers (255 and 600 bytes of spills hoisted).
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_90a shared-bytes-limit=232448 report=true" --verify-diagnostics -o /dev/null
// RUN: mnemo-opt %s --mnemo-gpu-attention-kernel="chip=sm_80 shared-bytes-limit=166912 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=SM80
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t80.ptx
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.o 2>&1 | FileCheck %s --check-prefix=PTXAS80

// Decode, 128 heads: grid.y is 2 head tiles, 256 threads, 208 KiB of tiles
// (K 576, V 512 and Q 576 columns of 64 rows), the 8 KiB P tile and the
// rows' statistics (512 bytes).
// CHECK-DAG: mnemo.launch attention_mma grid 1 2 {{[0-9]+}} block 256 1 1 shared 221696 args
// Two query tokens of 16 heads (DeepSeek-V2-Lite): 4 positions a block.
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 1 1 {{[0-9]+}} block 256 1 1 shared 221696 args
// A whole prompt of 100 tokens: a block a position and head tile, TMA (its
// two mbarriers push the P tile to the next 1024 bytes).
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 100 2 1 block 256 1 1 shared 222720 args
// Values in the keys: two K tiles of 576 columns and Q (216 KiB), the P
// tile and the statistics.
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 1 2 {{[0-9]+}} block 256 1 1 shared 229888 args
// FP8: the bf16 K tile, Q, two raw tiles and their scales, the K tile's
// scales (217 KiB), the P tile and the statistics.
// CHECK-DAG: mnemo.launch attention_mma_{{[0-9]+}} grid 1 2 {{[0-9]+}} block 256 1 1 shared 230912 args
// A value scale pool of its own is not the keys': V would need a tile of
// its own, and FP8 at 576 keeps the decomposition (remark below).
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-DAG: cp.async.bulk.tensor
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill stores
// sm_80 (A100: 163 KiB a block) takes values in the keys' tile: one K
// tile (the next loaded after the PV product) and Q, 144 KiB; mma.sync, 8
// warps, each scoring all 64 keys for its 16 rows and accumulating half of
// O, Q's fragments read a k-step at a time. A value pool of its own, FP8
// (a ring beside the tiles) and a whole prompt's K, V and Q tiles do not
// fit.
// The two sm_80 attention kernels (the decompositions' own kernels may
// spill a few bytes there).
// PTXAS80: entry function 'attention_mma{{[_0-9]*}}' for 'sm_80'{{$}}
// PTXAS80-NEXT: Function properties
// PTXAS80-NEXT: 0 bytes stack frame, 0 bytes spill stores
// PTXAS80: entry function 'attention_mma{{[_0-9]*}}' for 'sm_80'{{$}}
// PTXAS80-NEXT: Function properties
// PTXAS80-NEXT: 0 bytes stack frame, 0 bytes spill stores
// SM80-COUNT-2: keeps the paged decomposition: head dim above 256 without wgmma
// SM80: reads its pages in the kernel, values in the keys' tile
// SM80: keeps the paged decomposition: tiles exceed the shared memory limit
// SM80: keeps the paged decomposition: head dim above 256 without wgmma
// SM80: reads its pages in the kernel, selected keys, values in the keys' tile
// SM80: keeps the paged decomposition: tiles exceed the shared memory limit
// SM80: keeps the tiled path: head dim above 256 without wgmma

func.func @decode_h128(%q: tensor<4x128x1x576xbf16>, %kp: tensor<40x1x16x576xbf16>, %vp: tensor<40x1x16x512xbf16>, %table: tensor<4x10xi32>, %lens: tensor<4xi64>, %pos: tensor<4x1xi64>) -> tensor<4x128x1x512xbf16> {
  // expected-remark @below {{reads its pages in the kernel}}
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal scale(0.1352)
      : tensor<4x128x1x576xbf16>, tensor<40x1x16x576xbf16>, tensor<40x1x16x512xbf16>, tensor<4x10xi32>, tensor<4xi64>, tensor<4x1xi64> -> tensor<4x128x1x512xbf16>
  return %o : tensor<4x128x1x512xbf16>
}

func.func @decode_h16_sq2(%q: tensor<3x16x2x576xbf16>, %kp: tensor<30x1x16x576xbf16>, %vp: tensor<30x1x16x512xbf16>, %table: tensor<3x10xi32>, %lens: tensor<3xi64>, %pos: tensor<3x2xi64>) -> tensor<3x16x2x512xbf16> {
  // expected-remark @below {{reads its pages in the kernel}}
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal scale(0.1352)
      : tensor<3x16x2x576xbf16>, tensor<30x1x16x576xbf16>, tensor<30x1x16x512xbf16>, tensor<3x10xi32>, tensor<3xi64>, tensor<3x2xi64> -> tensor<3x16x2x512xbf16>
  return %o : tensor<3x16x2x512xbf16>
}

func.func @decode_values_in_keys(%q: tensor<4x128x1x576xbf16>, %kp: tensor<40x1x16x576xbf16>, %table: tensor<4x10xi32>, %lens: tensor<4xi64>, %pos: tensor<4x1xi64>) -> tensor<4x128x1x512xbf16> {
  %vp = tensor.extract_slice %kp[0, 0, 0, 0] [40, 1, 16, 512] [1, 1, 1, 1] : tensor<40x1x16x576xbf16> to tensor<40x1x16x512xbf16>
  // expected-remark @below {{reads its pages in the kernel, values in the keys' tile}}
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal scale(0.1352)
      : tensor<4x128x1x576xbf16>, tensor<40x1x16x576xbf16>, tensor<40x1x16x512xbf16>, tensor<4x10xi32>, tensor<4xi64>, tensor<4x1xi64> -> tensor<4x128x1x512xbf16>
  return %o : tensor<4x128x1x512xbf16>
}

func.func @decode_fp8_values_in_keys(%q: tensor<4x128x1x576xbf16>, %kp: tensor<40x1x16x576xf8E4M3FN>, %ks: tensor<40x1x16xf32>, %table: tensor<4x10xi32>, %lens: tensor<4xi64>, %pos: tensor<4x1xi64>) -> tensor<4x128x1x512xbf16> {
  %vp = tensor.extract_slice %kp[0, 0, 0, 0] [40, 1, 16, 512] [1, 1, 1, 1] : tensor<40x1x16x576xf8E4M3FN> to tensor<40x1x16x512xf8E4M3FN>
  // expected-remark @below {{reads its pages in the kernel, values in the keys' tile}}
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %ks : tensor<40x1x16xf32>, tensor<40x1x16xf32>) table %table lengths %lens positions %pos causal scale(0.1352)
      : tensor<4x128x1x576xbf16>, tensor<40x1x16x576xf8E4M3FN>, tensor<40x1x16x512xf8E4M3FN>, tensor<4x10xi32>, tensor<4xi64>, tensor<4x1xi64> -> tensor<4x128x1x512xbf16>
  return %o : tensor<4x128x1x512xbf16>
}

func.func @decode_fp8_own_value_scales(%q: tensor<4x128x1x576xbf16>, %kp: tensor<40x1x16x576xf8E4M3FN>, %ks: tensor<40x1x16xf32>, %vs: tensor<40x1x16xf32>, %table: tensor<4x10xi32>, %lens: tensor<4xi64>, %pos: tensor<4x1xi64>) -> tensor<4x128x1x512xbf16> {
  %vp = tensor.extract_slice %kp[0, 0, 0, 0] [40, 1, 16, 512] [1, 1, 1, 1] : tensor<40x1x16x576xf8E4M3FN> to tensor<40x1x16x512xf8E4M3FN>
  // expected-remark @below {{keeps the paged decomposition: tiles exceed the shared memory limit}}
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<40x1x16xf32>, tensor<40x1x16xf32>) table %table lengths %lens positions %pos causal scale(0.1352)
      : tensor<4x128x1x576xbf16>, tensor<40x1x16x576xf8E4M3FN>, tensor<40x1x16x512xf8E4M3FN>, tensor<4x10xi32>, tensor<4xi64>, tensor<4x1xi64> -> tensor<4x128x1x512xbf16>
  return %o : tensor<4x128x1x512xbf16>
}

// Selected keys (DeepSeek-V3.2's top-k over the latent cache): a block's
// rows share one query position, its key tiles are the position's entries,
// each read through the block table.
func.func @decode_selected_h16_sq2(%q: tensor<3x16x2x576xbf16>, %kp: tensor<30x1x16x576xbf16>, %table: tensor<3x10xi32>, %lens: tensor<3xi64>, %pos: tensor<3x2xi64>, %idx: tensor<3x2x40xi32>) -> tensor<3x16x2x512xbf16> {
  %vp = tensor.extract_slice %kp[0, 0, 0, 0] [30, 1, 16, 512] [1, 1, 1, 1] : tensor<30x1x16x576xbf16> to tensor<30x1x16x512xbf16>
  // expected-remark @below {{reads its pages in the kernel, selected keys, values in the keys' tile}}
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos scale(0.1352) indices(%idx : tensor<3x2x40xi32>)
      : tensor<3x16x2x576xbf16>, tensor<30x1x16x576xbf16>, tensor<30x1x16x512xbf16>, tensor<3x10xi32>, tensor<3xi64>, tensor<3x2xi64> -> tensor<3x16x2x512xbf16>
  return %o : tensor<3x16x2x512xbf16>
}

func.func @decode_fp8_selected(%q: tensor<4x128x1x576xbf16>, %kp: tensor<40x1x16x576xf8E4M3FN>, %ks: tensor<40x1x16xf32>, %table: tensor<4x10xi32>, %lens: tensor<4xi64>, %pos: tensor<4x1xi64>, %idx: tensor<4x1x2048xi64>) -> tensor<4x128x1x512xbf16> {
  %vp = tensor.extract_slice %kp[0, 0, 0, 0] [40, 1, 16, 512] [1, 1, 1, 1] : tensor<40x1x16x576xf8E4M3FN> to tensor<40x1x16x512xf8E4M3FN>
  // expected-remark @below {{reads its pages in the kernel, selected keys, values in the keys' tile}}
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %ks : tensor<40x1x16xf32>, tensor<40x1x16xf32>) table %table lengths %lens positions %pos scale(0.1352) indices(%idx : tensor<4x1x2048xi64>)
      : tensor<4x128x1x576xbf16>, tensor<40x1x16x576xf8E4M3FN>, tensor<40x1x16x512xf8E4M3FN>, tensor<4x10xi32>, tensor<4xi64>, tensor<4x1xi64> -> tensor<4x128x1x512xbf16>
  return %o : tensor<4x128x1x512xbf16>
}

func.func @prompt_h128(%q: tensor<1x128x100x576xbf16>, %k: tensor<1x1x100x576xbf16>, %v: tensor<1x1x100x512xbf16>) -> tensor<1x128x100x512xbf16> {
  %o = mnemo.attention %q, %k, %v causal scale(0.1352) : tensor<1x128x100x576xbf16>, tensor<1x1x100x576xbf16>, tensor<1x1x100x512xbf16> -> tensor<1x128x100x512xbf16>
  return %o : tensor<1x128x100x512xbf16>
}
