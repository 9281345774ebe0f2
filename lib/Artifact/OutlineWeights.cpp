//===- OutlineWeights.cpp - constants to weight operands --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Artifact/OutlineWeights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mnemo;

void mnemo::outlineWeights(func::FuncOp func, int64_t minBytes,
                           std::vector<ArtifactWeight> &weights,
                           SmallVectorImpl<unsigned> &indices) {
  SmallVector<arith::ConstantOp> constants;
  func.walk([&](arith::ConstantOp op) {
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    auto type = dyn_cast<RankedTensorType>(op.getType());
    // Weights are stored one element per whole byte; sub-byte types (i1)
    // stay in the code.
    if (!value || !type || !type.getElementType().isIntOrFloat() ||
        type.getElementTypeBitWidth() % 8 != 0)
      return;
    int64_t bytes = type.getNumElements() *
                    llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    if (bytes >= minBytes)
      constants.push_back(op);
  });
  Block &entry = func.getBody().front();
  for (arith::ConstantOp op : constants) {
    // Functions of one artifact share a weight they both hold (the
    // checkpoint's forward, prefill and decode): attributes are uniqued, so
    // the same values are the same attribute.
    auto value = cast<DenseElementsAttr>(op.getValue());
    unsigned argIndex = func.getNumArguments();
    auto same = llvm::find_if(weights, [&](const ArtifactWeight &w) {
      return !w.replaceable && w.value == value;
    });
    if (same != weights.end()) {
      if (failed(func.insertArgument(argIndex, op.getType(), {}, op.getLoc())))
        continue;
      op.getResult().replaceAllUsesWith(entry.getArgument(argIndex));
      indices.push_back(same - weights.begin());
      op.erase();
      continue;
    }
    std::string name;
    if (auto nameLoc = dyn_cast<NameLoc>(op.getLoc()))
      name = nameLoc.getName().str();
    else
      name = "weight" + std::to_string(weights.size());
    if (failed(func.insertArgument(argIndex, op.getType(), {}, op.getLoc())))
      continue;
    op.getResult().replaceAllUsesWith(entry.getArgument(argIndex));
    indices.push_back(weights.size());
    weights.push_back({name, value});
    op.erase();
  }
}
