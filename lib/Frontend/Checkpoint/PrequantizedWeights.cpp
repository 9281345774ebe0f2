//===- PrequantizedWeights.cpp - GPTQ and AWQ checkpoints -------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The two layouts, for a linear layer of K input and N output features,
// groups of G input features (P = 32 / bits codes per 32-bit word, the
// first in the lowest bits):
//
// * GPTQ (AutoGPTQ, GPTQModel): qweight [K / P, N], word (r, n) holding the
//   codes of inputs rP .. rP + P - 1 of output n; qzeros [ceil(K / G), N / P]
//   packed the same way along the outputs; scales [ceil(K / G), N]; g_idx
//   [K] each input's group. The first checkpoint format ("gptq") stores
//   zero - 1 in qzeros, "gptq_v2" the zero itself. w = s * (q - z).
// * AWQ (AutoAWQ's GEMM kernels): qweight [K, N / 8], qzeros [ceil(K / G),
//   N / 8], 4-bit codes packed along the outputs in the order
//   0, 2, 4, 6, 1, 3, 5, 7 (nibble t of a word holds output 8c + order[t]);
//   scales [ceil(K / G), N]. w = (q - z) * s.
//
//===----------------------------------------------------------------------===//

#include "PrequantizedWeights.h"

#include "ConfigReader.h"
#include "dialects/Mnemo/Utils/Quantization.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include <cstring>

using namespace mlir::mnemo;

void mlir::mnemo::parsePrequantizedConfig(ConfigReader &top,
                                          ModelConfig &config) {
  const llvm::json::Object *q = top.object.getObject("quantization_config");
  if (!q)
    return;
  ConfigReader quant(*q, "quantization_config.", top.error);
  PrequantizedConfig p;
  std::string method = quant.getString("quant_method", "");
  if (method == "gptq") {
    p.method = PrequantizedConfig::Method::GPTQ;
    p.bits = quant.getInt("bits", std::nullopt);
    if (top.error.empty() && p.bits != 4 && p.bits != 8)
      quant.fail("bits", "GPTQ with " + llvm::Twine(p.bits) +
                             " bits is not supported (expected 4 or 8)");
    std::string format = quant.getString("checkpoint_format", "gptq");
    if (format != "gptq" && format != "gptq_v2")
      quant.fail("checkpoint_format", "unsupported '" + format +
                                          "' (expected gptq or gptq_v2)");
    p.zeroMinusOne = format == "gptq";
  } else if (method == "awq") {
    p.method = PrequantizedConfig::Method::AWQ;
    p.bits = quant.getInt("bits", std::nullopt);
    if (top.error.empty() && p.bits != 4)
      quant.fail("bits", "AWQ with " + llvm::Twine(p.bits) +
                             " bits is not supported (expected 4)");
    std::string version = quant.getString("version", "gemm");
    if (llvm::StringRef(version).lower() != "gemm")
      quant.fail("version", "AWQ's '" + version +
                                "' layout is not supported (expected gemm)");
    if (!quant.getBool("zero_point", true))
      quant.fail("zero_point", "AWQ without zero points is not supported");
  } else if (method == "bitsandbytes") {
    p.method = PrequantizedConfig::Method::BitsAndBytesNF4;
    if (!quant.getBool("load_in_4bit", false))
      quant.fail("load_in_4bit", "only 4-bit bitsandbytes checkpoints are "
                                 "supported (not LLM.int8)");
    std::string type = quant.getString("bnb_4bit_quant_type", "fp4");
    if (top.error.empty() && type != "nf4")
      quant.fail("bnb_4bit_quant_type",
                 "'" + type + "' is not supported (expected nf4)");
    config.prequantized = p;
    return;
  } else if (method == "fp8") {
    // DeepSeek-V3's: E4M3 weights with a scale_inv per block of
    // weight_block_size [rows, columns]; activations quantized at run time
    // by the reference kernels, which an f32 artifact does not need.
    p.method = PrequantizedConfig::Method::FP8;
    p.bits = 8;
    if (quant.getString("fmt", "e4m3") != "e4m3")
      quant.fail("fmt", "only e4m3 FP8 weights are supported");
    if (quant.getString("activation_scheme", "dynamic") != "dynamic")
      quant.fail("activation_scheme",
                 "static activation scales are not supported (expected "
                 "dynamic)");
    p.blockRows = p.groupSize = 128;
    if (const llvm::json::Value *v = q->get("weight_block_size")) {
      const llvm::json::Array *block = v->getAsArray();
      std::optional<int64_t> rows, cols;
      if (block && block->size() == 2) {
        rows = (*block)[0].getAsInteger();
        cols = (*block)[1].getAsInteger();
      }
      if (!rows || !cols || *rows < 1 || *cols < 1 || *rows > (1 << 20) ||
          *cols > (1 << 20))
        quant.fail("weight_block_size",
                   "expected two positive integers [rows, columns]");
      else
        std::tie(p.blockRows, p.groupSize) = std::pair(*rows, *cols);
    }
    config.prequantized = p;
    return;
  } else {
    quant.fail("quant_method",
               "checkpoints quantized with '" + method +
                   "' are not supported (expected gptq, awq, bitsandbytes "
                   "or fp8; or an unquantized checkpoint and mnemoc "
                   "--dtype)");
    return;
  }
  int64_t group = quant.getInt("group_size", 128, -1, 1 << 20);
  if (top.error.empty() && group == 0)
    quant.fail("group_size", "must be positive, or -1 for one group");
  p.groupSize = group < 0 ? 0 : group;
  config.prequantized = p;
}

bool mlir::mnemo::isPrequantized(const SafetensorsCheckpoint &weights,
                                 llvm::StringRef stem) {
  return weights.lookup((stem + ".qweight").str()) ||
         weights.lookup((stem + ".weight.absmax").str()) ||
         weights.lookup((stem + ".weight_scale_inv").str());
}

namespace {

/// Looks tensors up with their expected shape and dtype.
struct Tensors {
  const SafetensorsCheckpoint &weights;
  llvm::StringRef stem;
  std::string &error;

  const SafetensorsTensor *get(llvm::StringRef suffix,
                               llvm::ArrayRef<int64_t> shape, bool integer,
                               bool optional = false) {
    using DT = SafetensorsDType;
    return integer ? get(suffix, shape, {DT::I32}, "I32", optional)
                   : get(suffix, shape, {DT::F16, DT::BF16, DT::F32},
                         "F16, BF16 or F32", optional);
  }

  const SafetensorsTensor *get(llvm::StringRef suffix,
                               llvm::ArrayRef<int64_t> shape,
                               std::initializer_list<SafetensorsDType> dtypes,
                               const char *dtypesText, bool optional = false) {
    std::string name = (stem + "." + suffix).str();
    const SafetensorsFile *file = nullptr;
    const SafetensorsTensor *t = weights.lookup(name, &file);
    if (!t) {
      if (!optional)
        error = (weights.getPath() + ": missing tensor '" + name +
                 "' of a quantized layer")
                    .str();
      return nullptr;
    }
    llvm::StringRef path = file ? file->getPath() : weights.getPath();
    if (!llvm::equal(t->shape, shape)) {
      error = (path + ": tensor '" + name + "' has shape " +
               formatShape(t->shape) + ", expected " + formatShape(shape))
                  .str();
      return nullptr;
    }
    if (!llvm::is_contained(dtypes, t->dtype)) {
      error = (path + ": tensor '" + name + "' has dtype " + t->dtypeName +
               ", expected " + dtypesText)
                  .str();
      return nullptr;
    }
    return t;
  }
};

uint32_t wordAt(const SafetensorsTensor &t, int64_t i) {
  uint32_t w;
  std::memcpy(&w, t.bytes.data() + 4 * i, 4);
  return w;
}

/// Stores code `v` of weight element (n, k) in `w`'s layout.
void setCode(UnpackedWeight &w, int64_t k, int64_t n, int64_t col,
             uint32_t v) {
  if (w.bits == 8) {
    w.codes[n * k + col] = uint8_t(v);
    return;
  }
  uint8_t &byte = w.codes[n * ((k + 1) / 2) + col / 2];
  byte |= uint8_t(v << (col % 2 ? 4 : 0));
}

} // namespace

/// bitsandbytes' NF4 (transformers' serialization of a Linear4bit):
/// `weight` the 4-bit indices of the row-major [N, K] weight, two per byte,
/// the first in the high nibble; a scale (absmax) per block of `blocksize`
/// consecutive elements, f32, or with double quantization 8-bit codes into
/// `nested_quant_map` times `nested_absmax` per 256 blocks, plus
/// `nested_offset`, all in f32; `quant_map` the NF4 table; the block size,
/// shape and offset in the JSON of `quant_state.bitsandbytes__nf4`.
static bool unpackBitsAndBytes(const SafetensorsCheckpoint &weights,
                               llvm::StringRef stem, int64_t n, int64_t k,
                               UnpackedWeight &out, std::string &error) {
  using DT = SafetensorsDType;
  auto fail = [&](const llvm::Twine &message) {
    error = (weights.getPath() + ": '" + stem + "': " + message).str();
    return false;
  };
  std::string stateName = (stem + ".weight.quant_state.bitsandbytes__nf4").str();
  const SafetensorsTensor *stateTensor = weights.lookup(stateName);
  if (!stateTensor || stateTensor->dtype != DT::U8)
    return fail("missing U8 tensor 'weight.quant_state.bitsandbytes__nf4'");
  llvm::Expected<llvm::json::Value> state =
      llvm::json::parse(stateTensor->bytes);
  const llvm::json::Object *object = state ? state->getAsObject() : nullptr;
  if (!object) {
    if (!state)
      llvm::consumeError(state.takeError());
    return fail("its quant_state is not a JSON object");
  }
  std::string problem;
  ConfigReader reader(*object, "quant_state.", problem);
  int64_t blocksize = reader.getInt("blocksize", std::nullopt, 1, 1 << 20);
  if (reader.getString("quant_type", "") != "nf4" && problem.empty())
    reader.fail("quant_type", "expected nf4");
  const llvm::json::Array *shape = object->getArray("shape");
  if (problem.empty() &&
      (!shape || shape->size() != 2 || (*shape)[0].getAsInteger() != n ||
       (*shape)[1].getAsInteger() != k))
    reader.fail("shape", "expected [" + llvm::Twine(n) + ", " +
                             llvm::Twine(k) + "]");
  if (problem.empty() && (n * k) % blocksize)
    reader.fail("blocksize", "a partial last block of " +
                                 llvm::Twine(blocksize) + " is not supported");
  bool nested = object->get("nested_offset") != nullptr;
  double offset = nested ? reader.getDouble("nested_offset", 0, false) : 0;
  int64_t nestedBlocksize =
      nested ? reader.getInt("nested_blocksize", std::nullopt, 1, 1 << 20)
             : 1;
  if (!problem.empty())
    return fail(problem);

  int64_t blocks = n * k / blocksize;
  Tensors tensors{weights, stem, error};
  const SafetensorsTensor *codes =
      tensors.get("weight", {n * k / 2, 1}, {DT::U8}, "U8");
  const SafetensorsTensor *table =
      codes ? tensors.get("weight.quant_map", {16}, {DT::F32}, "F32") : nullptr;
  const SafetensorsTensor *absmax =
      table ? tensors.get("weight.absmax", {blocks},
                          {nested ? DT::U8 : DT::F32}, nested ? "U8" : "F32")
            : nullptr;
  if (!absmax)
    return false;
  std::vector<float> tableValues = readFloats(*table);
  if (!llvm::equal(tableValues, quant::nf4Values()))
    return fail("its quant_map is not the NF4 table");
  std::vector<float> scales;
  if (nested) {
    int64_t nestedBlocks = (blocks + nestedBlocksize - 1) / nestedBlocksize;
    const SafetensorsTensor *nestedAbsmax = tensors.get(
        "weight.nested_absmax", {nestedBlocks}, {DT::F32}, "F32");
    const SafetensorsTensor *nestedMap =
        nestedAbsmax ? tensors.get("weight.nested_quant_map", {256}, {DT::F32},
                                   "F32")
                     : nullptr;
    if (!nestedMap)
      return false;
    std::vector<float> outer = readFloats(*nestedAbsmax), map = readFloats(*nestedMap);
    // As bitsandbytes dequantizes the statistics: in f32, the product
    // rounded, then the offset added.
    auto off = static_cast<float>(offset);
    for (int64_t b = 0; b < blocks; ++b) {
      auto q = static_cast<uint8_t>(absmax->bytes[b]);
      float product = map[q] * outer[b / nestedBlocksize];
      scales.push_back(product + off);
    }
  } else {
    scales = readFloats(*absmax);
  }

  out = UnpackedWeight();
  out.bits = 4;
  out.nf4 = true;
  out.groupSize = blocksize;
  // Blocks that run across rows: the weight viewed as one block per row.
  out.flatRows = k % blocksize ? blocks : 0;
  out.groups = k % blocksize ? 1 : k / blocksize;
  out.codes.resize(n * k / 2);
  for (int64_t i = 0; i < n * k / 2; ++i) {
    auto byte = static_cast<uint8_t>(codes->bytes[i]);
    out.codes[i] = uint8_t(byte >> 4 | byte << 4); // first element low
  }
  out.f32Scales = std::move(scales); // block n * groups + g: row n, group g
  return true;
}

/// DeepSeek-V3's FP8: `weight` the E4M3 codes [N, K] as they are,
/// `weight_scale_inv` [ceil(N / R), ceil(K / C)] (F32 or BF16) the scale of
/// each block of R rows and C columns, repeated here on each of its rows
/// (mnemo.dequantize's groups of C along K). NaN codes are refused: the
/// decoding has no NaN.
static bool unpackFP8(const PrequantizedConfig &config,
                      const SafetensorsCheckpoint &weights,
                      llvm::StringRef stem, int64_t n, int64_t k,
                      UnpackedWeight &out, std::string &error) {
  using DT = SafetensorsDType;
  int64_t rows = config.blockRows, cols = config.groupSize;
  int64_t rowBlocks = (n + rows - 1) / rows, groups = (k + cols - 1) / cols;
  Tensors tensors{weights, stem, error};
  const SafetensorsTensor *codes =
      tensors.get("weight", {n, k}, {DT::F8_E4M3}, "F8_E4M3");
  const SafetensorsTensor *scales =
      codes ? tensors.get("weight_scale_inv", {rowBlocks, groups},
                          {DT::F32, DT::BF16}, "F32 or BF16")
            : nullptr;
  if (!scales)
    return false;
  out = UnpackedWeight();
  out.bits = 8;
  out.fp8 = true;
  out.groupSize = cols;
  out.groups = groups;
  out.codes.assign(codes->bytes.begin(), codes->bytes.end());
  for (auto [i, code] : llvm::enumerate(out.codes))
    if ((code & 0x7f) == 0x7f) {
      error = (weights.getPath() + ": tensor '" + stem +
               ".weight' holds an FP8 NaN at element " + llvm::Twine(i))
                  .str();
      return false;
    }
  std::vector<float> blockScales = readFloats(*scales);
  out.f32Scales.resize(n * groups);
  for (int64_t o = 0; o < n; ++o)
    for (int64_t g = 0; g < groups; ++g)
      out.f32Scales[o * groups + g] = blockScales[(o / rows) * groups + g];
  return true;
}

bool mlir::mnemo::unpackPrequantized(const PrequantizedConfig &config,
                                     const SafetensorsCheckpoint &weights,
                                     llvm::StringRef stem, int64_t n,
                                     int64_t k, UnpackedWeight &out,
                                     std::string &error) {
  if (config.method == PrequantizedConfig::Method::BitsAndBytesNF4)
    return unpackBitsAndBytes(weights, stem, n, k, out, error);
  if (config.method == PrequantizedConfig::Method::FP8)
    return unpackFP8(config, weights, stem, n, k, out, error);
  bool gptq = config.method == PrequantizedConfig::Method::GPTQ;
  int64_t bits = config.bits, perWord = 32 / bits;
  uint32_t mask = (uint32_t(1) << bits) - 1;
  int64_t group = config.groupSize ? config.groupSize : k;
  int64_t groups = (k + group - 1) / group;
  auto fail = [&](const llvm::Twine &message) {
    error = (weights.getPath() + ": '" + stem + "': " + message).str();
    return false;
  };
  // The packed dims must hold whole words.
  if (gptq && k % perWord)
    return fail("GPTQ packs " + llvm::Twine(perWord) +
                " input features per word; this layer has " + llvm::Twine(k));
  if (n % perWord)
    return fail("the zero points pack " + llvm::Twine(perWord) +
                " outputs per word; this layer has " + llvm::Twine(n));
  Tensors tensors{weights, stem, error};
  const SafetensorsTensor *qweight =
      gptq ? tensors.get("qweight", {k / perWord, n}, true)
           : tensors.get("qweight", {k, n / perWord}, true);
  const SafetensorsTensor *qzeros =
      qweight ? tensors.get("qzeros", {groups, n / perWord}, true) : nullptr;
  const SafetensorsTensor *scales =
      qzeros ? tensors.get("scales", {groups, n}, false) : nullptr;
  if (!scales)
    return false;
  if (gptq) {
    // Act-order checkpoints (desc_act) permute the groups over the inputs;
    // mnemo.dequantize's groups are contiguous.
    if (const SafetensorsTensor *gIdx = tensors.get("g_idx", {k}, true, true)) {
      for (int64_t i = 0; i < k; ++i)
        if (int64_t(int32_t(wordAt(*gIdx, i))) != i / group)
          return fail("g_idx[" + llvm::Twine(i) + "] is " +
                      llvm::Twine(int32_t(wordAt(*gIdx, i))) + ", not " +
                      llvm::Twine(i / group) +
                      ": act-order (desc_act) groups are not supported");
    } else if (!error.empty()) {
      return false;
    }
  }

  out = UnpackedWeight();
  out.bits = bits;
  out.groupSize = group;
  out.groups = groups;
  out.codes.assign(bits == 8 ? n * k : n * ((k + 1) / 2), 0);
  out.zeros.assign(n * groups, 0);
  // AWQ's order of outputs in a word: nibble t holds output order[t].
  static constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  auto outputOfNibble = [&](int64_t word, int64_t t) {
    return word * perWord + (gptq ? t : kAwqOrder[t]);
  };
  if (gptq) {
    for (int64_t r = 0; r < k / perWord; ++r)
      for (int64_t o = 0; o < n; ++o) {
        uint32_t w = wordAt(*qweight, r * n + o);
        for (int64_t t = 0; t < perWord; ++t)
          setCode(out, k, o, r * perWord + t, (w >> (bits * t)) & mask);
      }
  } else {
    for (int64_t i = 0; i < k; ++i)
      for (int64_t c = 0; c < n / perWord; ++c) {
        uint32_t w = wordAt(*qweight, i * (n / perWord) + c);
        for (int64_t t = 0; t < perWord; ++t)
          setCode(out, k, outputOfNibble(c, t), i, (w >> (bits * t)) & mask);
      }
  }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n / perWord; ++c) {
      uint32_t w = wordAt(*qzeros, g * (n / perWord) + c);
      for (int64_t t = 0; t < perWord; ++t) {
        uint32_t z = ((w >> (bits * t)) & mask) +
                     (gptq && config.zeroMinusOne ? 1 : 0);
        if (z > 255)
          return fail("group " + llvm::Twine(g) + " of output " +
                      llvm::Twine(outputOfNibble(c, t)) +
                      " has zero point 256, past what mnemo.dequantize "
                      "holds");
        out.zeros[outputOfNibble(c, t) * groups + g] = uint8_t(z);
      }
    }
  bool f16 = scales->dtype == SafetensorsDType::F16;
  std::vector<float> values;
  if (f16)
    out.f16Scales.resize(n * groups);
  else {
    values = readFloats(*scales);
    out.f32Scales.resize(n * groups);
  }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t o = 0; o < n; ++o) {
      if (f16)
        std::memcpy(&out.f16Scales[o * groups + g],
                    scales->bytes.data() + 2 * (g * n + o), 2);
      else
        out.f32Scales[o * groups + g] = values[g * n + o];
    }
  return true;
}

static float halfToFloat(uint16_t bits) {
  llvm::APFloat h(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  bool lost;
  h.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return h.convertToFloat();
}

std::vector<float> mlir::mnemo::dequantized(const UnpackedWeight &w,
                                            int64_t n, int64_t k) {
  std::vector<float> out(n * k);
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < k; ++i) {
      int64_t g = i / w.groupSize;
      if (w.fp8) {
        out[o * k + i] = quant::decodeE4M3Value(w.codes[o * k + i]) *
                         w.f32Scales[o * w.groups + g];
        continue;
      }
      uint32_t q = w.bits == 8 ? w.codes[o * k + i]
                               : (w.codes[o * ((k + 1) / 2) + i / 2] >>
                                  (i % 2 ? 4 : 0)) &
                                     0xf;
      if (w.nf4) { // a scale per block of the flattened weight
        out[o * k + i] =
            quant::nf4Values()[q] * w.f32Scales[(o * k + i) / w.groupSize];
        continue;
      }
      float scale = w.f16Scales.empty()
                        ? w.f32Scales[o * w.groups + g]
                        : halfToFloat(w.f16Scales[o * w.groups + g]);
      out[o * k + i] =
          (float(int32_t(q) - int32_t(w.zeros[o * w.groups + g]))) * scale;
    }
  return out;
}
