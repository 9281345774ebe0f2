// The tiny decoder (dynamic sequence length, weights as constants) compiles
// to one PTX module for sm_80 and sm_90a. Constant weights become device
// data of the module; kernels of dynamic shape get their sizes as scalars,
// which the plan computes from the input dims.
// RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --target=sm_80 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: mnemoc %mnemo_src/examples/tiny-decoder/model.mlir --target=sm_90a --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM90A

// CHECK: // mnemo.function forward
// CHECK: // mnemo.buffer {{[0-9]+}} input 0 bytes e{{[0-9]+}}
// CHECK-NOT: weight
// The attention tiles: one block of 128 threads per tile.
// CHECK: // mnemo.launch {{forward_kernel_[0-9]+}} grid e{{[0-9]+}} 1 1 block 128 1 1
// On sm_90a every kernel waits for the one before it first, and its launch
// is marked programmatic (mnemo-gpu-programmatic-launch); not on sm_80.
// SM90A-SAME: programmatic{{$}}
// SM80-NOT: programmatic
// CHECK: // mnemo.output 0 buffer {{[0-9]+}}
// SM80: .target sm_80
// SM90A: .target sm_90a
// CHECK: .global .align {{[0-9]+}} .b8 __constant_64x32xf32
// CHECK: .visible .entry forward_kernel(
// SM90A: griddepcontrol.wait;
// SM90A-NEXT: griddepcontrol.launch_dependents;
// SM80-NOT: griddepcontrol
// CHECK-NOT: malloc
