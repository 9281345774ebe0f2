//===- MergeNestedModules.cpp - nested modules back into one ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Moves the ops of the nested modules (mnemo-split-independent-functions)
// back into the top module, in order. The same helper that passes added to
// several nested modules is kept once; a different private definition of a
// name already taken is renamed first (a different declaration or public
// symbol is an error).
//
//===----------------------------------------------------------------------===//

#include "mnemo/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_MERGENESTEDMODULESPASS
#include "mnemo/Conversion/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

StringAttr symbolName(Operation *op) {
  return op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
}

struct MergeNestedModulesPass final
    : mnemo::impl::MergeNestedModulesPassBase<MergeNestedModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DenseMap<StringAttr, Operation *> defined;
    for (Operation &op : *module.getBody())
      if (StringAttr name = symbolName(&op); name && !isa<ModuleOp>(op))
        defined[name] = &op;
    for (auto inner : llvm::to_vector(module.getOps<ModuleOp>())) {
      if (inner.getSymName())
        continue; // A named module is a module of the program's own.
      for (NamedAttribute attr : inner->getDiscardableAttrs()) {
        Attribute top = module->getDiscardableAttr(attr.getName());
        if (!top) {
          module->setDiscardableAttr(attr.getName(), attr.getValue());
        } else if (top != attr.getValue()) {
          inner.emitError("nested module sets '")
              << attr.getName().getValue()
              << "' differently from the top module";
          return signalPassFailure();
        }
      }
      // Names first, while every use is still in the nested module. A
      // rename changes its users, which may then differ from their
      // namesakes too: until nothing changes.
      SmallVector<Operation *> duplicates;
      for (bool changed = true; changed;) {
        changed = false;
        duplicates.clear();
        for (Operation &op : *inner.getBody()) {
          StringAttr name = symbolName(&op);
          Operation *existing = name ? defined.lookup(name) : nullptr;
          if (!existing)
            continue;
          if (OperationEquivalence::isEquivalentTo(
                  &op, existing, OperationEquivalence::IgnoreLocations)) {
            duplicates.push_back(&op);
            continue;
          }
          if (failed(rename(&op, inner, defined)))
            return signalPassFailure();
          changed = true;
        }
      }
      for (Operation *op : duplicates)
        op->erase();
      for (Operation &op : llvm::make_early_inc_range(*inner.getBody())) {
        if (StringAttr name = symbolName(&op))
          defined[name] = &op;
        op.moveBefore(inner);
      }
      inner.erase();
    }
  }

  /// Gives `op` a name free in the top module and in `inner`, updating
  /// its uses in `inner`. Only a private definition may be renamed: a
  /// declaration or a public symbol names something outside the module.
  LogicalResult rename(Operation *op, ModuleOp inner,
                       const DenseMap<StringAttr, Operation *> &defined) {
    StringAttr name = symbolName(op);
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (!symbol || !symbol.isPrivate() || symbol.isDeclaration())
      return op->emitError("'")
             << name.getValue()
             << "' is declared differently in two independent parts of the "
                "module";
    SymbolTable table(inner);
    for (unsigned i = 1;; ++i) {
      StringAttr candidate =
          StringAttr::get(op->getContext(), name.str() + "_" + Twine(i));
      if (defined.count(candidate) || table.lookup(candidate))
        continue;
      if (failed(SymbolTable::replaceAllSymbolUses(op, candidate, inner)))
        return op->emitError("cannot rename '") << name << "' to merge it";
      SymbolTable::setSymbolName(op, candidate);
      return success();
    }
  }
};

} // namespace
