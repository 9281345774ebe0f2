//===- ValueBounds.cpp - the mnemo ops' result sizes for bounds -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/ValueBounds.h"

#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {

/// Where result dim `dim` of an op comes from: dim `dim` of one operand.
struct SourceDim {
  Value operand;
  int64_t dim;
};

std::optional<SourceDim> sourceOf(Operation *op, int64_t dim) {
  auto rank = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  };
  if (auto norm = dyn_cast<RmsNormOp>(op))
    return SourceDim{norm.getInput(), dim};
  if (auto swiglu = dyn_cast<SwiGluOp>(op))
    return SourceDim{swiglu.getGate(), dim};
  if (auto rope = dyn_cast<RopeOp>(op))
    return SourceDim{rope.getInput(), dim};
  if (auto rope = dyn_cast<RopeTablesOp>(op))
    return SourceDim{rope.getInput(), dim};
  if (auto linear = dyn_cast<LinearOp>(op)) {
    // [..., K] -> [..., N]: every dim but the last is the input's.
    if (dim + 1 < rank(linear.getInput()))
      return SourceDim{linear.getInput(), dim};
    return std::nullopt;
  }
  if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
    // ids [...] -> [..., D].
    if (dim < rank(embedding.getIds()))
      return SourceDim{embedding.getIds(), dim};
    return std::nullopt;
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    // [B, Hq, Sq, Dv]: the query's dims but the last, which is the value's.
    int64_t r = rank(attention.getQuery());
    return dim + 1 < r ? SourceDim{attention.getQuery(), dim}
                       : SourceDim{attention.getValue(),
                                   rank(attention.getValue()) - 1};
  }
  return std::nullopt;
}

template <typename OpTy>
struct ResultDimsModel final
    : ValueBoundsOpInterface::ExternalModel<ResultDimsModel<OpTy>, OpTy> {
  void populateBoundsForShapedValueDim(Operation *op, Value value, int64_t dim,
                                       ValueBoundsConstraintSet &cstr) const {
    auto type = cast<RankedTensorType>(value.getType());
    if (!type.isDynamicDim(dim))
      return;
    std::optional<SourceDim> source = sourceOf(op, dim);
    if (!source || cast<RankedTensorType>(source->operand.getType())
                           .getRank() <= source->dim)
      return;
    cstr.bound(value)[dim] == cstr.getExpr(source->operand, source->dim);
  }
};

template <typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<ResultDimsModel<Ops>>(*ctx), ...);
}

} // namespace

void mlir::mnemo::registerValueBoundsOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MnemoDialect *) {
    attach<RmsNormOp, SwiGluOp, RopeOp, RopeTablesOp, LinearOp, EmbeddingOp,
           AttentionOp>(ctx);
  });
}
