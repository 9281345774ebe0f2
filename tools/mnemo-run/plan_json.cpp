//===- plan_json.cpp - mnemo-run --dump-plan --------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The artifact's plan tables as JSON, for scripts (scripts/gpu/plan.py):
// they read plans through the schema, never by parsing text.
//
//===----------------------------------------------------------------------===//

#include "plan_json.h"

#include "cli.h"

#include "artifact_generated.h"
#include "mnemo/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fb = ::mnemo::artifact;

namespace {

/// A JSON string literal.
std::string quote(const char *s) {
  std::string out = "\"";
  for (; s && *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string quote(const flatbuffers::String *s) {
  return quote(s ? s->c_str() : "");
}

/// A JSON array of a vector's numbers (copied: 8-byte elements may be
/// unaligned in the buffer).
template <typename T, typename V> std::string numbers(const V *v) {
  std::string out = "[";
  for (size_t i = 0; v && i < v->size(); ++i) {
    T x;
    std::memcpy(&x, v->Data() + i * sizeof(T), sizeof(T));
    out += (i ? ", " : "") + std::to_string(x);
  }
  return out + "]";
}

std::string tensors(const flatbuffers::Vector<
                    flatbuffers::Offset<fb::TensorSig>> *sigs) {
  std::string out = "[";
  for (size_t i = 0; sigs && i < sigs->size(); ++i) {
    const fb::TensorSig *t = sigs->Get(i);
    out += std::string(i ? ", " : "") + "{\"name\": " + quote(t->name()) +
           ", \"dtype\": " +
           quote(mnemo_dtype_name(static_cast<mnemo_dtype_t>(t->dtype()))) +
           ", \"shape\": " + numbers<int64_t>(t->shape()) +
           ", \"max_shape\": " +
           numbers<int64_t>(t->max_shape() ? t->max_shape() : t->shape()) +
           "}";
  }
  return out + "]";
}

std::string gpuBuffer(const fb::Buffer *b) {
  std::string bytes =
      ", \"bytes\": " + std::to_string(b->bytes()) +
      (b->bytes_expr() >= 0
           ? ", \"bytes_expr\": " + std::to_string(b->bytes_expr())
           : std::string()) +
      "}";
  std::string index = std::to_string(b->index());
  switch (b->kind()) {
  case fb::BufferKind::INPUT:
    return "{\"kind\": \"input\", \"input\": " + index + bytes;
  case fb::BufferKind::WEIGHT:
    return "{\"kind\": \"weight\", \"weight\": " + index + bytes;
  case fb::BufferKind::TEMPORARY:
    return "{\"kind\": \"temporary\"" + bytes;
  case fb::BufferKind::TENSOR_MAP: {
    const fb::TensorMap *m = b->tensor_map();
    return "{\"kind\": \"tensor_map\", \"source\": " +
           std::to_string(m->source()) + ", \"dtype\": " +
           quote(mnemo_dtype_name(static_cast<mnemo_dtype_t>(m->dtype()))) +
           ", \"dims\": " + numbers<uint64_t>(m->dims()) +
           ", \"strides\": " + numbers<uint64_t>(m->strides()) +
           ", \"box\": " + numbers<uint32_t>(m->box()) +
           ", \"swizzle\": " + std::to_string(m->swizzle()) +
           (m->dims_exprs()
                ? ", \"dims_exprs\": " + numbers<int32_t>(m->dims_exprs())
                : "") +
           (m->strides_exprs() ? ", \"strides_exprs\": " +
                                     numbers<int32_t>(m->strides_exprs())
                               : "") +
           bytes;
  }
  }
  return "{}";
}

std::string gpuLaunch(const fb::Artifact &a, const fb::Launch *l) {
  static const char *const kinds[] = {"buffer", "i64",      "i32",
                                      "f32",    "i64_expr", "i32_expr"};
  std::string args = "[";
  for (size_t i = 0; l->args() && i < l->args()->size(); ++i) {
    fb::Argument arg;
    std::memcpy(&arg, l->args()->Data() + i * sizeof(fb::Argument),
                sizeof(arg));
    uint64_t v = arg.value();
    // Scalars as their signed value; f32 as its bits.
    std::string value =
        arg.kind() == fb::ArgumentKind::I64
            ? std::to_string(static_cast<int64_t>(v))
        : arg.kind() == fb::ArgumentKind::I32
            ? std::to_string(static_cast<int32_t>(static_cast<uint32_t>(v)))
        : arg.kind() == fb::ArgumentKind::F32
            ? std::to_string(static_cast<uint32_t>(v))
            : std::to_string(v);
    args += std::string(i ? ", " : "") + "{\"" +
            kinds[static_cast<unsigned>(arg.kind())] + "\": " + value + "}";
  }
  args += "]";
  std::string gridExprs =
      l->grid_exprs() ? ", \"grid_exprs\": " + numbers<int32_t>(l->grid_exprs())
                      : "";
  return "{\"kernel\": " + quote(a.kernels()->Get(l->kernel())->symbol()) +
         ", \"grid\": " + numbers<uint32_t>(l->grid()) + gridExprs +
         ", \"block\": " + numbers<uint32_t>(l->block()) +
         ", \"shared_bytes\": " + std::to_string(l->shared_bytes()) +
         (l->programmatic() ? ", \"programmatic\": true" : "") +
         ", \"args\": " + args + "}";
}

std::string cpuCall(const fb::Artifact &a, const fb::Call *c) {
  return "{\"kernel\": " + quote(a.kernels()->Get(c->kernel())->symbol()) +
         ", \"args\": " + numbers<uint32_t>(c->args()) +
         ", \"results\": " + numbers<uint32_t>(c->results()) + "}";
}

template <typename V, typename F>
std::string list(const V *v, F &&each, const char *indent) {
  std::string out = "[";
  for (size_t i = 0; v && i < v->size(); ++i)
    out += std::string(i ? "," : "") + "\n" + indent + each(v->Get(i));
  return out + "]";
}

std::string function(const fb::Artifact &a, const fb::Function *f) {
  bool ptx = a.code_format() == fb::CodeFormat::PTX;
  std::string out = "    {\"name\": " + quote(f->name()) +
                    ",\n     \"inputs\": " + tensors(f->inputs()) +
                    ",\n     \"outputs\": " + tensors(f->outputs()) +
                    ",\n     \"unsupported\": " + quote(f->unsupported());
  const char *in = "       ";
  if (ptx) {
    if (f->exprs()) {
      static const char *const ops[] = {
          "const",  "input_dim", "add",   "sub",   "mul",   "div_s",
          "floor_div_s", "ceil_div_s", "rem_s", "min_s", "max_s", "div_u",
          "rem_u",  "min_u",     "max_u", "eq",    "ne",    "slt",
          "sle",    "sgt",       "sge",   "ult",   "ule",   "ugt",
          "uge",    "select"};
      std::string exprs = "[";
      for (size_t i = 0; i < f->exprs()->size(); ++i) {
        fb::Expr e;
        std::memcpy(&e, f->exprs()->Data() + i * sizeof(fb::Expr), sizeof(e));
        exprs += std::string(i ? ", " : "") + "[\"" +
                 ops[static_cast<unsigned>(e.op())] + "\", " +
                 std::to_string(e.a()) + ", " + std::to_string(e.b()) + ", " +
                 std::to_string(e.c()) + ", " + std::to_string(e.value()) +
                 "]";
      }
      out += ",\n     \"exprs\": " + exprs + "]";
    }
    if (f->output_dim_exprs())
      out += ",\n     \"output_dim_exprs\": " +
             numbers<int32_t>(f->output_dim_exprs());
    out += ",\n     \"buffers\": " + list(f->buffers(), gpuBuffer, in);
    out += ",\n     \"launches\": " +
           list(f->launches(),
                [&](const fb::Launch *l) { return gpuLaunch(a, l); }, in);
    out += ",\n     \"output_buffers\": " +
           numbers<uint32_t>(f->output_buffers());
  } else {
    out += ",\n     \"weights\": " + numbers<uint32_t>(f->weights());
    out += ",\n     \"calls\": " +
           list(f->calls(), [&](const fb::Call *c) { return cpuCall(a, c); },
                in);
    out += ",\n     \"output_slots\": " + numbers<uint32_t>(f->output_slots());
  }
  return out + "}";
}

} // namespace

int mnemo::run::dumpPlan(const char *path) {
  // Verified by the runtime first: everything read below is in range.
  mnemo_model_t *model = nullptr;
  if (mnemo_status_t status = mnemo_model_load_file(path, &model))
    return fail(status);
  mnemo_model_free(model);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  // The file was verified by the load above; it must still be that file.
  // (The FlatBuffer is the size prefix's bytes; the weights follow.)
  uint32_t size = 0;
  if (bytes.size() >= 12)
    std::memcpy(&size, bytes.data(), sizeof(size));
  flatbuffers::Verifier::Options options;
  options.max_tables = 1u << 24; // as the runtime's verifier
  flatbuffers::Verifier verifier(bytes.data(),
                                 std::min<size_t>(bytes.size(),
                                                  size_t(size) + 4),
                                 options);
  if (bytes.size() < 12 || !fb::VerifySizePrefixedArtifactBuffer(verifier))
    return fail(path, "changed while it was read");
  const fb::Artifact &a = *fb::GetSizePrefixedArtifact(bytes.data());
  std::string artifactPath = path;
  size_t slash = artifactPath.rfind('/');
  std::string directory = slash == std::string::npos
                              ? std::string()
                              : artifactPath.substr(0, slash + 1);
  auto besideArtifact = [&](const std::string &name) {
    return !name.empty() && name[0] == '/' ? name : directory + name;
  };
  std::string weightsFile = path;
  if (a.weights_file() && a.weights_file()->size())
    weightsFile = besideArtifact(a.weights_file()->str());
  // A weight read in place: its file is a weight source, its offset the
  // file's own.
  auto weight = [&](const fb::Weight *w) {
    std::string file = weightsFile;
    uint64_t offset = a.weights_offset() + w->offset();
    const auto *sources = a.weight_sources();
    if (w->source() > 0 && sources && w->source() <= sources->size() &&
        sources->Get(w->source() - 1)->path()) {
      file = besideArtifact(sources->Get(w->source() - 1)->path()->str());
      offset = w->offset();
    }
    return "{\"name\": " + quote(w->name()) + ", \"dtype\": " +
           quote(mnemo_dtype_name(static_cast<mnemo_dtype_t>(w->dtype()))) +
           ", \"shape\": " + numbers<int64_t>(w->shape()) +
           ", \"file\": " + quote(file.c_str()) +
           ", \"offset\": " + std::to_string(offset) +
           ", \"size\": " + std::to_string(w->size()) + "}";
  };
  bool ptx = a.code_format() == fb::CodeFormat::PTX;
  std::printf("{\"artifact\": %s,\n \"target\": {\"triple\": %s, \"cpu\": %s, "
              "\"features\": %s},\n \"code_format\": \"%s\",\n \"code\": "
              "{\"offset\": %zu, \"size\": %u},\n \"gpu_binaries\": %s,\n "
              "\"weights\": %s,\n \"functions\": [\n%s]}\n",
              quote(path).c_str(), quote(a.target()->triple()).c_str(),
              quote(a.target()->cpu()).c_str(),
              quote(a.target()->features()).c_str(), ptx ? "ptx" : "elf",
              static_cast<size_t>(a.code()->data() - bytes.data()),
              a.code()->size(),
              list(
                  a.gpu_binaries(),
                  [&](const fb::GpuBinary *g) {
                    return "{\"chip\": " + quote(g->chip()) + ", \"offset\": " +
                           std::to_string(g->image()->data() - bytes.data()) +
                           ", \"size\": " + std::to_string(g->image()->size()) +
                           "}";
                  },
                  "   ")
                  .c_str(),
              list(a.weights(), weight, "   ").c_str(),
              [&] {
                std::string fs;
                for (size_t i = 0; i < a.functions()->size(); ++i)
                  fs += (i ? ",\n" : "") + function(a, a.functions()->Get(i));
                return fs;
              }()
                  .c_str());
  return 0;
}
