//===- CheckpointMutator.cpp - structure-aware checkpoint mutation -*- C++ -*-//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CheckpointMutator.h"
#include "IntegerSteps.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace mnemo::fuzz {
namespace {

namespace json = llvm::json;

/// A place in a JSON document: an object's member or an array's element.
struct Slot {
  json::Object *object = nullptr;
  std::string key;
  json::Array *array = nullptr;
  size_t index = 0;
  json::Value *value = nullptr;
};

void collect(json::Value &v, std::vector<Slot> &slots) {
  if (json::Object *o = v.getAsObject()) {
    for (auto &[key, member] : *o) {
      slots.push_back({o, key.str(), nullptr, 0, &member});
      collect(member, slots);
    }
  } else if (json::Array *a = v.getAsArray()) {
    for (size_t i = 0; i < a->size(); ++i) {
      slots.push_back({nullptr, "", a, i, &(*a)[i]});
      collect((*a)[i], slots);
    }
  }
}

class Mutator {
public:
  explicit Mutator(unsigned seed) : rng(seed) {}

  size_t below(size_t n) { return n == 0 ? 0 : rng() % n; }
  bool coin() { return rng() & 1; }

  int64_t interestingInt(int64_t v) {
    static constexpr int64_t special[] = {0,
                                          1,
                                          -1,
                                          2,
                                          3,
                                          4,
                                          7,
                                          8,
                                          16,
                                          64,
                                          1000,
                                          1 << 20,
                                          std::numeric_limits<int32_t>::max(),
                                          std::numeric_limits<int64_t>::max(),
                                          std::numeric_limits<int64_t>::min()};
    switch (below(4)) {
    case 0:
      return applyStep(v, IntegerStep::Next);
    case 1:
      return applyStep(v, IntegerStep::Previous);
    case 2:
      return applyStep(v, IntegerStep::Double);
    default:
      return special[below(std::size(special))];
    }
  }

  json::Value interestingNumber(const json::Value &old) {
    if (std::optional<int64_t> i = old.getAsInteger())
      return interestingInt(*i);
    static constexpr double special[] = {
        0.0,
        -1.0,
        1e-30,
        1e30,
        std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN(),
        0.5,
        8.0};
    double v = old.getAsNumber().value_or(1.0);
    return coin() ? v * (coin() ? 2.0 : -1.0)
                  : special[below(std::size(special))];
  }

  json::Value someString() {
    static const char *const pool[] = {"llama",
                                       "mistral",
                                       "qwen2",
                                       "qwen3",
                                       "deepseek_v3",
                                       "deepseek_v32",
                                       "deepseek_v4",
                                       "LlamaForCausalLM",
                                       "DeepseekV3ForCausalLM",
                                       "DeepseekV32ForCausalLM",
                                       "DeepseekV4ForCausalLM",
                                       "default",
                                       "linear",
                                       "dynamic",
                                       "yarn",
                                       "llama3",
                                       "longrope",
                                       "silu",
                                       "gelu",
                                       "noaux_tc",
                                       "sigmoid",
                                       "softmax",
                                       "sqrtsoftplus",
                                       "bfloat16",
                                       "float16",
                                       ""};
    return std::string(pool[below(std::size(pool))]);
  }

  /// Config keys the importers read that a small seed may lack (owned: a
  /// json::ObjectKey made from a StringRef borrows it).
  std::string someKey() {
    static const char *const pool[] = {"sliding_window",
                                       "head_dim",
                                       "rope_scaling",
                                       "rope_parameters",
                                       "q_lora_rank",
                                       "kv_lora_rank",
                                       "qk_rope_head_dim",
                                       "qk_nope_head_dim",
                                       "v_head_dim",
                                       "n_routed_experts",
                                       "n_shared_experts",
                                       "num_experts_per_tok",
                                       "first_k_dense_replace",
                                       "moe_intermediate_size",
                                       "index_topk",
                                       "index_n_heads",
                                       "index_head_dim",
                                       "compress_ratios",
                                       "attention_bias",
                                       "tie_word_embeddings",
                                       "rope_theta",
                                       "n_group",
                                       "topk_group",
                                       "routed_scaling_factor",
                                       "max_position_embeddings",
                                       "num_key_value_heads",
                                       "layer_types",
                                       "use_qk_norm"};
    return std::string(pool[below(std::size(pool))]);
  }

  /// One change to the document: a value replaced, a member removed, or a
  /// member added (a known key, or a copy of another value).
  void mutateDocument(json::Value &root) {
    std::vector<Slot> slots;
    collect(root, slots);
    json::Object *top = root.getAsObject();
    if (slots.empty() || (top && below(5) == 0)) {
      if (top)
        (*top)[someKey()] =
            slots.empty() ? json::Value(int64_t(below(64)))
                          : json::Value(*slots[below(slots.size())].value);
      return;
    }
    Slot &s = slots[below(slots.size())];
    json::Value &v = *s.value;
    switch (below(5)) {
    case 0: // Removed.
      if (s.object)
        s.object->erase(s.key);
      else
        s.array->erase(s.array->begin() + s.index);
      return;
    case 1: // Another type.
      v = coin()   ? json::Value(nullptr)
          : coin() ? json::Value(json::Array{v})
                   : someString();
      return;
    case 2: // A copy of another value.
      v = json::Value(*slots[below(slots.size())].value);
      return;
    default:
      if (v.getAsNumber())
        v = interestingNumber(v);
      else if (v.getAsString())
        v = someString();
      else if (std::optional<bool> b = v.getAsBoolean())
        v = !*b;
      else if (json::Array *a = v.getAsArray())
        a->push_back(a->empty() ? json::Value(int64_t(1)) : (*a)[0]);
      else
        v = int64_t(below(64));
      return;
    }
  }

  /// One change to the safetensors header: an entry's dtype, shape, data
  /// offsets or name, or the entry removed; the data stays.
  bool mutateSafetensors(std::string &file) {
    if (file.size() < 8)
      return false;
    uint64_t n = 0;
    std::memcpy(&n, file.data(), 8);
    if (n > file.size() - 8)
      return false;
    llvm::Expected<json::Value> header =
        json::parse(llvm::StringRef(file.data() + 8, n));
    if (!header) {
      llvm::consumeError(header.takeError());
      return false;
    }
    json::Object *entries = header->getAsObject();
    if (!entries || entries->empty())
      return false;
    std::vector<std::string> names;
    for (auto &[name, entry] : *entries)
      names.push_back(name.str());
    std::string name = names[below(names.size())];
    json::Object *entry = (*entries)[name].getAsObject();
    switch (entry ? below(6) : 5) {
    case 0: {
      static const char *const dtypes[] = {"F32",  "BF16",    "F16", "F8_E4M3",
                                           "F64",  "I64",     "I32", "U8",
                                           "BOOL", "F8_E5M2", "X"};
      (*entry)["dtype"] = dtypes[below(std::size(dtypes))];
      break;
    }
    case 1:
      if (json::Array *shape = entry->getArray("shape")) {
        if (!shape->empty() && coin()) {
          json::Value &d = (*shape)[below(shape->size())];
          d = interestingInt(d.getAsInteger().value_or(1));
        } else if (coin() || shape->empty()) {
          shape->push_back(int64_t(1 + below(4)));
        } else {
          shape->erase(shape->end() - 1);
        }
      }
      break;
    case 2:
      if (json::Array *offsets = entry->getArray("data_offsets");
          offsets && !offsets->empty()) {
        json::Value &o = (*offsets)[below(offsets->size())];
        o = interestingInt(o.getAsInteger().value_or(0));
      }
      break;
    case 3: { // Renamed after another tensor, or edited.
      json::Value moved = std::move((*entries)[name]);
      entries->erase(name);
      std::string other = names[below(names.size())];
      (*entries)[coin() ? other : name + "x"] = std::move(moved);
      break;
    }
    case 4: // Copied under another name: a tensor the config may ask for.
      (*entries)[names[below(names.size())] + ".bias"] =
          json::Value(json::Object(*entry));
      break;
    default:
      entries->erase(name);
      break;
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << *header;
    os.flush();
    uint64_t length = text.size();
    std::string out(8, '\0');
    std::memcpy(out.data(), &length, 8);
    file = out + text + file.substr(8 + n);
    return true;
  }

private:
  std::minstd_rand rng;
};

} // namespace

std::pair<llvm::StringRef, llvm::StringRef>
splitCheckpoint(llvm::StringRef packed) {
  size_t nul = packed.find('\0');
  if (nul == llvm::StringRef::npos)
    return {packed, llvm::StringRef()};
  return {packed.take_front(nul), packed.drop_front(nul + 1)};
}

size_t mutateCheckpoint(uint8_t *data, size_t size, size_t maxSize,
                        unsigned seed) {
  auto [configText, weightsText] = splitCheckpoint(
      llvm::StringRef(reinterpret_cast<const char *>(data), size));
  std::string config = configText.str(), weights = weightsText.str();
  Mutator m(seed);
  bool changed = false;
  if (seed % 16 != 0) {
    if (m.coin()) {
      llvm::Expected<json::Value> doc = json::parse(config);
      if (doc) {
        m.mutateDocument(*doc);
        std::string text;
        llvm::raw_string_ostream os(text);
        os << *doc;
        os.flush();
        config = text;
        changed = true;
      } else {
        llvm::consumeError(doc.takeError());
      }
    } else {
      changed = m.mutateSafetensors(weights);
    }
  }
  if (!changed) {
    // libFuzzer's byte mutations, on one part.
    std::string &part = m.coin() ? config : weights;
    size_t original = part.size();
    part.resize(original + 64);
    part.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t *>(part.data()),
                                 original, part.size()));
    // A NUL in the config would move the split; keep it out.
    config.erase(std::remove(config.begin(), config.end(), '\0'), config.end());
  }
  std::string packed = config + '\0' + weights;
  if (packed.size() > maxSize)
    return size <= maxSize ? size : 0;
  std::memcpy(data, packed.data(), packed.size());
  return packed.size();
}

} // namespace mnemo::fuzz
