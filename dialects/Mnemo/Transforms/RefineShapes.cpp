//===- RefineShapes.cpp - static result types for mnemo ops -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_REFINESHAPESPASS
#include "dialects/Mnemo/Transforms/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;
using namespace mlir::mnemo;

namespace {

/// `v` before a tensor.cast that only dropped static sizes.
Value mostStatic(Value v) {
  if (auto c = v.getDefiningOp<tensor::CastOp>())
    if (tensor::preservesStaticInformation(c.getType(),
                                           c.getSource().getType()))
      return c.getSource();
  return v;
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The result shape of `op` implied by its operands `ops` (dynamic where
/// they do not tell), or nothing for an op without a rule.
std::optional<SmallVector<int64_t>> impliedShape(Operation *op,
                                                 ArrayRef<Value> ops) {
  return TypeSwitch<Operation *, std::optional<SmallVector<int64_t>>>(op)
      .Case<RmsNormOp, RopeOp, RopeTablesOp>(
          [&](auto) { return SmallVector<int64_t>(shapeOf(ops[0])); })
      .Case<SwiGluOp>([&](auto) {
        SmallVector<int64_t> s(shapeOf(ops[0]));
        for (auto [d, other] : llvm::zip(s, shapeOf(ops[1])))
          if (ShapedType::isDynamic(d))
            d = other;
        return s;
      })
      .Case<LinearOp>([&](LinearOp linear) {
        SmallVector<int64_t> s(shapeOf(ops[0]));
        s.back() = linear.getOutFeatures();
        return s;
      })
      .Case<EmbeddingOp>([&](EmbeddingOp embedding) {
        SmallVector<int64_t> s(shapeOf(ops[1]));
        s.push_back(shapeOf(ops[0])[1]);
        return s;
      })
      .Case<AttentionOp>([&](AttentionOp) {
        ArrayRef<int64_t> q = shapeOf(ops[0]), v = shapeOf(ops[2]);
        return SmallVector<int64_t>{q[0], q[1], q[2], v[3]};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Gives `op` the static sizes its operands imply; users keep the old type
/// through a tensor.cast, which canonicalization folds into them.
void refine(Operation *op) {
  SmallVector<Value> ops;
  for (Value v : op->getOperands())
    ops.push_back(isa<RankedTensorType>(v.getType()) ? mostStatic(v) : v);
  std::optional<SmallVector<int64_t>> implied = impliedShape(op, ops);
  if (!implied)
    return;
  Value r = op->getResult(0);
  auto type = cast<RankedTensorType>(r.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (auto [d, known] : llvm::zip(shape, *implied))
    if (ShapedType::isDynamic(d))
      d = known;
  auto refined = type.clone(shape);
  if (refined == type)
    return;
  OpBuilder b(op);
  // Operands and result share one type.
  if (op->hasTrait<OpTrait::SameOperandsAndResultType>())
    for (Value &v : ops)
      if (v.getType() != refined)
        v = tensor::CastOp::create(b, op->getLoc(), refined, v);
  op->setOperands(ops);
  b.setInsertionPointAfter(op);
  auto back = tensor::CastOp::create(b, op->getLoc(), type, r);
  r.replaceAllUsesExcept(back, back);
  r.setType(refined);
}

struct RefineShapesPass final
    : mnemo::impl::RefineShapesPassBase<RefineShapesPass> {
  void runOnOperation() override {
    // Program order: producers are refined before their users look.
    getOperation()->walk([](Operation *op) {
      if (op->getDialect() &&
          isa<MnemoDialect>(op->getDialect()) && op->getNumResults() == 1)
        refine(op);
    });
  }
};

} // namespace
