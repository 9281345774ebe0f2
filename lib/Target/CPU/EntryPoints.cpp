//===- EntryPoints.cpp - the artifact's CPU kernel ABI ----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Two passes around the conversion to the LLVM dialect: the first requests
// MLIR's C interface (`_mlir_ciface_<name>`, descriptors passed by pointer)
// for each public function; the second wraps it into the artifact's uniform
// `void mnemo_entry_<name>(void **args)`, which the runtime calls without
// knowing the arity.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_MARKENTRYPOINTSPASS
#define GEN_PASS_DEF_ADDENTRYPOINTSPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kResultsAttr = "mnemo.entry_results";

struct MarkEntryPointsPass final
    : mnemo::impl::MarkEntryPointsPassBase<MarkEntryPointsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    b.getUnitAttr());
      func->setAttr(kResultsAttr,
                    b.getI64IntegerAttr(func.getNumResults()));
      // Argument and result attributes of the mnemo namespace (names, dim
      // kinds, in-place updates) belong to the artifact's signature, which
      // is recorded before code generation; LLVM has no use for them.
      auto strip = [](DictionaryAttr attrs) {
        SmallVector<NamedAttribute> kept;
        if (attrs)
          for (NamedAttribute a : attrs)
            if (!a.getName().strref().starts_with("mnemo."))
              kept.push_back(a);
        return kept;
      };
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.setArgAttrs(i, strip(func.getArgAttrDict(i)));
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        func.setResultAttrs(i, strip(func.getResultAttrDict(i)));
    }
  }
};

struct AddEntryPointsPass final
    : mnemo::impl::AddEntryPointsPassBase<AddEntryPointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    SmallVector<LLVM::LLVMFuncOp> marked;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func->hasAttr(kResultsAttr))
        continue;
      // The conversion copies attributes onto the C interface wrapper too.
      if (func.getName().starts_with("_mlir_ciface_"))
        func->removeAttr(kResultsAttr);
      else
        marked.push_back(func);
    }
    OpBuilder b(ctx);
    for (LLVM::LLVMFuncOp func : marked) {
      int64_t numResults =
          cast<IntegerAttr>(func->getAttr(kResultsAttr)).getInt();
      func->removeAttr(kResultsAttr);
      std::string cifaceName = ("_mlir_ciface_" + func.getName()).str();
      auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
      if (!ciface) {
        func.emitError("no C interface '") << cifaceName << "' to wrap";
        return signalPassFailure();
      }
      // The C interface takes the result block first when there are
      // results, then one descriptor pointer per argument.
      unsigned numArgs = ciface.getNumArguments();
      unsigned firstArg = numResults > 0 ? 1 : 0;

      b.setInsertionPointToEnd(module.getBody());
      Location loc = func.getLoc();
      auto entryType =
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
      auto entry = LLVM::LLVMFuncOp::create(
          b, loc, (mnemo::kEntryPrefix + func.getName()).str(), entryType);
      Block *body = entry.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      Value argv = body->getArgument(0);
      SmallVector<Value> operands;
      auto loadSlot = [&](int64_t slot) {
        Value idx = LLVM::ConstantOp::create(b, loc, i64,
                                             b.getI64IntegerAttr(slot));
        Value addr = LLVM::GEPOp::create(b, loc, ptr, ptr, argv, idx);
        return LLVM::LoadOp::create(b, loc, ptr, addr).getResult();
      };
      if (numResults > 0)
        operands.push_back(loadSlot(0));
      for (unsigned i = firstArg; i < numArgs; ++i)
        operands.push_back(loadSlot(1 + i - firstArg));
      LLVM::CallOp::create(b, loc, ciface, operands);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
      // Only the entry is exported. The function and its C interface keep
      // the model's own names ("step", "forward"), which the dynamic linker
      // would otherwise let a loaded library's symbol of the same name
      // (libc's `step`) interpose.
      func.setLinkage(LLVM::Linkage::Internal);
      ciface.setLinkage(LLVM::Linkage::Internal);
    }
  }
};
} // namespace
