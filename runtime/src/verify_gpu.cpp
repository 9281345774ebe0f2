//===- verify_gpu.cpp - checks a PTX artifact's launch plans ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A GPU function's buffers, launches and outputs (Function.buffers,
// .launches, .output_buffers) copied into GpuPlan once every index, size
// and launch dimension has been checked: the CUDA executor indexes with
// them and the driver trusts them, so a corrupted plan is a one-line error
// here, never a fault there.
//
//===----------------------------------------------------------------------===//

#include "status.h"
#include "verify.h"

#include <cstring>

using namespace mnemo::rt;
namespace fb = ::mnemo::artifact;

namespace {

constexpr uint64_t kMaxBytes = uint64_t(1) << 40;
constexpr uint32_t kMaxBuffers = 1u << 20;
constexpr unsigned kTensorMapBytes = 128;

/// The elements of a vector of 8-byte scalars or structs: copied, since
/// the FlatBuffers verifier aligns a vector's length, not its elements.
template <typename T, typename V> Vector<T> copyOf(const V *v) {
  Vector<T> out(v ? v->size() : 0);
  if (!out.empty())
    std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

/// Bytes of a static tensor, or false when a dim is dynamic (or overflows).
bool staticBytes(const TensorSig &sig, uint64_t *out) {
  uint64_t n = mnemo_dtype_size(sig.dtype);
  for (int64_t d : sig.shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return false;
  *out = n;
  return true;
}

class GpuPlanVerifier {
public:
  GpuPlanVerifier(const mnemo_model_t &model, FunctionPlan &plan)
      : model(model), plan(plan), what(model.name.c_str()),
        name(plan.name) {}

  mnemo_status_t run(const fb::Function &f);

private:
  mnemo_status_t bad(const char *format, unsigned long long a = 0,
                     unsigned long long b = 0) {
    char why[256];
    std::snprintf(why, sizeof(why), format, a, b);
    return makeStatus(MNEMO_STATUS_DATA_LOSS, "%s: function '%s': %s", what,
                      name, why);
  }
  mnemo_status_t exprs(const fb::Function &f);
  /// -1, or an expression of the plan.
  bool isExprRef(int64_t e) const {
    return e == -1 || (e >= 0 && static_cast<uint64_t>(e) < plan.gpu.exprs.size());
  }
  mnemo_status_t buffer(uint32_t i, const fb::Buffer *b);
  mnemo_status_t tensorMap(uint32_t i, const fb::TensorMap *m,
                           GpuTensorMap &out);
  mnemo_status_t launch(uint32_t i, const fb::Launch *l);

  const mnemo_model_t &model;
  FunctionPlan &plan;
  const char *what, *name;
};

mnemo_status_t GpuPlanVerifier::tensorMap(uint32_t i, const fb::TensorMap *m,
                                          GpuTensorMap &out) {
  const Vector<GpuBuffer> &buffers = plan.gpu.buffers;
  if (!m)
    return bad("buffer %llu: a tensor map without its map", i);
  if (m->source() >= i ||
      buffers[m->source()].kind == GpuBuffer::Kind::TensorMap)
    return bad("buffer %llu: a tensor map must map an earlier buffer that is "
               "not a tensor map",
               i);
  out.source = m->source();
  switch (m->dtype()) {
  case fb::DType::BF16: out.dtype = MNEMO_DTYPE_BF16; break;
  case fb::DType::F16: out.dtype = MNEMO_DTYPE_F16; break;
  case fb::DType::F32: out.dtype = MNEMO_DTYPE_F32; break;
  case fb::DType::F8_E4M3:
    out.dtype = MNEMO_DTYPE_F8_E4M3;
    break;
  default:
    return bad("buffer %llu: a tensor map's type is bf16, f16, f32 or f8e4m3",
               i);
  }
  out.dims = copyOf<uint64_t>(m->dims());
  out.strides = copyOf<uint64_t>(m->strides());
  if (m->box())
    out.box.assign(m->box()->begin(), m->box()->end());
  out.swizzle = m->swizzle();
  size_t rank = out.dims.size();
  if (rank < 1 || rank > 5 || out.strides.size() + 1 != rank ||
      out.box.size() != rank)
    return bad("buffer %llu: a tensor map of rank 1 to 5 needs rank - 1 "
               "strides and rank box sizes",
               i);
  // Expressions: absent (all static) or one per dim / stride, each -1 with
  // its static value or an expression with 0.
  auto exprsOf = [&](const flatbuffers::Vector<int32_t> *v, size_t n,
                     Vector<uint64_t> &values,
                     Vector<int32_t> &exprs) {
    exprs.assign(n, -1);
    if (!v)
      return true;
    if (v->size() != n)
      return false;
    for (size_t j = 0; j < n; ++j) {
      exprs[j] = v->Get(j);
      if (!isExprRef(exprs[j]) || (exprs[j] >= 0 && values[j] != 0))
        return false;
      out.dynamic = out.dynamic || exprs[j] >= 0;
    }
    return true;
  };
  if (!exprsOf(m->dims_exprs(), rank, out.dims, out.dimExprs) ||
      !exprsOf(m->strides_exprs(), rank - 1, out.strides, out.strideExprs))
    return bad("buffer %llu: a tensor map's dim or stride expressions", i);
  // cuTensorMapEncodeTiled's limits: dims in [1, 2^32], strides multiples
  // of 16 below 2^40, box sizes in [1, 256] (dynamic ones: at each call).
  for (size_t j = 0; j < rank; ++j)
    if (out.dimExprs[j] < 0 && !tensorMapDimOk(out.dims[j]))
      return bad("buffer %llu: tensor map dim %llu", i, out.dims[j]);
  for (size_t j = 0; j + 1 < rank; ++j)
    if (out.strideExprs[j] < 0 && !tensorMapStrideOk(out.strides[j]))
      return bad("buffer %llu: tensor map stride %llu", i, out.strides[j]);
  for (uint32_t b : out.box)
    if (b == 0 || b > 256)
      return bad("buffer %llu: tensor map box size %llu", i, b);
  if (out.swizzle != 0 && out.swizzle != 32 && out.swizzle != 64 &&
      out.swizzle != 128)
    return bad("buffer %llu: tensor map swizzle %llu", i, out.swizzle);
  // The map stays inside its source buffer: checked here when both sizes
  // are known, else by the executor at each call.
  const GpuBuffer &source = buffers[out.source];
  bool sourceDynamic = source.bytesExpr >= 0 ||
                       (source.kind == GpuBuffer::Kind::Input &&
                        source.bytes == 0);
  out.dynamic = out.dynamic || sourceDynamic;
  if (out.dynamic)
    return nullptr;
  uint64_t span = 0;
  if (!tensorMapSpan(out.dtype, out.dims, out.strides, &span) ||
      span > source.bytes)
    return bad("buffer %llu: a tensor map spans more than the %llu bytes "
               "of its source",
               i, source.bytes);
  return nullptr;
}

mnemo_status_t GpuPlanVerifier::exprs(const fb::Function &f) {
  Vector<fb::Expr> list = copyOf<fb::Expr>(f.exprs());
  for (size_t i = 0; i < list.size(); ++i) {
    const fb::Expr &e = list[i];
    auto op = static_cast<unsigned>(e.op());
    if (op > static_cast<unsigned>(fb::ExprOp::MAX))
      return bad("expression %llu: unknown operation %llu", i, op);
    if (e.op() == fb::ExprOp::INPUT_DIM) {
      if (e.a() >= plan.inputs.size() ||
          e.b() >= plan.inputs[e.a()].shape.size())
        return bad("expression %llu: input %llu has no such dim", i, e.a());
    } else if (e.op() != fb::ExprOp::CONST &&
               (e.a() >= i || e.b() >= i ||
                (e.op() == fb::ExprOp::SELECT && e.c() >= i)))
      return bad("expression %llu: an operand is not an earlier expression",
                 i);
    plan.gpu.exprs.push_back({static_cast<uint8_t>(op), e.a(), e.b(), e.c(),
                              e.value()});
  }
  return nullptr;
}

mnemo_status_t GpuPlanVerifier::buffer(uint32_t i, const fb::Buffer *b) {
  GpuBuffer &out = plan.gpu.buffers.emplace_back();
  if (!b)
    return bad("buffer %llu is missing", i);
  out.index = b->index();
  out.bytes = b->bytes();
  out.bytesExpr = b->bytes_expr();
  if (out.bytes > kMaxBytes)
    return bad("buffer %llu: %llu bytes", i, out.bytes);
  if (!isExprRef(out.bytesExpr) ||
      (out.bytesExpr >= 0 &&
       (b->kind() != fb::BufferKind::TEMPORARY || out.bytes != 0)))
    return bad("buffer %llu: bytes_expr %llu (a temporary's expression)", i,
               static_cast<unsigned long long>(out.bytesExpr));
  switch (b->kind()) {
  case fb::BufferKind::INPUT: {
    out.kind = GpuBuffer::Kind::Input;
    uint64_t bytes = 0;
    if (out.index >= plan.inputs.size())
      return bad("buffer %llu: input %llu does not exist", i, out.index);
    // A dynamic input's bytes are the bound tensor's at each call.
    bool known = staticBytes(plan.inputs[out.index], &bytes);
    if (known ? bytes != out.bytes : out.bytes != 0)
      return bad("buffer %llu: its bytes do not match input %llu", i,
                 out.index);
    return nullptr;
  }
  case fb::BufferKind::WEIGHT:
    out.kind = GpuBuffer::Kind::Weight;
    if (out.index >= model.weights.size() ||
        model.weights[out.index].size != out.bytes)
      return bad("buffer %llu: weight %llu does not exist or has other "
                 "bytes",
                 i, out.index);
    return nullptr;
  case fb::BufferKind::TEMPORARY:
    out.kind = GpuBuffer::Kind::Temporary;
    return nullptr;
  case fb::BufferKind::TENSOR_MAP:
    out.kind = GpuBuffer::Kind::TensorMap;
    if (out.bytes != kTensorMapBytes)
      return bad("buffer %llu: a tensor map has 128 bytes, not %llu", i,
                 out.bytes);
    return tensorMap(i, b->tensor_map(), out.map);
  }
  return bad("buffer %llu: unknown kind %llu", i,
             static_cast<unsigned>(b->kind()));
}

mnemo_status_t GpuPlanVerifier::launch(uint32_t i, const fb::Launch *l) {
  GpuLaunch &out = plan.gpu.launches.emplace_back();
  if (!l)
    return bad("launch %llu is missing", i);
  if (l->kernel() >= model.kernels.size())
    return bad("launch %llu: kernel %llu does not exist", i, l->kernel());
  out.kernel = l->kernel();
  if (!l->grid() || l->grid()->size() != 3 || !l->block() ||
      l->block()->size() != 3)
    return bad("launch %llu: grid and block need 3 sizes each", i);
  const auto *gridExprs = l->grid_exprs();
  if (gridExprs && gridExprs->size() != 3)
    return bad("launch %llu: grid_exprs needs 3 entries", i);
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    out.grid[d] = l->grid()->Get(d);
    out.block[d] = l->block()->Get(d);
    out.gridExpr[d] = gridExprs ? gridExprs->Get(d) : -1;
    threads *= out.block[d];
    if (!isExprRef(out.gridExpr[d]))
      return bad("launch %llu: grid expression %llu", i,
                 static_cast<unsigned long long>(out.gridExpr[d]));
    if (out.gridExpr[d] < 0 &&
        (out.grid[d] == 0 || out.grid[d] > (d ? 65535u : 0x7fffffffu)))
      return bad("launch %llu: grid size %llu", i, out.grid[d]);
    if (out.block[d] == 0 || threads > 1024)
      return bad("launch %llu: bad block size (at most 1024 threads)", i);
  }
  out.sharedBytes = l->shared_bytes();
  out.programmatic = l->programmatic();
  if (out.sharedBytes > (1u << 20))
    return bad("launch %llu: %llu bytes of shared memory", i,
               out.sharedBytes);
  Vector<fb::Argument> args = copyOf<fb::Argument>(l->args());
  if (args.size() != model.kernels[out.kernel].numArgs)
    return bad("launch %llu: %llu arguments for the kernel's parameters "
               "(num_args)",
               i, args.size());
  for (const fb::Argument &a : args) {
    GpuArgument &arg = out.args.emplace_back();
    arg.value = a.value();
    // A corrupted kind may be none of the enum's values.
    auto kind = static_cast<unsigned>(a.kind());
    if (kind > static_cast<unsigned>(fb::ArgumentKind::MAX))
      return bad("launch %llu: unknown argument kind %llu", i, kind);
    static const GpuArgument::Kind kinds[] = {
        GpuArgument::Kind::Buffer, GpuArgument::Kind::I64,
        GpuArgument::Kind::I32,    GpuArgument::Kind::F32,
        GpuArgument::Kind::I64Expr, GpuArgument::Kind::I32Expr};
    arg.kind = kinds[kind];
    if (arg.kind == GpuArgument::Kind::Buffer &&
        arg.value >= plan.gpu.buffers.size())
      return bad("launch %llu: argument names buffer %llu", i, arg.value);
    if ((arg.kind == GpuArgument::Kind::I64Expr ||
         arg.kind == GpuArgument::Kind::I32Expr) &&
        arg.value >= plan.gpu.exprs.size())
      return bad("launch %llu: argument names expression %llu", i,
                 arg.value);
  }
  return nullptr;
}

mnemo_status_t GpuPlanVerifier::run(const fb::Function &f) {
  const auto *buffers = f.buffers();
  const auto *launches = f.launches();
  if (!buffers || !launches || !f.output_buffers())
    return bad("no launch plan (buffers, launches and output buffers)");
  if (buffers->size() > kMaxBuffers)
    return bad("%llu buffers", buffers->size());
  MNEMO_RETURN_IF_ERROR(exprs(f));
  for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i)
    MNEMO_RETURN_IF_ERROR(buffer(i, buffers->Get(i)));
  for (flatbuffers::uoffset_t i = 0; i < launches->size(); ++i)
    MNEMO_RETURN_IF_ERROR(launch(i, launches->Get(i)));
  const auto *outputs = f.output_buffers();
  if (outputs->size() != plan.outputs.size())
    return bad("%llu output buffers for %llu outputs", outputs->size(),
               plan.outputs.size());
  // Each dynamic output dim has its expression; static ones none.
  const auto *dims = f.output_dim_exprs();
  size_t at = 0;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    Vector<int32_t> &exprs = plan.gpu.outputDimExprs.emplace_back();
    for (int64_t d : plan.outputs[i].shape) {
      int32_t e = dims && at < dims->size() ? dims->Get(at) : -1;
      ++at;
      if (!isExprRef(e) || (d < 0) != (e >= 0))
        return bad("output %llu: a dim's expression (output_dim_exprs)", i);
      exprs.push_back(e);
    }
  }
  if (dims && dims->size() != at)
    return bad("%llu output dim expressions for %llu dims", dims->size(),
               at);
  for (flatbuffers::uoffset_t i = 0; i < outputs->size(); ++i) {
    uint32_t b = outputs->Get(i);
    uint64_t bytes = 0;
    if (b >= plan.gpu.buffers.size() ||
        plan.gpu.buffers[b].kind == GpuBuffer::Kind::TensorMap)
      return bad("output %llu: buffer %llu does not hold it", i, b);
    // Dynamic sizes are compared at each call.
    if (staticBytes(plan.outputs[i], &bytes) &&
        plan.gpu.buffers[b].bytesExpr < 0 &&
        plan.gpu.buffers[b].kind != GpuBuffer::Kind::Input &&
        bytes > plan.gpu.buffers[b].bytes)
      return bad("output %llu: buffer %llu does not hold it", i, b);
    plan.gpu.outputBuffers.push_back(b);
  }
  return nullptr;
}

} // namespace

mnemo_status_t mnemo::rt::verifyGpuFunction(const mnemo_model_t &model,
                                            const fb::Function &f,
                                            FunctionPlan &plan) {
  return GpuPlanVerifier(model, plan).run(f);
}
