//===- SplitIndependentFunctions.cpp - module passes on threads -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Groups the top-level ops by the symbols they use and moves each group into
// a nested module, so that a pipeline nested on `builtin.module` runs the
// groups on the context's threads. MergeNestedModules.cpp moves them back.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_SPLITINDEPENDENTFUNCTIONSPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

struct SplitIndependentFunctionsPass final
    : mnemo::impl::SplitIndependentFunctionsPassBase<
          SplitIndependentFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    for (Operation &op : *module.getBody())
      ops.push_back(&op);
    if (ops.empty())
      return;
    llvm::EquivalenceClasses<Operation *> groups;
    DenseMap<StringAttr, Operation *> bySymbol;
    for (Operation *op : ops) {
      groups.insert(op);
      if (auto name = op->getAttrOfType<StringAttr>(
              SymbolTable::getSymbolAttrName()))
        bySymbol[name] = op;
    }
    for (Operation *op : ops) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(op);
      // Ops whose uses are unknown (unregistered ones), and ops that are no
      // symbol, stay with the first group.
      if (!uses || !isa<SymbolOpInterface>(op)) {
        groups.unionSets(ops.front(), op);
        continue;
      }
      for (const SymbolTable::SymbolUse &use : *uses)
        if (Operation *used =
                bySymbol.lookup(use.getSymbolRef().getRootReference()))
          groups.unionSets(op, used);
    }
    // One nested module per group, in the order of the groups' first ops,
    // with the top module's attributes (data layout, target attributes).
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : module->getDiscardableAttrs())
      attrs.push_back(attr);
    DenseMap<Operation *, ModuleOp> nested;
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    for (Operation *op : ops) {
      Operation *leader = groups.getLeaderValue(op);
      ModuleOp &inner = nested[leader];
      if (!inner) {
        inner = ModuleOp::create(builder, module.getLoc());
        for (NamedAttribute attr : attrs)
          inner->setDiscardableAttr(attr.getName(), attr.getValue());
      }
      op->moveBefore(inner.getBody(), inner.getBody()->end());
    }
  }
};

} // namespace
