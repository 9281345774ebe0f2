//===- PrequantizedWeights.h - GPTQ and AWQ checkpoints ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Checkpoints whose linear layers are already quantized hold, in place of a
// module's `weight`, packed 32-bit words of codes (`qweight`), packed zero
// points (`qzeros`), per-group scales (`scales`) and, for GPTQ, each input
// feature's group (`g_idx`); bitsandbytes' NF4 keeps `weight` as packed
// 4-bit indices beside its block scales and quant state. These unpack them into the layout of
// mnemo.dequantize (codes [N, K] along the input features, a scale and a
// zero point per group), keeping every code, scale and zero point as it is:
// the weights the artifact decodes are the checkpoint's, bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_FRONTEND_CHECKPOINT_PREQUANTIZEDWEIGHTS_H
#define MNEMO_LIB_FRONTEND_CHECKPOINT_PREQUANTIZEDWEIGHTS_H

#include "ModelConfig.h"
#include "mnemo/Frontend/Checkpoint/Safetensors.h"

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mnemo {

/// A linear layer's weight [N, K] in mnemo.dequantize's layout:
/// w[n, k] = (code[n, k] - zero[n, g]) * scale[n, g], g = k / groupSize.
struct UnpackedWeight {
  int64_t bits = 4;
  /// 4-bit indices into the NF4 table (no zero points), else integer codes.
  bool nf4 = false;
  /// FP8 E4M3 codes (8 bits, no zero points; f32 scales).
  bool fp8 = false;
  /// Non-zero when the scales' blocks run across rows (bitsandbytes blocks
  /// the flattened weight): the layout is then that of the weight viewed as
  /// [flatRows, groupSize], one group per row.
  int64_t flatRows = 0;
  int64_t groupSize = 0, groups = 0;
  /// [N, K] bytes (8 bits), or [N, ceil(K / 2)] with column 2i in the low
  /// nibble of byte i (4 bits); unsigned.
  std::vector<uint8_t> codes;
  std::vector<uint8_t> zeros; // [N, groups]
  /// [N, groups]: the checkpoint's f16 scales as they are, else (BF16, F32)
  /// their values in f32 (exact).
  std::vector<uint16_t> f16Scales;
  std::vector<float> f32Scales;
};

/// Whether module `stem` ("model.layers.0.mlp.up_proj") is stored quantized
/// (has a `qweight`, or a `weight.absmax`).
bool isPrequantized(const SafetensorsCheckpoint &weights, llvm::StringRef stem);

/// Unpacks module `stem`'s tensors as the weight [n, k]; false, with
/// `error` one line naming the file and the tensor, when they are missing,
/// mis-shaped, of another dtype, or use what mnemo.dequantize cannot hold
/// (GPTQ's act-order groups, a zero point past 255).
bool unpackPrequantized(const PrequantizedConfig &config,
                        const SafetensorsCheckpoint &weights,
                        llvm::StringRef stem, int64_t n, int64_t k,
                        UnpackedWeight &out, std::string &error);

/// The values `w` decodes to, [N, K] in f32 (exact: a small integer times
/// the scale).
std::vector<float> dequantized(const UnpackedWeight &w, int64_t n, int64_t k);

} // namespace mlir::mnemo

#endif // MNEMO_LIB_FRONTEND_CHECKPOINT_PREQUANTIZEDWEIGHTS_H
