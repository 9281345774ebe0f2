// Head dims above 128 on the tensor cores. sm_90a: D 256 multiplies P by V
// in one wgmma of N 256 (128 f32 accumulators a thread), D 192 / Dv 128
// (DeepSeek's expanded MLA) scores over three 64-column panels and PV of N
// 128; D 160 (no multiple of 64) takes mma.sync. sm_80: mma.sync for all.
// ptxas accepts every kernel, and the sm_90a ones without spilling.
// REQUIRES: ptxas
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.sm_90a.ptx
// RUN: FileCheck %s --check-prefix=SM90 < %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a -v %t.sm_90a.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS90
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t.sm_80.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.o

// Every attention is a kernel of its own: no tiled fallback's kernels.
// SM90-COUNT-3: mnemo.launch attention_mma
// SM90-NOT: mnemo.launch attention_mma
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// SM90-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS90-NOT: {{[1-9][0-9]*}} bytes spill
// SM80-COUNT-3: mnemo.launch attention_mma
// SM80-NOT: wgmma

// Gemma's D 256, GQA 16/8, lengths off the tiles.
func.func @d256(%q: tensor<1x16x150x256xbf16>, %k: tensor<1x8x150x256xbf16>,
                %v: tensor<1x8x150x256xbf16>) -> tensor<1x16x150x256xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<1x16x150x256xbf16>, tensor<1x8x150x256xbf16>, tensor<1x8x150x256xbf16> -> tensor<1x16x150x256xbf16>
  return %o : tensor<1x16x150x256xbf16>
}

// DeepSeek's expanded MLA: D 192 (nope 128 + rope 64), Dv 128.
func.func @mla_d192(%q: tensor<1x16x100x192xbf16>, %k: tensor<1x16x100x192xbf16>,
                    %v: tensor<1x16x100x128xbf16>) -> tensor<1x16x100x128xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<1x16x100x192xbf16>, tensor<1x16x100x192xbf16>, tensor<1x16x100x128xbf16> -> tensor<1x16x100x128xbf16>
  return %o : tensor<1x16x100x128xbf16>
}

// D 160: no whole number of 64-column panels, so mma.sync on both chips.
func.func @d160(%q: tensor<1x4x70x160xbf16>, %k: tensor<1x2x90x160xbf16>,
                %v: tensor<1x2x90x160xbf16>) -> tensor<1x4x70x160xbf16> {
  %o = mnemo.attention %q, %k, %v : tensor<1x4x70x160xbf16>, tensor<1x2x90x160xbf16>, tensor<1x2x90x160xbf16> -> tensor<1x4x70x160xbf16>
  return %o : tensor<1x4x70x160xbf16>
}
