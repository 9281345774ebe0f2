// RUN: mnemo-opt %s --mnemo-cpu-outline-parallel | FileCheck %s
// RUN: mnemoc %s --emit=llvm --target=x86_64 | FileCheck %s --check-prefix=LLVM
// RUN: mnemoc %s --emit=llvm --target=x86_64 | FileCheck %s --check-prefix=FRAME

// A 2-D scf.parallel (an elementwise op on buffers): its outer dim is run by
// the runtime, its inner dim stays a loop inside each iteration; constants
// are rebuilt in the body, buffers and sizes passed. A one-dim loop stays
// where it is.
// CHECK-LABEL: func.func @scale
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[COST:.*]] = arith.constant {{[0-9]+}} : i64
// CHECK: call @scale_parallel0(%arg0, %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %[[COST]])
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: return
// CHECK: func.func private @scale_parallel0_body(%{{.*}}: memref<?x33xf32>, %{{.*}}: memref<?x33xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %[[B:.*]]: index, %[[E:.*]]: index) attributes {llvm.linkage = #llvm.linkage<internal>}
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: scf.for %{{.*}} = %[[B]] to %[[E]]
// CHECK: scf.parallel
// CHECK: func.func private @scale_parallel0({{.*}}, index, i64) attributes {mnemo.parallel_body = @scale_parallel0_body}
func.func @scale(%in: memref<?x33xf32>, %out: memref<?x33xf32>, %v: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c33 = arith.constant 33 : index
  %two = arith.constant 2.0 : f32
  %rows = memref.dim %in, %c0 : memref<?x33xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %c33) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<?x33xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%i, %j] : memref<?x33xf32>
  }
  scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
    memref.store %two, %v[%k] : memref<8xf32>
  }
  return
}

// The whole chain on tensors: the hook table the runtime fills
// (parallel_for, profile, alloc, free), the dispatch that packs its
// arguments and calls mnemo_parallel_for, which calls parallel_for with the
// trampoline (or the trampoline itself when the hook is null), and the
// profile calls around each op.
// LLVM: @mnemo_hooks = {{.*}}global { ptr, ptr, ptr, ptr } zeroinitializer
// LLVM-DAG: define void @mnemo_entry_add
// LLVM-DAG: define internal void @add_parallel{{[0-9]+}}_trampoline(ptr
// LLVM-DAG: call fastcc void @mnemo_parallel_for(ptr nonnull @add_parallel{{[0-9]+}}_trampoline, ptr {{.*}}%{{.*}}, i64 {{.*}}%{{.*}}, i64 {{[0-9]+}})
// LLVM-DAG: define internal fastcc void @mnemo_parallel_for(ptr %[[TRAMP:[0-9]+]], ptr {{.*}}%[[CTX:[0-9]+]], i64 {{.*}}%[[N:[0-9]+]], i64 {{.*}}%[[COST:[0-9]+]])
// LLVM-DAG: call void %{{[0-9]+}}(ptr %[[TRAMP]], ptr {{.*}}%[[CTX]], i64 %[[N]], i64 %[[COST]])
// LLVM-DAG: call void %[[TRAMP]](ptr {{.*}}%[[CTX]], i64 0, i64 %[[N]])
func.func @add(%a: tensor<?x64xf32> {mnemo.name = "a"}, %b: tensor<?x64xf32> {mnemo.name = "b"}) -> (tensor<?x64xf32> {mnemo.name = "c"}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %c = linalg.add ins(%a, %b : tensor<?x64xf32>, tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}

// A frame holds what varies between calls: the two loops' buffers, not
// their static sizes and strides (folded into the body). The loops differ
// only in the global they read, so they share one body and one trampoline
// (mnemo-cpu-merge-kernels); the trampoline is not inlined into its
// caller, which calls the runtime through one shared function.
// FRAME-LABEL: define void @mnemo_entry_twice(
// FRAME: alloca { ptr, ptr }
// FRAME: alloca { ptr, ptr }
// FRAME-NOT: alloca
// FRAME: call fastcc void @mnemo_parallel_for(ptr nonnull @[[FIRST:twice_parallel[0-9]+]]_trampoline,
// FRAME: call fastcc void @mnemo_parallel_for(ptr nonnull @[[FIRST]]_trampoline,
// FRAME: define internal void @[[FIRST]]_trampoline(ptr {{.*}}) #[[ATTRS:[0-9]+]]
// FRAME-NOT: _trampoline(
// FRAME: attributes #[[ATTRS]] = { {{.*}}noinline
memref.global "private" constant @w0 : memref<4x16xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<4x16xf32> = dense<2.0>
func.func @twice(%out: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %g0 = memref.get_global @w0 : memref<4x16xf32>
  %g1 = memref.get_global @w1 : memref<4x16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %x = memref.load %g0[%i, %j] : memref<4x16xf32>
    %y = memref.load %out[%i, %j] : memref<4x16xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %out[%i, %j] : memref<4x16xf32>
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %x = memref.load %g1[%i, %j] : memref<4x16xf32>
    %y = memref.load %out[%i, %j] : memref<4x16xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %out[%i, %j] : memref<4x16xf32>
  }
  return
}
