// RUN: mnemo-opt %s --split-input-file --verify-diagnostics

// Diagnostics of mnemo.dequantize: codes and scales that do not fit the
// result's columns and groups, a bad group size, zero points for nf4.

func.func @int4_codes(%c: tensor<8x45xi8>, %s: tensor<8x2xf16>) -> tensor<8x45xf32> {
  // expected-error @+1 {{codes per row (45) must match int4 codes of 45 columns (23)}}
  %w = mnemo.dequantize %c, %s format(int4) group(32) : tensor<8x45xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @groups(%c: tensor<8x45xi8>, %s: tensor<8x1xf16>) -> tensor<8x45xf32> {
  // expected-error @+1 {{scales per row (1) must match groups of 32 in 45 columns (2)}}
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<8x45xi8>, tensor<8x1xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @group_size(%c: tensor<8x45xi8>, %s: tensor<8x1xf16>) -> tensor<8x45xf32> {
  // expected-error @+1 {{group size must be positive, got 0}}
  %w = mnemo.dequantize %c, %s format(int8) group(0) : tensor<8x45xi8>, tensor<8x1xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @rows(%c: tensor<7x45xi8>, %s: tensor<8x2xf16>) -> tensor<8x45xf32> {
  // expected-error @+1 {{codes dimension 0 (7) must match the result's (8)}}
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<7x45xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @nf4_zero_points(%c: tensor<8x23xi8>, %s: tensor<8x2xf16>, %z: tensor<8x2xi8>) -> tensor<8x45xf32> {
  // expected-error @+1 {{nf4 takes no zero points}}
  %w = mnemo.dequantize %c, %s zero_points(%z : tensor<8x2xi8>) format(nf4) group(32) : tensor<8x23xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @zero_point_shape(%c: tensor<8x45xi8>, %s: tensor<8x2xf16>, %z: tensor<8x3xi8>) -> tensor<8x45xf32> {
  // expected-error @+1 {{zero_points dimension 1 (3) must match the scales' (2)}}
  %w = mnemo.dequantize %c, %s zero_points(%z : tensor<8x3xi8>) format(int8) group(32) : tensor<8x45xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @rank(%c: tensor<45xi8>, %s: tensor<8x2xf16>) -> tensor<8x45xf32> {
  // expected-error @+1 {{expects codes of rank 2 (the result's), got rank 1}}
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<45xi8>, tensor<8x2xf16> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @dynamic_columns(%c: tensor<8x?xi8>, %s: tensor<8x2xf16>) -> tensor<8x?xf32> {
  // expected-error @+1 {{the result's last dimension must be static}}
  %w = mnemo.dequantize %c, %s format(int8) group(32) : tensor<8x?xi8>, tensor<8x2xf16> -> tensor<8x?xf32>
  return %w : tensor<8x?xf32>
}

// -----

func.func @fp8_zero_points(%c: tensor<8x45xi8>, %s: tensor<8x2xf32>, %z: tensor<8x2xi8>) -> tensor<8x45xf32> {
  // expected-error @+1 {{fp8_e4m3 takes no zero points}}
  %w = mnemo.dequantize %c, %s zero_points(%z : tensor<8x2xi8>) format(fp8_e4m3) group(32) : tensor<8x45xi8>, tensor<8x2xf32> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}

// -----

func.func @fp8_packed(%c: tensor<8x23xi8>, %s: tensor<8x2xf32>) -> tensor<8x45xf32> {
  // expected-error @+1 {{codes per row}}
  %w = mnemo.dequantize %c, %s format(fp8_e4m3) group(32) : tensor<8x23xi8>, tensor<8x2xf32> -> tensor<8x45xf32>
  return %w : tensor<8x45xf32>
}
