//===- MergeKernels.cpp - one copy of identical parallel bodies -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Outlined parallel bodies take every buffer they touch as an argument, so
// the layers of a model (which differ only in their weights) outline to
// equivalent bodies, and a checkpoint's `prefill` step repeats most of
// `forward`'s. LLVM's MergeFunctions would fold them after the whole MLIR
// lowering; folding them here, right after outlining, converts each kernel
// once (llama-sized models: about a third of the bodies are distinct).
//
// Upstream's `duplicate-function-elimination` compares declarations by type
// and attributes alone, which would fold two external functions of the same
// signature into one; this pass only folds functions with bodies, and then
// the dispatch declarations (`mnemo.parallel_body`) that name the same body.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_MERGEKERNELSPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kParallelBody = "mnemo.parallel_body";

/// Functions equal up to their names: attributes other than the symbol name,
/// and bodies equivalent op by op (locations ignored).
struct KernelInfo : llvm::DenseMapInfo<func::FuncOp> {
  static unsigned getHashValue(func::FuncOp f) {
    if (f == getEmptyKey() || f == getTombstoneKey())
      return DenseMapInfo<func::FuncOp>::getHashValue(f);
    llvm::hash_code hash = 0;
    StringAttr symName = f.getSymNameAttrName();
    for (NamedAttribute attr : f->getAttrs())
      if (attr.getName() != symName)
        hash = llvm::hash_combine(hash, attr);
    f.getBody().walk([&](Operation *op) {
      hash = llvm::hash_combine(
          hash, OperationEquivalence::computeHash(
                    op, OperationEquivalence::ignoreHashValue,
                    OperationEquivalence::ignoreHashValue,
                    OperationEquivalence::IgnoreLocations));
    });
    return hash;
  }

  static bool isEqual(func::FuncOp a, func::FuncOp b) {
    if (a == b)
      return true;
    if (a == getEmptyKey() || a == getTombstoneKey() || b == getEmptyKey() ||
        b == getTombstoneKey())
      return false;
    StringAttr symName = a.getSymNameAttrName();
    auto others = [&](func::FuncOp f) {
      SmallVector<NamedAttribute> attrs;
      for (NamedAttribute attr : f->getAttrs())
        if (attr.getName() != symName)
          attrs.push_back(attr);
      return attrs;
    };
    return others(a) == others(b) &&
           OperationEquivalence::isRegionEquivalentTo(
               &a.getBody(), &b.getBody(),
               OperationEquivalence::IgnoreLocations);
  }
};

struct MergeKernelsPass final
    : mnemo::impl::MergeKernelsPassBase<MergeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Bodies first; the dispatches naming merged bodies become equal then.
    merge(module, [](func::FuncOp f) { return !f.isExternal(); });
    merge(module, [](func::FuncOp f) {
      return f.isExternal() && f->hasAttr(kParallelBody);
    });
  }

  /// Folds the private functions `eligible` accepts into the first of their
  /// equals, renaming every reference in one walk.
  void merge(ModuleOp module, llvm::function_ref<bool(func::FuncOp)> eligible) {
    llvm::DenseSet<func::FuncOp, KernelInfo> kept;
    llvm::DenseMap<Attribute, Attribute> renamed;
    SmallVector<func::FuncOp> folded;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (!f.isPrivate() || !eligible(f))
        continue;
      auto [it, inserted] = kept.insert(f);
      if (inserted)
        continue;
      renamed[FlatSymbolRefAttr::get(f.getSymNameAttr())] =
          FlatSymbolRefAttr::get(it->getSymNameAttr());
      folded.push_back(f);
    }
    if (folded.empty())
      return;
    for (func::FuncOp f : folded)
      f.erase();
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](FlatSymbolRefAttr ref)
                                -> std::optional<Attribute> {
      auto it = renamed.find(ref);
      if (it == renamed.end())
        return std::nullopt;
      return it->second;
    });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/false);
  }
};

} // namespace
