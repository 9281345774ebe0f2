// f32 linear layers on the tensor cores as TF32 (mnemo-gpu-linear-kernel's
// f32-precision). The tiles hold the f32 values as stored: W [N, K] and the
// input copied 4 elements (16 bytes) a cp.async into an f32 view of the
// same shared memory whose 16-bit view ldmatrix reads, every offset the
// 16-bit layout's (a K step of 64 units is 32 f32). K 136 is 272 units:
// 5 steps, the last a quarter full (zero fill).
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="f32-precision=3xtf32" --canonicalize --cse | FileCheck %s --check-prefix=X3
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="f32-precision=tf32" --canonicalize --cse -o %t.x1
// RUN: FileCheck %s --check-prefix=X1 < %t.x1
// RUN: FileCheck %s --check-prefix=X1CVT < %t.x1
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="chip=sm_90a f32-precision=tf32 shared-bytes-limit=232448" --canonicalize --cse | FileCheck %s --check-prefix=SM90
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="chip=sm_90a f32-precision=3xtf32 shared-bytes-limit=232448" --canonicalize --cse | FileCheck %s --check-prefix=SM90X3
// RUN: mnemo-opt %s --mnemo-gpu-linear-kernel="report=true" --verify-diagnostics -o /dev/null
// RUN: not mnemo-opt %s --mnemo-gpu-linear-kernel="f32-precision=f64" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// 3xTF32: 64 x 64 tiles of 2 x 2 warps (32 x 32 each: two
// m16 and four n8 blocks); each k-step rounds every A and B register
// (cvt.rna) and its rest, and each block's product is three m16n8k8 TF32
// MMAs, the two small ones first: 4 k-steps x 2 x 4 blocks x 3 = 96,
// each K step's from zero (the first MMA of a block adds to 0.0), then
// added to the loop's sums with f32 adds.
// X3-LABEL: func.func @prefill
// X3: gpu.launch {{.*}} in ({{.*}} = %c4, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128,
// X3: %[[UNITS:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16384xbf16, #gpu.address_space<workgroup>>
// X3: %[[WIDE:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8192xf32, #gpu.address_space<workgroup>>
// X3: nvgpu.device_async_copy %{{.*}}[%{{.*}}, %{{.*}}], %[[WIDE]][%{{.*}}], 4, %{{.*}} {bypassL1} : memref<200x136xf32> to memref<8192xf32
// X3: scf.for %{{.*}} = %c0 to %c5 step %c1
// X3: nvgpu.ldmatrix %[[UNITS]]
// X3: %[[HI:.*]] = nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// X3: %[[HIF:.*]] = arith.bitcast %[[HI]] : i32 to f32
// X3: %[[REST:.*]] = arith.subf %{{.*}}, %[[HIF]]
// X3: nvvm.convert.float.to.tf32 %[[REST]] {rnd = #nvvm.fp_rnd_mode<rna>}
// X3: nvvm.mma.sync A[{{.*}}] C[%cst, %cst, %cst, %cst]
// X3-COUNT-95: nvvm.mma.sync A[{{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// X3-NOT: nvvm.mma.sync
// X3: function(@linear_mma)

// One product (tf32): each register rounded once (64 roundings), 32 MMAs.
// X1-LABEL: func.func @prefill
// X1CVT-LABEL: func.func @prefill
// X1CVT-COUNT-64: nvvm.convert.float.to.tf32
// X1CVT-NOT: nvvm.convert.float.to.tf32
// X1CVT-LABEL: func.func @big
// X1-COUNT-32: nvvm.mma.sync A[{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// X1-NOT: nvvm.mma.sync
func.func @prefill(%x: tensor<2x100x136xf32>, %w: tensor<200x136xf32>, %b: tensor<200xf32>) -> tensor<2x100x200xf32> {
  // expected-remark @below {{keeps the generic path: f32 weight (f32-precision=f32)}}
  %r = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<200xf32>) : tensor<2x100x136xf32>, tensor<200x136xf32> -> tensor<2x100x200xf32>
  return %r : tensor<2x100x200xf32>
}

// Enough 128 x 128 tiles for every multiprocessor: with one product, on
// sm_90a, wgmma reads both tiles from shared memory, loaded by TMA in boxes
// of 128 rows x 32 f32 (128 bytes, the 128B swizzle), 32 KiB a stage
// (expect_tx), the second K step at column 32; each k-step is one
// m64n128k8 TF32 wgmma (4 a stage). With 3xTF32, once a step's tiles have
// landed every thread rounds its 16-byte chunks of them to TF32 in place
// (vector<4xf32>) and writes their rounded rests to the same place of one of
// two rest buffers after the 4 stages (4 x 32 KiB, then 2 x 32 KiB: 196640
// bytes with the mbarriers), fences them for the async proxy and waits for
// the block; each k-step is then three wgmma, the rests' products first,
// the step's first starting from zero (D <zero>): once the step's group has
// completed (wait 0) its sums are added to the running ones with f32 adds
// (the tensor cores' own accumulation truncates: Gemm::promotes).
// SM90-LABEL: func.func @big
// SM90: nvgpu.tma.create.descriptor %{{.*}} box[%c128, %c32] : memref<*xf32> -> <tensor = memref<128x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// SM90: nvgpu.tma.create.descriptor %{{.*}} box[%c128, %c32] : memref<*xf32>
// SM90: gpu.launch {{.*}} in ({{.*}} = %c12, {{.*}} = %c12, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256,
// SM90: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// SM90: box[%c32_i32, %{{.*}}]
// SM90: scf.for
// SM90-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// SM90X3-LABEL: func.func @big
// X1-LABEL: func.func @big
// SM90X3: gpu.launch {{.*}} in ({{.*}} = %c12, {{.*}} = %c12, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}}) dynamic_shared_memory_size %c196640_i32
// SM90X3: %[[WIDE:.*]] = memref.view %{{.*}}[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<49152xf32, #gpu.address_space<workgroup>>
// SM90X3: scf.for
// SM90X3: nvvm.mbarrier.try_wait.parity
// SM90X3: %[[X:.*]] = vector.load %[[WIDE]][%[[AT:.*]]] : memref<49152xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// SM90X3: nvvm.convert.float.to.tf32 {{.*}}rna
// SM90X3: vector.store %{{.*}}, %[[WIDE]][%[[AT]]]
// SM90X3: vector.store %{{.*}}, %[[WIDE]][%{{.*}}]
// SM90X3: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// SM90X3-NEXT: gpu.barrier
// SM90X3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 8>, D[<f32>, <zero>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// SM90X3-COUNT-11: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// SM90X3-NOT: nvvm.wgmma.mma_async
// SM90X3: nvvm.wgmma.wait.group.sync.aligned 0
// SM90X3: llvm.extractvalue
// SM90X3: llvm.extractvalue
// SM90X3: arith.addf
// SM90X3: llvm.insertvalue
func.func @big(%x: tensor<1500x520xf32>, %w: tensor<1536x520xf32>) -> tensor<1500x1536xf32> {
  // expected-remark @below {{keeps the generic path: f32 weight (f32-precision=f32)}}
  %r = mnemo.linear %x, %w layout(out_in) : tensor<1500x520xf32>, tensor<1536x520xf32> -> tensor<1500x1536xf32>
  return %r : tensor<1500x1536xf32>
}

// With f32-precision=f32 (the default) every f32 layer keeps the generic
// path (the CUDA cores; the remarks above and here); a bad option is an
// error.
// BAD: mnemo-gpu-linear-kernel: f32-precision 'f64' is not 3xtf32, tf32 or f32
func.func @cuda_cores(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{keeps the generic path: f32 weight (f32-precision=f32)}}
  %r = mnemo.linear %x, %w layout(out_in) : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
