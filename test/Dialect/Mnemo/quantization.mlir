// RUN: mnemo-opt %s --split-input-file | mnemo-opt --split-input-file | FileCheck %s
// RUN: mnemo-opt %s --split-input-file --convert-mnemo-to-linalg --canonicalize | FileCheck %s --check-prefix=LOWER

// mnemo.dequantize round-trips in each format, with and without zero
// points and with leading dims (stacked experts).
// CHECK-LABEL: func.func @formats
// CHECK: mnemo.dequantize %{{.*}}, %{{.*}} format(int4) group(32) : tensor<8x23xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
// CHECK: mnemo.dequantize %{{.*}}, %{{.*}} zero_points(%{{.*}} : tensor<8x3xi8>) format(int8) group(16) : tensor<8x45xi8>, tensor<8x3xf32> -> tensor<8x45xf32>
// CHECK: mnemo.dequantize %{{.*}}, %{{.*}} format(nf4) group(64) : tensor<2x8x32xi8>, tensor<2x8x1xf16> -> tensor<2x8x64xf32>
func.func @formats(%c4: tensor<8x23xi8>, %s4: tensor<8x2xf16>,
                   %c8: tensor<8x45xi8>, %s8: tensor<8x3xf32>, %z8: tensor<8x3xi8>,
                   %cn: tensor<2x8x32xi8>, %sn: tensor<2x8x1xf16>)
    -> (tensor<8x45xf32>, tensor<8x45xf32>, tensor<2x8x64xf32>) {
  %a = mnemo.dequantize %c4, %s4 format(int4) group(32) : tensor<8x23xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  %b = mnemo.dequantize %c8, %s8 zero_points(%z8 : tensor<8x3xi8>) format(int8) group(16) : tensor<8x45xi8>, tensor<8x3xf32> -> tensor<8x45xf32>
  %c = mnemo.dequantize %cn, %sn format(nf4) group(64) : tensor<2x8x32xi8>, tensor<2x8x1xf16> -> tensor<2x8x64xf32>
  return %a, %b, %c : tensor<8x45xf32>, tensor<8x45xf32>, tensor<2x8x64xf32>
}

// -----

// The reference lowering decodes each element from its byte: int4's
// nibble is chosen by the column's parity, the scale by its group.
// LOWER-LABEL: func.func @lower_int4
// LOWER: linalg.generic
// LOWER: linalg.index 1
// LOWER: arith.divui
// LOWER: tensor.extract %{{.*}} : tensor<8x23xi8>
// LOWER: arith.shli
// LOWER: arith.shrsi
// LOWER: arith.sitofp
// LOWER: arith.remui
// LOWER: arith.select
// LOWER: tensor.extract %{{.*}} : tensor<8x2xf16>
// LOWER: arith.extf
// LOWER: arith.mulf
func.func @lower_int4(%c: tensor<8x23xi8>, %s: tensor<8x2xf16>) -> tensor<8x45xf32> {
  %w = mnemo.dequantize %c, %s format(int4) group(32) : tensor<8x23xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

// A quantized embedding table is decoded where a row is read: one generic
// over the ids, with no decoded copy of the whole table.
// LOWER-LABEL: func.func @lower_embedding
// LOWER: linalg.generic
// LOWER-SAME: ins(%{{.*}} : tensor<2x7xi64>)
// LOWER: tensor.extract %{{.*}} : tensor<11x19xi8>
// LOWER: tensor.extract %{{.*}} : tensor<11x3xf16>
// LOWER-NOT: linalg.generic
// LOWER: return
func.func @lower_embedding(%c: tensor<11x19xi8>, %s: tensor<11x3xf16>, %ids: tensor<2x7xi64>) -> tensor<2x7x37xf32> {
  %t = mnemo.dequantize %c, %s format(nf4) group(16) : tensor<11x19xi8>, tensor<11x3xf16> -> tensor<11x37xf32>
  %e = mnemo.embedding %t[%ids] : tensor<11x37xf32>, tensor<2x7xi64> -> tensor<2x7x37xf32>
  return %e : tensor<2x7x37xf32>
}

// -----

// fp8_e4m3: one E4M3 byte a value (no packing), decoded with integer ops:
// sign-extended, shifted and masked, exponent and mantissa under f32's
// fields and the sign at bit 31 (the value times 2^-120), then times 2^120
// and the group's f32 scale.
// CHECK-LABEL: func.func @fp8
// CHECK: mnemo.dequantize %{{.*}}, %{{.*}} format(fp8_e4m3) group(128) : tensor<130x200xi8>, tensor<130x2xf32> -> tensor<130x200xf32>
// LOWER-LABEL: func.func @fp8
// LOWER: linalg.generic
// LOWER: tensor.extract %{{.*}} : tensor<130x200xi8>
// LOWER: arith.extsi {{.*}} : i8 to i32
// LOWER: arith.shli
// LOWER: arith.andi
// LOWER: arith.bitcast {{.*}} : i32 to f32
// LOWER: arith.mulf {{.*}}, %cst
// LOWER: tensor.extract %{{.*}} : tensor<130x2xf32>
// LOWER: arith.mulf
func.func @fp8(%c: tensor<130x200xi8>, %s: tensor<130x2xf32>) -> tensor<130x200xf32> {
  %w = mnemo.dequantize %c, %s format(fp8_e4m3) group(128) : tensor<130x200xi8>, tensor<130x2xf32> -> tensor<130x200xf32>
  return %w : tensor<130x200xf32>
}
