// mnemo-approximate-math replaces math ops with polynomials; with
// keep-fast-tanh it leaves a scalar f32 tanh that asks for an approximation
// (afn) to the target's instruction (NVPTX's tanh.approx.f32).
// RUN: mnemo-opt %s --mnemo-approximate-math | FileCheck %s --check-prefix=ALL
// RUN: mnemo-opt %s --mnemo-approximate-math="keep-fast-tanh=true" | FileCheck %s --check-prefix=KEEP
// RUN: mnemo-opt %s --mnemo-approximate-math="keep-fast-tanh=true" --mnemo-gpu-math-to-intrinsics | FileCheck %s --check-prefix=LLVM

// ALL-LABEL: func.func @tanh
// ALL-NOT: math.tanh
// ALL-NOT: math.exp
// KEEP-LABEL: func.func @tanh
// KEEP: math.tanh %{{.*}} fastmath<afn> : f32
// KEEP-NOT: math.tanh
// KEEP-NOT: math.exp
// KEEP: return
// LLVM-LABEL: func.func @tanh
// LLVM: llvm.intr.tanh(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
// LLVM-NOT: math.tanh
func.func @tanh(%x: f32, %y: f32, %z: vector<4xf32>, %w: f32)
    -> (f32, f32, vector<4xf32>, f32) {
  %a = math.tanh %x fastmath<afn> : f32
  %b = math.tanh %y : f32
  %c = math.tanh %z fastmath<afn> : vector<4xf32>
  %d = math.exp %w fastmath<afn> : f32
  return %a, %b, %c, %d : f32, f32, vector<4xf32>, f32
}
