// Checks that every --emit stage of mnemoc can be dumped, for both targets.
// RUN: mnemoc %s --emit=mnemo | FileCheck %s --check-prefix=MNEMO
// RUN: mnemoc %s --emit=fused | FileCheck %s --check-prefix=FUSED
// RUN: mnemoc %s --emit=tiled | FileCheck %s --check-prefix=TILED
// RUN: mnemoc %s --emit=tiled --tile-attention=false | FileCheck %s --check-prefix=UNTILED
// RUN: mnemoc %s --emit=llvm --target=aarch64 | FileCheck %s --check-prefix=LLVM
// RUN: mnemoc %s --emit=asm --target=aarch64 | FileCheck %s --check-prefix=A64
// RUN: mnemoc %s --emit=asm --target=x86_64 | FileCheck %s --check-prefix=X86
// RUN: mnemoc %s --emit=obj --target=aarch64 -o %t.o && llvm-readelf -h %t.o | FileCheck %s --check-prefix=OBJ
// RUN: mnemoc %s --target=aarch64 -o %t.mnemo && FileCheck %s --check-prefix=ART < %t.mnemo

// MNEMO: mnemo.rope
// MNEMO: mnemo.attention

// FUSED: func.func @decode
// FUSED: mnemo.attention

// The tiled stage has no mnemo op left and no [Sq, Skv] tensor.
// TILED: scf.forall
// TILED: scf.for
// TILED-NOT: mnemo.
// TILED-NOT: tensor<1x4x?x?xf32>

// Without tiling the score matrix is materialized.
// UNTILED-NOT: scf.forall
// UNTILED: tensor<1x4x?x?xf32>

// LLVM: target triple = "aarch64-unknown-linux-gnu"
// LLVM: define void @mnemo_entry_decode(ptr

// The tile loops are vectorized for NEON (they run in outlined parallel
// bodies, which may follow the entry point).
// A64-DAG: fmla v{{[0-9]+}}.4s
// A64-DAG: mnemo_entry_decode:

// X86: mnemo_entry_decode:

// OBJ: Machine: AArch64

// The artifact carries the FlatBuffer identifier and the names of the signature.
// ART: MNA1
// ART: mnemo_entry_decode

func.func @decode(%x: tensor<1x4x?x32xf32> {mnemo.name = "x"},
                  %k: tensor<1x2x?x32xf32> {mnemo.name = "k"},
                  %v: tensor<1x2x?x32xf32> {mnemo.name = "v"},
                  %p: tensor<1x?xi64> {mnemo.name = "positions"})
    -> (tensor<1x4x?x32xf32> {mnemo.name = "out"}) {
  %q = mnemo.rope %x, %p theta(10000.0)
      : tensor<1x4x?x32xf32>, tensor<1x?xi64> -> tensor<1x4x?x32xf32>
  %o = mnemo.attention %q, %k, %v causal
      : tensor<1x4x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>
      -> tensor<1x4x?x32xf32>
  return %o : tensor<1x4x?x32xf32>
}
