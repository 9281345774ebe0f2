//===- Quantization.h - quantized weights: codes, scales, decode -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What `mnemo.dequantize` means, in one place: the host-side quantizer the
// importers store weights with, and the IR that decodes codes where a
// kernel loads them (scalars in the reference lowering and the embedding,
// vectors in the CPU GEMM).
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_UTILS_QUANTIZATION_H
#define MNEMO_DIALECT_UTILS_QUANTIZATION_H

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <cstdint>
#include <vector>

namespace mlir::mnemo::quant {

/// QLoRA's NormalFloat4 values, index 0 to 15 (bitsandbytes' table).
ArrayRef<float> nf4Values();

/// Whether `format` packs two codes a byte (int4, nf4; as
/// DequantizeOp::isPacked).
inline bool isPacked(QuantFormat format) {
  return format == QuantFormat::Int4 || format == QuantFormat::NF4;
}

/// A row-major matrix [rows, cols] quantized in groups of `group` columns.
struct QuantizedMatrix {
  std::vector<int8_t> codes;    // [rows, cols] or [rows, ceil(cols / 2)]
  std::vector<float> scales;    // [rows, ceil(cols / group)]
  std::vector<uint8_t> zeros;   // same shape as scales, empty if symmetric
};

/// Round-to-nearest quantization of `values` ([rows, cols] row-major):
/// symmetric (scale = absmax / 127 or / 7, no zero points) or asymmetric
/// (scale = (max - min) / 255 or / 15, zero = round(-min / scale)); nf4
/// (scale = absmax, the nearest table value). `roundScale` is applied to
/// each scale before the codes are chosen (the storage type's rounding),
/// so that codes and stored scales agree.
QuantizedMatrix quantize(ArrayRef<float> values, int64_t rows, int64_t cols,
                         QuantFormat format, int64_t group, bool asymmetric,
                         llvm::function_ref<float(float)> roundScale);

/// FP8 E4M3 quantization of `values` ([rows, cols] row-major) in blocks of
/// `block` x `block` (DeepSeek-V3's 128 x 128): scale = the block's absmax
/// / 448 (f32), each code the E4M3 nearest to value / scale (ties to even).
/// The block's scale repeats on each of its rows, so that the scales are
/// mnemo.dequantize's [rows, ceil(cols / block)] of groups of `block`.
QuantizedMatrix quantizeFP8(ArrayRef<float> values, int64_t rows, int64_t cols,
                            int64_t block);

/// The f32 value of E4M3 byte `code` (the NaN codes read as 480, as the
/// IR's decoding gives them).
float decodeE4M3Value(uint8_t code);

/// The value `quantize`'s output decodes to at (row, col), as
/// mnemo.dequantize computes it in f32.
float dequantizedValue(const QuantizedMatrix &m, int64_t cols,
                       QuantFormat format, int64_t group, int64_t row,
                       int64_t col);

/// The codes of `bytes` (i8, scalar or vector) as f32: the whole byte
/// (int8) or its low or high nibble (int4, nf4); unsigned when the format
/// has zero points; nf4 indices mapped through its table; fp8_e4m3 bytes
/// decoded with integer ops (every target compiles them).
Value decodeCodes(OpBuilder &b, Location loc, QuantFormat format,
                  bool unsignedCodes, Value bytes, bool high);

/// `(codes - zero) * scale` in f32 (`zero` i8 read unsigned, or null);
/// `scale` any float type, shaped like `codes`.
Value scaleCodes(OpBuilder &b, Location loc, Value codes, Value scale,
                 Value zero);

/// Element `indices` of `op`'s result, read from its codes, scales and
/// zero points (f32; the reference lowering and the embedding's lookup).
Value dequantizedElement(OpBuilder &b, Location loc, DequantizeOp op,
                         ValueRange indices);

} // namespace mlir::mnemo::quant

#endif // MNEMO_DIALECT_UTILS_QUANTIZATION_H
