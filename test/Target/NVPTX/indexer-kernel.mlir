// The lightning indexer on the tensor cores: a block of 4 warps scores 128
// keys of one query position (grid.x the positions, grid.y the key tiles),
// the queries and keys converted to 16 bits as they are stored in shared
// memory (f32 ones only in a 16-bit artifact: a function whose linear
// layers have bf16 weights), mma.sync products with the scale, ReLU and
// head weights applied in registers and the heads summed by shuffles.
// 16-bit keys arrive by cp.async, three tiles in flight (a block scores a
// run of tiles: grid.y covers the runs).
// Head counts that are not multiples of 16 keep the decomposition.
// REQUIRES: ptxas
// RUN: mnemo-opt %s --mnemo-gpu-indexer-kernel="report=true" --verify-diagnostics | FileCheck %s --check-prefix=IR
// RUN: mnemoc %s --target=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.o 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: mnemoc %s --target=sm_80 --emit=ptx -o %t80.ptx
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.o
// RUN: FileCheck %s --check-prefix=SM80 < %t80.ptx

// IR-LABEL: func.func @bf16
// IR: memref.alloc() {alignment = 64 : i64} : memref<2x3x300xf32>
// IR: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c128{{[_0-9]*}},
// IR-SAME: function(@lightning_indexer)
// IR: vector.load {{.*}} vector<8xbf16>
// IR: nvgpu.device_async_copy {{.*}} {bypassL1} : memref<2x300x128xbf16>
// IR: nvgpu.device_async_wait
// IR: nvgpu.ldmatrix
// IR: nvvm.mma.sync
// IR: arith.maximumf
// IR: gpu.shuffle  xor
// IR-LABEL: func.func @rounded
// IR: vector.load {{.*}} vector<8xf32>
// IR: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// IR-LABEL: func.func @paged
// IR: gpu.launch
// IR: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x7xi32>
// IR: nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}], 8, %{{.*}} {bypassL1} : memref<40x1x16x64xbf16>
// IR-LABEL: func.func @f32
// IR: mnemo.lightning_indexer
// IR-LABEL: func.func @heads
// IR: mnemo.lightning_indexer

// 64 heads of 128 and three stages of 128 keys: 112 KiB of tiles. Six
// positions of three key tiles (a block each: 18 blocks fill no
// multiprocessor twice).
// CHECK-DAG: mnemo.launch lightning_indexer grid 6 3 1 block 128 1 1 shared 114688 args
// 128 heads of 256: as many key stages as fit the chip's shared memory
// (three would take 256 KiB): two on sm_90a (192 KiB of 227), one on
// sm_80 (128 KiB of 163).
// CHECK-DAG: mnemo.launch lightning_indexer_{{[0-9]+}} grid 1 8 1 block 128 1 1 shared 196608 args
// SM80: mnemo.launch lightning_indexer_{{[0-9]+}} grid 1 8 1 block 128 1 1 shared 131072 args
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: Compiling entry function 'lightning_indexer{{[_0-9]*}}' for 'sm_90a'
// PTXAS-NEXT: Function properties
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores

func.func @bf16(%q: tensor<2x3x64x128xbf16>, %k: tensor<2x300x128xbf16>, %w: tensor<2x3x64xf32>, %pos: tensor<2x3xi64>, %len: tensor<2xi64>) -> tensor<2x3x300xf32> {
  // expected-remark @below {{tensor-core indexer kernel, operands in 'bf16'}}
  %s = mnemo.lightning_indexer %q, %k, %w positions(%pos : tensor<2x3xi64>) lengths(%len : tensor<2xi64>) causal : tensor<2x3x64x128xbf16>, tensor<2x300x128xbf16>, tensor<2x3x64xf32> -> tensor<2x3x300xf32>
  return %s : tensor<2x3x300xf32>
}

func.func @rounded(%x: tensor<1x7x32xf32>, %wt: tensor<32x32xbf16>, %q: tensor<1x7x16x32xf32>, %k: tensor<1x50x32xf32>, %w: tensor<1x7x16xf32>) -> (tensor<1x7x50xf32>, tensor<1x7x32xf32>) {
  // expected-remark @below {{tensor-core indexer kernel, f32 operands rounded to 'bf16'}}
  %s = mnemo.lightning_indexer %q, %k, %w causal : tensor<1x7x16x32xf32>, tensor<1x50x32xf32>, tensor<1x7x16xf32> -> tensor<1x7x50xf32>
  %y = mnemo.linear %x, %wt layout(out_in) : tensor<1x7x32xf32>, tensor<32x32xbf16> -> tensor<1x7x32xf32>
  return %s, %y : tensor<1x7x50xf32>, tensor<1x7x32xf32>
}

// Paged keys: each key row read through its sequence's block-table entry.
func.func @paged(%q: tensor<4x1x32x64xbf16>, %pool: tensor<40x1x16x64xbf16>, %w: tensor<4x1x32xf32>, %pos: tensor<4x1xi64>, %len: tensor<4xi64>, %table: tensor<4x7xi32>) -> tensor<4x1x112xf32> {
  // expected-remark @below {{tensor-core indexer kernel, operands in 'bf16'}}
  %s = mnemo.lightning_indexer %q, %pool, %w positions(%pos : tensor<4x1xi64>) lengths(%len : tensor<4xi64>) table(%table : tensor<4x7xi32>) causal : tensor<4x1x32x64xbf16>, tensor<40x1x16x64xbf16>, tensor<4x1x32xf32> -> tensor<4x1x112xf32>
  return %s : tensor<4x1x112xf32>
}

func.func @f32(%q: tensor<1x?x16x32xf32>, %k: tensor<1x?x32xf32>, %w: tensor<1x?x16xf32>) -> tensor<1x?x?xf32> {
  // expected-remark @below {{keeps the decomposition: f32 queries and keys outside a 16-bit artifact}}
  %s = mnemo.lightning_indexer %q, %k, %w causal : tensor<1x?x16x32xf32>, tensor<1x?x32xf32>, tensor<1x?x16xf32> -> tensor<1x?x?xf32>
  return %s : tensor<1x?x?xf32>
}

// f32 queries over a bf16 cache's pages (an f32 artifact with a bf16
// cache): the queries rounded to the pages' type.
func.func @f32_over_bf16_pages(%q: tensor<1x1x16x64xf32>, %pool: tensor<9x1x16x64xbf16>, %w: tensor<1x1x16xf32>, %table: tensor<1x9xi32>) -> tensor<1x1x144xf32> {
  // expected-remark @below {{tensor-core indexer kernel, f32 operands rounded to 'bf16'}}
  %s = mnemo.lightning_indexer %q, %pool, %w table(%table : tensor<1x9xi32>) : tensor<1x1x16x64xf32>, tensor<9x1x16x64xbf16>, tensor<1x1x16xf32> -> tensor<1x1x144xf32>
  return %s : tensor<1x1x144xf32>
}

func.func @two_types(%q: tensor<1x5x16x64xf16>, %k: tensor<1x20x64xbf16>, %w: tensor<1x5x16xf32>) -> tensor<1x5x20xf32> {
  // expected-remark @below {{keeps the decomposition: queries and keys of types it does not take together}}
  %s = mnemo.lightning_indexer %q, %k, %w : tensor<1x5x16x64xf16>, tensor<1x20x64xbf16>, tensor<1x5x16xf32> -> tensor<1x5x20xf32>
  return %s : tensor<1x5x20xf32>
}

func.func @heads(%q: tensor<1x5x4x64xbf16>, %k: tensor<1x20x64xbf16>, %w: tensor<1x5x4xf32>) -> tensor<1x5x20xf32> {
  // expected-remark @below {{keeps the decomposition: indexer heads are not a multiple of 16 up to 128}}
  %s = mnemo.lightning_indexer %q, %k, %w : tensor<1x5x4x64xbf16>, tensor<1x20x64xbf16>, tensor<1x5x4xf32> -> tensor<1x5x20xf32>
  return %s : tensor<1x5x20xf32>
}

// The most heads and the widest head dim the kernel takes.
func.func @widest(%q: tensor<1x1x128x256xbf16>, %k: tensor<1x1000x256xbf16>, %w: tensor<1x1x128xf32>) -> tensor<1x1x1000xf32> {
  // expected-remark @below {{tensor-core indexer kernel, operands in 'bf16'}}
  %s = mnemo.lightning_indexer %q, %k, %w : tensor<1x1x128x256xbf16>, tensor<1x1000x256xbf16>, tensor<1x1x128xf32> -> tensor<1x1x1000xf32>
  return %s : tensor<1x1x1000xf32>
}
