// RUN: mnemo-opt %s --split-input-file --mnemo-merge-nested-modules --verify-diagnostics | FileCheck %s

// Helpers that passes added to each nested module: an equal one is kept
// once; a different one of the same name is renamed with its uses.
// CHECK-LABEL: module {
// CHECK-NEXT: func.func @a(
// CHECK-NEXT: call @dealloc_helper(
// CHECK: func.func private @dealloc_helper(
// CHECK: func.func @b(
// CHECK-NEXT: call @dealloc_helper(
// CHECK-NOT: func.func private @dealloc_helper(
// CHECK: func.func @c(
// CHECK-NEXT: call @dealloc_helper_1(
// CHECK: func.func private @dealloc_helper_1(
// CHECK-NEXT: arith.mulf
// CHECK-NOT: func.func private @dealloc_helper(
module {
  module {
    func.func @a(%x: f32) -> f32 {
      %y = call @dealloc_helper(%x) : (f32) -> f32
      return %y : f32
    }
    func.func private @dealloc_helper(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      return %y : f32
    }
  }
  module {
    func.func @b(%x: f32) -> f32 {
      %y = call @dealloc_helper(%x) : (f32) -> f32
      return %y : f32
    }
    func.func private @dealloc_helper(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      return %y : f32
    }
  }
  module {
    func.func @c(%x: f32) -> f32 {
      %y = call @dealloc_helper(%x) : (f32) -> f32
      return %y : f32
    }
    func.func private @dealloc_helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
  }
}

// -----

// A helper equal to its namesake but for a callee that was renamed is
// renamed too.
// CHECK-LABEL: module {
// CHECK: func.func @y(
// CHECK-NEXT: call @outer_1(
// CHECK: func.func private @outer_1(
// CHECK-NEXT: call @inner_1(
// CHECK: func.func private @inner_1(
// CHECK-NEXT: arith.mulf
module {
  module {
    func.func @x(%v: f32) -> f32 {
      %r = call @outer(%v) : (f32) -> f32
      return %r : f32
    }
    func.func private @outer(%v: f32) -> f32 {
      %r = call @inner(%v) : (f32) -> f32
      return %r : f32
    }
    func.func private @inner(%v: f32) -> f32 {
      %r = arith.addf %v, %v : f32
      return %r : f32
    }
  }
  module {
    func.func @y(%v: f32) -> f32 {
      %r = call @outer(%v) : (f32) -> f32
      return %r : f32
    }
    func.func private @outer(%v: f32) -> f32 {
      %r = call @inner(%v) : (f32) -> f32
      return %r : f32
    }
    func.func private @inner(%v: f32) -> f32 {
      %r = arith.mulf %v, %v : f32
      return %r : f32
    }
  }
}

// -----

// A nested module that changed a top-level attribute cannot be merged.
module attributes {mnemo.tag = 1 : i64} {
  // expected-error @+1 {{nested module sets 'mnemo.tag' differently from the top module}}
  module attributes {mnemo.tag = 2 : i64} {
  }
}

// -----

// Equal declarations are kept once; a declaration names a function outside
// the module, so a different one of the same name is an error, not a rename.
module {
  module {
    func.func private @malloc(i64) -> !llvm.ptr
  }
  module {
    func.func private @malloc(i64) -> !llvm.ptr
  }
  module {
    // expected-error @+1 {{'malloc' is declared differently in two independent parts of the module}}
    func.func private @malloc(i32) -> !llvm.ptr
  }
}

// -----

// So is a public function.
module {
  module {
    func.func @entry(%x: f32) -> f32 {
      return %x : f32
    }
  }
  module {
    // expected-error @+1 {{'entry' is declared differently in two independent parts of the module}}
    func.func @entry(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      return %y : f32
    }
  }
}
