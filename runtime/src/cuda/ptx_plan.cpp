//===- ptx_plan.cpp - the launch plan in a PTX module's header --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "cuda/ptx_plan.h"

#include "status.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace mnemo::rt;
using namespace mnemo::rt::cuda;

namespace {

constexpr const char *kPrefix = "// mnemo.";
constexpr uint64_t kMaxBytes = uint64_t(1) << 40;

bool parseU64(const std::string &s, uint64_t max, uint64_t &out) {
  if (s.empty() || s[0] < '0' || s[0] > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno || *end || v > max)
    return false;
  out = v;
  return true;
}

bool parseDType(const std::string &s, mnemo_dtype_t &out) {
  for (int d = MNEMO_DTYPE_F32; d <= MNEMO_DTYPE_BOOL; ++d)
    if (s == mnemo_dtype_name(static_cast<mnemo_dtype_t>(d))) {
      out = static_cast<mnemo_dtype_t>(d);
      return true;
    }
  return false;
}

/// `AxBxC` (or `-` for none when `allowEmpty`) into `out`, each at most
/// `max`.
bool parseList(const std::string &s, uint64_t max, bool allowEmpty,
               std::vector<uint64_t> &out) {
  out.clear();
  if (s == "-")
    return allowEmpty;
  size_t start = 0;
  while (true) {
    size_t x = s.find('x', start);
    uint64_t v;
    if (!parseU64(s.substr(start, x - start), max, v))
      return false;
    out.push_back(v);
    if (x == std::string::npos)
      return true;
    start = x + 1;
  }
}

/// "<name> <dtype> <d0>x<d1>..." at `words[at..]`.
bool parseTensor(const std::vector<std::string> &words, size_t at,
                 PlanTensor &t) {
  if (words.size() != at + 3 || !parseDType(words[at + 1], t.dtype))
    return false;
  t.name = words[at];
  uint64_t elements = 1;
  std::vector<uint64_t> dims;
  if (!parseList(words[at + 2], kMaxBytes, /*allowEmpty=*/false, dims))
    return false;
  for (uint64_t d : dims) {
    t.shape.push_back(static_cast<int64_t>(d));
    if (d != 0 && elements > kMaxBytes / d)
      return false; // checked before multiplying: no overflow
    elements *= d;
  }
  t.bytes = elements * mnemo_dtype_size(t.dtype);
  return true;
}

class Parser {
public:
  Parser(const char *what, std::vector<PlanFunction> &out)
      : what(what), out(out) {}

  mnemo_status_t line(size_t number, const std::string &text) {
    this->number = number;
    std::vector<std::string> w;
    std::stringstream ss(text.substr(3));
    for (std::string word; ss >> word;)
      w.push_back(word);
    const std::string &kind = w[0];
    if (kind == "mnemo.function") {
      if (w.size() != 2)
        return bad("expected 'mnemo.function NAME'");
      out.emplace_back();
      out.back().name = w[1];
      return nullptr;
    }
    if (out.empty())
      return bad("plan line before any 'mnemo.function'");
    PlanFunction &f = out.back();
    if (!f.unsupported.empty())
      return nullptr;
    if (kind == "mnemo.input" || kind == "mnemo.output") {
      bool input = kind == "mnemo.input";
      auto &list = input ? f.inputs : f.outputs;
      uint64_t index, buffer = 0;
      size_t at = input ? 2 : 4;
      if (w.size() < 2 || !parseU64(w[1], 1u << 20, index) ||
          index != list.size())
        return bad("tensors must be numbered in order");
      if (!input && (w.size() < 4 || w[2] != "buffer" || f.buffers.empty() ||
                     !parseU64(w[3], f.buffers.size() - 1, buffer)))
        return bad("expected 'mnemo.output I buffer B NAME DTYPE SHAPE'");
      PlanTensor t;
      for (const std::string &word : w)
        if (word.find('?') != std::string::npos)
          return unsupported("dynamic shapes");
      if (!parseTensor(w, at, t))
        return bad("expected NAME DTYPE SHAPE (e.g. 'x f32 2x3')");
      if (!input) {
        if (f.buffers[buffer].bytes < t.bytes)
          return bad("output larger than its buffer");
        f.outputBuffers.push_back(buffer);
      }
      list.push_back(std::move(t));
      return nullptr;
    }
    if (kind == "mnemo.buffer")
      return buffer(f, w);
    if (kind == "mnemo.launch")
      return launch(f, w);
    return bad("unknown plan line");
  }

  mnemo_status_t finish() {
    if (out.empty())
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "%s: no launch plan (not PTX from mnemoc --emit=ptx)",
                        what);
    for (const PlanFunction &f : out) {
      if (!f.unsupported.empty())
        continue;
      for (const PlanBuffer &b : f.buffers)
        if (b.input && (b.index >= f.inputs.size() ||
                        f.inputs[b.index].bytes != b.bytes))
          return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                            "%s: function '%s': an input buffer does not "
                            "match the signature",
                            what, f.name.c_str());
    }
    return nullptr;
  }

private:
  mnemo_status_t bad(const char *why) {
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT, "%s: line %zu: %s", what,
                      number, why);
  }
  mnemo_status_t unsupported(const char *feature) {
    char message[512];
    std::snprintf(message, sizeof(message),
                  "%s: line %zu: %s are not supported by the CUDA executor "
                  "yet",
                  what, number, feature);
    out.back().unsupported = message;
    return nullptr;
  }

  mnemo_status_t buffer(PlanFunction &f, const std::vector<std::string> &w) {
    uint64_t index;
    if (w.size() < 5 || !parseU64(w[1], 1u << 20, index) ||
        index != f.buffers.size())
      return bad("buffers must be numbered in order");
    PlanBuffer b;
    size_t size = 4;
    if (w[2] == "input") {
      if (!parseU64(w[3], 1u << 20, b.index))
        return bad("bad input index");
      b.input = true;
      size = 5;
    } else if (w[2] == "weight") {
      // An artifact's weight, by index (program.cpp checks it against the
      // artifact's weights).
      if (!parseU64(w[3], 1u << 30, b.index))
        return bad("bad weight index");
      b.weight = true;
      size = 5;
    } else if (w[2] == "tensormap") {
      if (mnemo_status_t s = tensorMap(f, w, b.map))
        return s;
      b.tensorMap = true;
      size = 15;
    } else if (w[2] != "temporary") {
      return bad("unknown buffer kind");
    }
    if (w.size() != size + 1 || w[size - 1] != "bytes")
      return bad("expected '... bytes N'");
    if (w[size] == "?")
      return unsupported("dynamic shapes");
    if (!parseU64(w[size], kMaxBytes, b.bytes))
      return bad("bad byte size");
    if (b.tensorMap && b.bytes != 128)
      return bad("a tensor map has 128 bytes");
    f.buffers.push_back(b);
    return nullptr;
  }

  // mnemo.buffer I tensormap of S DTYPE dims D strides S box B swizzle N
  // bytes 128
  mnemo_status_t tensorMap(const PlanFunction &f,
                           const std::vector<std::string> &w,
                           PlanTensorMap &m) {
    if (w.size() != 16 || w[3] != "of" || w[6] != "dims" ||
        w[8] != "strides" || w[10] != "box" || w[12] != "swizzle")
      return bad("expected 'mnemo.buffer I tensormap of S DTYPE dims D "
                 "strides S box B swizzle N bytes 128'");
    if (!parseU64(w[4], f.buffers.size() ? f.buffers.size() - 1 : 0,
                  m.source) ||
        f.buffers.empty() || f.buffers[m.source].tensorMap)
      return bad("a tensor map must map an earlier buffer");
    if (!parseDType(w[5], m.dtype) ||
        (m.dtype != MNEMO_DTYPE_BF16 && m.dtype != MNEMO_DTYPE_F16 &&
         m.dtype != MNEMO_DTYPE_F32))
      return bad("a tensor map's type is bf16, f16 or f32");
    std::vector<uint64_t> box;
    uint64_t swizzle;
    if (!parseList(w[7], kMaxBytes, false, m.dims) || m.dims.empty() ||
        m.dims.size() > 5 ||
        !parseList(w[9], kMaxBytes, true, m.strides) ||
        m.strides.size() + 1 != m.dims.size() ||
        !parseList(w[11], 256, false, box) || box.size() != m.dims.size() ||
        !parseU64(w[13], 128, swizzle) ||
        (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128))
      return bad("bad tensor map dims, strides, box or swizzle");
    for (uint64_t b : box) {
      if (b == 0)
        return bad("bad tensor map box");
      m.box.push_back(static_cast<unsigned>(b));
    }
    // cuTensorMapEncodeTiled's limits: dims in [1, 2^32], strides multiples
    // of 16 below 2^40.
    for (uint64_t d : m.dims)
      if (d == 0 || d > (uint64_t(1) << 32))
        return bad("bad tensor map dims");
    for (uint64_t st : m.strides)
      if (st % 16 || st >= (uint64_t(1) << 40))
        return bad("bad tensor map strides");
    m.swizzle = static_cast<unsigned>(swizzle);
    return nullptr;
  }

  mnemo_status_t launch(PlanFunction &f, const std::vector<std::string> &w) {
    // mnemo.launch K grid X Y Z block X Y Z shared S args A...
    if (w.size() < 13 || w[2] != "grid" || w[6] != "block" ||
        w[10] != "shared" || w[12] != "args")
      return bad("expected 'mnemo.launch K grid X Y Z block X Y Z shared S "
                 "args ...'");
    PlanLaunch l;
    l.kernel = w[1];
    uint64_t v;
    for (int i = 0; i < 3; ++i) {
      if (w[3 + i] == "?" || w[7 + i] == "?")
        return unsupported("dynamic launch sizes");
      if (!parseU64(w[3 + i], 0x7fffffff, v) || v == 0)
        return bad("bad grid size");
      l.grid[i] = v;
      if (!parseU64(w[7 + i], 1024, v) || v == 0)
        return bad("bad block size");
      l.block[i] = v;
    }
    if (!parseU64(w[11], 1u << 20, v))
      return bad("bad shared memory size");
    l.sharedBytes = v;
    for (size_t i = 13; i < w.size(); ++i) {
      size_t colon = w[i].find(':');
      if (colon == std::string::npos)
        return bad("expected KIND:VALUE arguments");
      std::string kind = w[i].substr(0, colon), value = w[i].substr(colon + 1);
      if (value == "?")
        return unsupported("dynamic scalar arguments");
      PlanArgument a;
      if (kind == "buffer") {
        if (f.buffers.empty() ||
            !parseU64(value, f.buffers.size() - 1, a.buffer))
          return bad("argument names no buffer");
      } else if (kind == "i64" || kind == "i32") {
        const char *s = value.c_str();
        errno = 0;
        char *end = nullptr;
        long long x = std::strtoll(s, &end, 10);
        if (errno || *end || !*s)
          return bad("bad integer argument");
        a.kind = kind == "i64" ? PlanArgument::Kind::I64
                               : PlanArgument::Kind::I32;
        a.bits = static_cast<uint64_t>(x);
      } else if (kind == "f32") {
        if (!parseU64(value, 0xffffffffu, a.bits))
          return bad("bad f32 argument (its bits, as an integer)");
        a.kind = PlanArgument::Kind::F32;
      } else {
        return bad("unknown argument kind");
      }
      l.args.push_back(a);
    }
    f.launches.push_back(std::move(l));
    return nullptr;
  }

  const char *what;
  std::vector<PlanFunction> &out;
  size_t number = 0;
};

} // namespace

mnemo_status_t mnemo::rt::cuda::parsePtxPlans(const char *what,
                                              const std::string &text,
                                              std::vector<PlanFunction> &out) {
  Parser parser(what, out);
  std::stringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number)
    if (line.compare(0, std::strlen(kPrefix), kPrefix) == 0)
      MNEMO_RETURN_IF_ERROR(parser.line(number, line));
  return parser.finish();
}
