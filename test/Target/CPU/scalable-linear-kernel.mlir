// RUN: mnemo-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(mnemo-cpu-linear-kernel{lanes=4 vectors=2 rows=12 scalable=true}))" | FileCheck %s

// Scalable vectors (SVE): a constant [N=71, K=45] weight is stored as
// [K, N] (panels would fix their width to one vector length); the panel
// loop steps by vscale x 4 x 2 columns; each K step reads two scalable
// vectors of a weight row, masked at N, and does 12 x 2 FMAs on
// vector<[4]xf32>; the partial sums and the results move as one
// [rows, [4]] transfer per vector of a row, masked at the tile's columns.
// CHECK-LABEL: func.func @scalable
// CHECK: arith.constant dense<{{.+}}> : tensor<45x71xf32>
// CHECK: vector.vscale
// CHECK: scf.forall
// CHECK: scf.for %{{.+}} = %c0 to %{{.+}} step %[[NR:.+]] iter_args
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true, false]} : tensor<?x?xf32>, vector<12x[4]xf32>
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true, false]} : tensor<?x?xf32>, vector<12x[4]xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<45x71xf32>, vector<[4]xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<45x71xf32>, vector<[4]xf32>
// CHECK-COUNT-24: vector.fma {{.*}} : vector<[4]xf32>
// CHECK-NOT: vector.fma
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true, false]} : vector<12x[4]xf32>, tensor<?x?xf32>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true, false]} : vector<12x[4]xf32>, tensor<?x?xf32>
func.func @scalable(%x: tensor<37x45xf32>) -> tensor<37x71xf32> {
  %w = arith.constant dense<0.5> : tensor<71x45xf32>
  %y = mnemo.linear %x, %w layout(out_in)
      : tensor<37x45xf32>, tensor<71x45xf32> -> tensor<37x71xf32>
  return %y : tensor<37x71xf32>
}

// -----

// A quantized weight keeps fixed 128-bit vectors: its codes decode from
// panels of a known width.
// CHECK-LABEL: func.func @quantized
// CHECK-NOT: vector.vscale
// CHECK: vector.fma {{.*}} : vector<4xf32>
func.func @quantized(%x: tensor<5x64xf32>) -> tensor<5x8xf32> {
  %codes = arith.constant dense<3> : tensor<8x64xi8>
  %scales = arith.constant dense<0.25> : tensor<8x2xf32>
  %w = mnemo.dequantize %codes, %scales format(int8) group(32)
      : tensor<8x64xi8>, tensor<8x2xf32> -> tensor<8x64xf32>
  %y = mnemo.linear %x, %w layout(out_in)
      : tensor<5x64xf32>, tensor<8x64xf32> -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}
