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

// An int8 weight with zero points: its codes [N=8, K=64] stored as
// [64, 8], its scales and zero points [8, 2] as [2, 8]; each K step reads
// a scalable vector of codes per vector of a row and decodes it with its
// group's scales and zero points.
// CHECK-LABEL: func.func @int8
// CHECK-DAG: arith.constant dense<3> : tensor<64x8xi8>
// CHECK-DAG: arith.constant dense<2.500000e-01> : tensor<2x8xf32>
// CHECK-DAG: arith.constant dense<5> : tensor<2x8xi8>
// CHECK: vector.vscale
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<64x8xi8>, vector<[4]xi8>
// CHECK: arith.uitofp {{.*}} : vector<[4]xi8> to vector<[4]xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<2x8xf32>, vector<[4]xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<2x8xi8>, vector<[4]xi8>
// CHECK: vector.fma {{.*}} : vector<[4]xf32>
func.func @int8(%x: tensor<5x64xf32>) -> tensor<5x8xf32> {
  %codes = arith.constant dense<3> : tensor<8x64xi8>
  %scales = arith.constant dense<0.25> : tensor<8x2xf32>
  %zeros = arith.constant dense<5> : tensor<8x2xi8>
  %w = mnemo.dequantize %codes, %scales zero_points(%zeros : tensor<8x2xi8>)
      format(int8) group(32)
      : tensor<8x64xi8>, tensor<8x2xf32> -> tensor<8x64xf32>
  %y = mnemo.linear %x, %w layout(out_in)
      : tensor<5x64xf32>, tensor<8x64xf32> -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// -----

// 4-bit codes (two per byte along K) are stored as [K / 2, N] bytes: K step
// kk reads row kk / 2 and shifts its nibbles down by 4 (kk % 2) before
// the decode (sign extension of the low nibble).
// CHECK-LABEL: func.func @int4
// CHECK-DAG: arith.constant dense<3> : tensor<32x8xi8>
// CHECK-DAG: arith.constant dense<2.500000e-01> : tensor<2x8xf32>
// CHECK: vector.vscale
// CHECK: scf.for %[[KK:[0-9a-z_]+]] = {{.*}} -> (vector<[4]xf32>
// CHECK: %[[ROW:[0-9a-z_]+]] = arith.divui %[[KK]], %c2{{[0-9a-z_]*}} : index
// CHECK: arith.remui %[[KK]]
// CHECK: %[[BYTES:[0-9a-z_]+]] = vector.transfer_read %{{[0-9a-z_]+}}[%[[ROW]], %{{[0-9a-z_]+}}], %{{[0-9a-z_]+}} : tensor<32x8xi8>, vector<[4]xi8>
// CHECK: %[[SHIFTED:[0-9a-z_]+]] = arith.shrui %[[BYTES]], %{{[0-9a-z_]+}} : vector<[4]xi8>
// CHECK: arith.shli %[[SHIFTED]]
// CHECK: arith.shrsi
// CHECK: arith.sitofp {{.*}} : vector<[4]xi8> to vector<[4]xf32>
// CHECK: vector.fma {{.*}} : vector<[4]xf32>
func.func @int4(%x: tensor<5x64xf32>) -> tensor<5x8xf32> {
  %codes = arith.constant dense<3> : tensor<8x32xi8>
  %scales = arith.constant dense<0.25> : tensor<8x2xf32>
  %w = mnemo.dequantize %codes, %scales format(int4) group(32)
      : tensor<8x32xi8>, tensor<8x2xf32> -> tensor<8x64xf32>
  %y = mnemo.linear %x, %w layout(out_in)
      : tensor<5x64xf32>, tensor<8x64xf32> -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}
