//===- InstrumentProfile.cpp - per-op timing points -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Brackets every top-level computation of an entry point (a linalg op, a
// loop nest, a copy), after bufferization, with calls of the runtime's
// profile hook: profile(point, 0) before, profile(point, 1) after. The
// calls cost a load and a branch when the runtime does not profile.
// Consecutive ops from one source op (an ONNX node, a mnemo op) form one
// point. Point names ("linalg.generic /model/layers.0/mlp/MatMul") are
// listed in the module attribute `mnemo.profile_points`, which the
// artifact carries for the runtime's report.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/Path.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_INSTRUMENTPROFILEPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// What a location says about the source op, for a report.
std::string describe(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::string s;
    for (Location inner : fused.getLocations()) {
      std::string part = describe(inner);
      if (part.empty() || llvm::StringRef(s).contains(part))
        continue;
      if (!s.empty())
        s += " + ";
      if (s.size() > 120) {
        s += "...";
        break;
      }
      s += part;
    }
    return s;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    if (file.getLine() == 0)
      return "";
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
            llvm::Twine(file.getLine()))
        .str();
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return describe(callSite.getCallee());
  return "";
}

/// Whether `op` computes (as opposed to allocating or describing buffers).
bool isWork(Operation &op) {
  return op.getNumRegions() > 0 || isa<linalg::LinalgOp>(op) ||
         isa<memref::CopyOp>(op);
}

struct InstrumentProfilePass final
    : mnemo::impl::InstrumentProfilePassBase<InstrumentProfilePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    SmallVector<Attribute> names;
    func::FuncOp hook;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isPrivate() || func.isExternal())
        continue;
      if (!hook) {
        OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
        Type i64 = b.getI64Type();
        hook = func::FuncOp::create(b, module.getLoc(), "mnemo_profile_hook",
                                    FunctionType::get(ctx, {i64, i64}, {}));
        hook.setPrivate();
        hook->setAttr(mnemo::kHookAttr,
                      attrs.getI64IntegerAttr(mnemo::kProfileHook));
      }
      for (Block &block : func.getBody()) {
        SmallVector<Operation *> run;
        std::string runName;
        auto close = [&] {
          if (run.empty())
            return;
          int64_t point = names.size();
          names.push_back(attrs.getStringAttr(runName));
          OpBuilder b(run.front());
          Location loc = run.front()->getLoc();
          auto call = [&](int64_t phase) {
            Value id = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                                    point);
            Value ph = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                                    phase);
            func::CallOp::create(b, loc, hook, ValueRange{id, ph});
          };
          call(0);
          b.setInsertionPointAfter(run.back());
          call(1);
          run.clear();
        };
        for (Operation &op : llvm::make_early_inc_range(block)) {
          if (!isWork(op))
            continue;
          std::string source = describe(op.getLoc());
          std::string name = op.getName().getStringRef().str();
          if (!source.empty())
            name += " " + source;
          // Ops of one source op (and only those) join the open point;
          // something in between (an allocation) does not split it.
          if (!run.empty() && (source.empty() || name != runName))
            close();
          if (run.empty())
            runName = name;
          run.push_back(&op);
        }
        close();
      }
    }
    module->setAttr(mnemo::kProfilePointsAttr, attrs.getArrayAttr(names));
  }
};

} // namespace
