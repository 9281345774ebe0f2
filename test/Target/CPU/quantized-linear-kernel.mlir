// RUN: mnemo-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(mnemo-cpu-linear-kernel{lanes=16 vectors=2 rows=12}))" | FileCheck %s

// An int4 weight [N=40, K=45] behind mnemo.dequantize: the kernel packs its
// codes into 32-wide panels of 16 bytes per K step (byte c holds column c
// in its low nibble and column c + 16 in its high one) and its scales into
// panels [2, groups, 32]; each K step reads 16 bytes, decodes both nibbles
// (sign-extended: shift left, then arithmetic shift right), joins them in
// column order and multiplies by the step's group scales. No dequantized
// copy of the weight is left.
// CHECK-LABEL: func.func @int4
// CHECK-NOT: mnemo.dequantize
// CHECK-DAG: arith.constant dense<"0x{{[0-9A-F]+}}"> : tensor<2x45x16xi8>
// CHECK-DAG: arith.constant dense<"0x{{[0-9A-F]+}}"> : tensor<2x2x32xf16>
// CHECK: scf.forall
// CHECK: vector.transfer_read {{.*}} : tensor<2x45x16xi8>, vector<16xi8>
// CHECK: arith.shli
// CHECK: arith.shrsi
// CHECK: arith.sitofp {{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: arith.shrsi
// CHECK: vector.shuffle {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK: arith.divui
// CHECK: vector.transfer_read {{.*}} : tensor<2x2x32xf16>, vector<32xf16>
// CHECK: arith.extf {{.*}} : vector<32xf16> to vector<32xf32>
// CHECK: arith.mulf {{.*}} : vector<32xf32>
// CHECK: vector.extract_strided_slice
// CHECK: vector.fma
// CHECK-NOT: mnemo.dequantize
func.func @int4(%x: tensor<?x45xf32>) -> tensor<?x40xf32> {
  %c = arith.constant dense<17> : tensor<40x23xi8>
  %s = arith.constant dense<0.5> : tensor<40x2xf16>
  %w = mnemo.dequantize %c, %s format(int4) group(32) : tensor<40x23xi8>, tensor<40x2xf16> -> tensor<40x45xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<?x45xf32>, tensor<40x45xf32> -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}

// -----

// int8 codes with zero points: one byte per code, read unsigned, the
// group's zero point subtracted before the scale.
// CHECK-LABEL: func.func @int8_zero_points
// CHECK-NOT: mnemo.dequantize
// CHECK-DAG: tensor<1x64x32xi8>
// CHECK-DAG: tensor<1x4x32xf32>
// CHECK-DAG: tensor<1x4x32xi8>
// CHECK: arith.uitofp {{.*}} : vector<32xi8> to vector<32xf32>
// CHECK: arith.uitofp {{.*}} : vector<32xi8> to vector<32xf32>
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @int8_zero_points(%x: tensor<3x64xf32>) -> tensor<3x24xf32> {
  %c = arith.constant dense<3> : tensor<24x64xi8>
  %s = arith.constant dense<0.25> : tensor<24x4xf32>
  %z = arith.constant dense<8> : tensor<24x4xi8>
  %w = mnemo.dequantize %c, %s zero_points(%z : tensor<24x4xi8>) format(int8) group(16) : tensor<24x64xi8>, tensor<24x4xf32> -> tensor<24x64xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<3x64xf32>, tensor<24x64xf32> -> tensor<3x24xf32>
  return %y : tensor<3x24xf32>
}

// -----

// fp8_e4m3: one byte a code, packed as int8's; each K step's 32 bytes are
// decoded to f32 with integer ops, then the group's scales.
// CHECK-LABEL: func.func @fp8
// CHECK-NOT: mnemo.dequantize
// CHECK-DAG: tensor<1x160x32xi8>
// CHECK-DAG: tensor<1x2x32xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<1x160x32xi8>, vector<32xi8>
// CHECK: arith.extsi {{.*}} : vector<32xi8> to vector<32xi32>
// CHECK-NOT: arith.select
// CHECK: arith.bitcast {{.*}} : vector<32xi32> to vector<32xf32>
// CHECK: arith.mulf {{.*}} : vector<32xf32>
// CHECK: arith.mulf {{.*}} : vector<32xf32>
// CHECK: vector.fma
func.func @fp8(%x: tensor<3x160xf32>) -> tensor<3x24xf32> {
  %c = arith.constant dense<56> : tensor<24x160xi8>
  %s = arith.constant dense<0.25> : tensor<24x2xf32>
  %w = mnemo.dequantize %c, %s format(fp8_e4m3) group(128) : tensor<24x160xi8>, tensor<24x2xf32> -> tensor<24x160xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<3x160xf32>, tensor<24x160xf32> -> tensor<3x24xf32>
  return %y : tensor<3x24xf32>
}

// -----

// nf4: the index's four bits select among the table's 16 values (15
// selects), then the scale.
// CHECK-LABEL: func.func @nf4
// CHECK-NOT: mnemo.dequantize
// CHECK: vector.transfer_read {{.*}} : tensor<1x32x16xi8>, vector<16xi8>
// CHECK-COUNT-30: arith.select
// CHECK: vector.shuffle
func.func @nf4(%x: tensor<5x32xf32>) -> tensor<5x20xf32> {
  %c = arith.constant dense<-71> : tensor<20x16xi8>
  %s = arith.constant dense<1.0> : tensor<20x1xf16>
  %w = mnemo.dequantize %c, %s format(nf4) group(32) : tensor<20x16xi8>, tensor<20x1xf16> -> tensor<20x32xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<5x32xf32>, tensor<20x32xf32> -> tensor<5x20xf32>
  return %y : tensor<5x20xf32>
}

// -----

// Groups along N ([K, N], in_out): not the kernel's packing. The weight is
// decoded by mnemo.dequantize's own lowering and read in place.
// CHECK-LABEL: func.func @in_out_kept
// CHECK: mnemo.dequantize
// CHECK: scf.forall
func.func @in_out_kept(%x: tensor<3x16xf32>) -> tensor<3x24xf32> {
  %c = arith.constant dense<3> : tensor<16x24xi8>
  %s = arith.constant dense<0.25> : tensor<16x1xf32>
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<16x24xi8>, tensor<16x1xf32> -> tensor<16x24xf32>
  %y = mnemo.linear %x, %w layout(in_out) : tensor<3x16xf32>, tensor<16x24xf32> -> tensor<3x24xf32>
  return %y : tensor<3x24xf32>
}
