//===- SparseAttentionKernel.cpp - attention over selected keys -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.sparse_attention on the tensor-core attention kernel
// (mnemo-gpu-attention-kernel, AttentionKernel.cpp): a prompt's attention
// over the keys each query lists (DeepSeek-V3.2's top-k). As the paged
// attention with indices: a block's rows are one query position's heads,
// its key tiles are the position's K entries, each the key row its entry
// names (copied by cp.async; none outside [0, Skv): masked).
// docs/GPU.md, "Selected keys".
//
//===----------------------------------------------------------------------===//

#include "AttentionKernelEmitter.h"

using namespace mlir;
using namespace mlir::mnemo::nvptx;

namespace mlir::mnemo::nvptx::attention {

/// Query heads a key head needs for the kernel: a block holds one
/// position's heads of a key head, so fewer leave most of its 64 rows idle
/// (the expanded MLA form's one head a key head: 1 of 64).
static constexpr int64_t kLeastGroup = 16;

FailureOr<Problem> analyze(mnemo::SparseAttentionOp op, int64_t blockQ,
                           int64_t blockKV, bool wgmma, int64_t splitKV,
                           int64_t smCount, int64_t sharedLimit,
                           std::string &why) {
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  auto k = cast<RankedTensorType>(op.getKey().getType());
  auto v = cast<RankedTensorType>(op.getValue().getType());
  auto r = cast<RankedTensorType>(op.getResult().getType());
  auto indices = cast<RankedTensorType>(op.getIndices().getType());
  Type elem = q.getElementType();
  if (!elem.isBF16() && !elem.isF16())
    return why = "element type is neither bf16 nor f16", failure();
  if (k.getElementType() != elem || v.getElementType() != elem ||
      r.getElementType() != elem)
    return why = "query, key, value and result differ in element type",
           failure();
  if (failed(checkSink(op.getSink(), why)))
    return failure();
  Problem p;
  p.selected = true;
  p.elem = elem;
  setSizes(p, q, k, v);
  p.group = op.getGroupSize();
  if (p.group < kLeastGroup)
    return why = "fewer than " + std::to_string(kLeastGroup) +
                 " query heads a key head",
           failure();
  // The key tiles are a position's entries.
  p.skv = indices.getDimSize(2);
  p.dynamic = ShapedType::isDynamic(p.batch) || ShapedType::isDynamic(p.sq) ||
              ShapedType::isDynamic(p.skv) || k.isDynamicDim(2);
  if (failed(configure(p, blockQ, blockKV, wgmma, /*tma=*/false, splitKV,
                       smCount, sharedLimit, why)))
    return failure();
  p.rowsPerHead = 1;
  p.scale = op.getEffectiveScale();
  p.causal = false;
  return p;
}

void rewrite(mnemo::SparseAttentionOp op, const Problem &p) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto buffer = [&](Value tensor) { return readOnlyBuffer(b, tensor); };
  Buffers in;
  in.q = buffer(op.getQuery());
  in.k = buffer(op.getKey());
  in.v = buffer(op.getValue());
  in.indices = buffer(op.getIndices());
  in.sink = buffer(op.getSink());
  op.replaceAllUsesWith(launchKernels(b, p, in, op.getResult().getType()));
  op.erase();
}

mnemo::SparseAttentionOp
roundToWeightType(mnemo::SparseAttentionOp op, Type elem,
                  function_ref<bool(mnemo::SparseAttentionOp)> takes) {
  return cast<mnemo::SparseAttentionOp>(
      roundOperands(op, {op.getQuery(), op.getKey(), op.getValue()}, elem,
                    [&](Operation *clone) {
                      return takes(cast<mnemo::SparseAttentionOp>(clone));
                    }));
}

} // namespace mlir::mnemo::nvptx::attention
