// A rotate-half rope over all its features is lowered so that each thread
// rotates 4 contiguous features: 8-byte loads of its bf16 features and of
// their partners in the other half, a 16-byte load of 4 inverse frequencies
// and an 8-byte store (convert-mnemo-to-linalg's [B, H, S, 2, r/2] form,
// vectorized by mnemo-gpu-vectorize-elements), with a dynamic length. The
// interleaved pairing indexes its partner with arithmetic on the feature
// and keeps a thread per element.
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o - | FileCheck %s

// CHECK-LABEL: .entry rope_half_kernel(
//       CHECK:   ld.global.v4.b16
//       CHECK:   ld.global.nc.v4.b32
//       CHECK:   ld.global.v4.b16
//       CHECK:   st.global.v2.b32
//   CHECK-NOT:   st.global.b16
//       CHECK: .entry rope_interleaved_kernel(
//   CHECK-NOT:   ld.global{{(.nc)?}}.v
//       CHECK:   st.global.b16
//   CHECK-NOT:   .v4
//       CHECK: }
func.func @rope_half(%x: tensor<2x4x?x64xbf16>, %pos: tensor<2x?xi64>) -> tensor<2x4x?x64xbf16> {
  %r = mnemo.rope %x, %pos theta(500000.0) : tensor<2x4x?x64xbf16>, tensor<2x?xi64> -> tensor<2x4x?x64xbf16>
  return %r : tensor<2x4x?x64xbf16>
}

func.func @rope_interleaved(%x: tensor<2x4x?x64xbf16>, %pos: tensor<2x?xi64>) -> tensor<2x4x?x64xbf16> {
  %r = mnemo.rope %x, %pos theta(500000.0) interleaved : tensor<2x4x?x64xbf16>, tensor<2x?xi64> -> tensor<2x4x?x64xbf16>
  return %r : tensor<2x4x?x64xbf16>
}
