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
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

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
      if (auto name =
              op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        bySymbol[name] = op;
    }
    // Declarations (of the runtime's functions, say) join no group: every
    // group that uses one gets its own copy, which the merge keeps once.
    auto isDeclaration = [](Operation *op) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      return symbol && symbol.isDeclaration();
    };
    llvm::MapVector<Operation *, SmallVector<Operation *>> declarationUsers;
    for (Operation *op : ops) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(op);
      // Ops whose uses are unknown (unregistered ones), and ops that are no
      // symbol, stay with the first group, with all that they use.
      if (!uses || !isa<SymbolOpInterface>(op))
        groups.unionSets(ops.front(), op);
      if (!uses) {
        for (Operation *other : ops)
          if (isDeclaration(other))
            declarationUsers[other].push_back(op);
        continue;
      }
      for (const SymbolTable::SymbolUse &use : *uses) {
        Operation *used =
            bySymbol.lookup(use.getSymbolRef().getRootReference());
        if (!used)
          continue;
        if (isDeclaration(used))
          declarationUsers[used].push_back(op);
        else
          groups.unionSets(op, used);
      }
    }
    // One nested module per group, in the order of the groups' first ops,
    // with the top module's attributes (data layout, target attributes).
    SmallVector<NamedAttribute> attrs;
    for (NamedAttribute attr : module->getDiscardableAttrs())
      attrs.push_back(attr);
    DenseMap<Operation *, ModuleOp> nested;
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto groupOf = [&](Operation *op) {
      ModuleOp &inner = nested[groups.getLeaderValue(op)];
      if (!inner) {
        inner = ModuleOp::create(builder, module.getLoc());
        for (NamedAttribute attr : attrs)
          inner->setDiscardableAttr(attr.getName(), attr.getValue());
      }
      return inner;
    };
    for (Operation *op : ops) {
      if (declarationUsers.contains(op))
        continue;
      ModuleOp inner = groupOf(op);
      op->moveBefore(inner.getBody(), inner.getBody()->end());
    }
    // Each declaration into every group that uses it, in the groups'
    // order: the first gets the op itself, the others a copy.
    for (auto &[declaration, users] : declarationUsers) {
      llvm::SetVector<ModuleOp> targets;
      for (Operation *user : users)
        targets.insert(groupOf(user));
      for (auto [i, target] : llvm::enumerate(targets)) {
        Block *body = ModuleOp(target).getBody();
        if (i == 0)
          declaration->moveBefore(body, body->begin());
        else
          body->push_front(declaration->clone());
      }
    }
  }
};

} // namespace
