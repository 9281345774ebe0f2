//===- RuntimeHooks.cpp - the code object's calls into the runtime -------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// After the conversion to the LLVM dialect, defines what the generated code
// calls the runtime through: the exported, zeroed table `mnemo_hooks`
// (runtime/schema/artifact.fbs: parallel_for, profile, alloc, free) that
// the runtime fills when it loads the code, and the functions that call
// through it or, where the runtime set no hook, do the work themselves:
//
//   dispatches of outlined parallel loops   pack the arguments in a frame,
//                                            call mnemo_parallel_for
//   mnemo_parallel_for                       parallel_for(trampoline, frame,
//                                            n, cost), or run [0, n) here
//   the profile hook                         a no-op when unset
//   MLIR's generic allocation functions      alloc/free hooks, else malloc,
//                                            aligned_alloc and free
//
// A frame holds only what varies: an argument the body does not use (a
// static memref's sizes and strides, once folded) is not passed, and one
// that every call passes as the same constant is rebuilt in the
// trampoline, where LLVM folds it into the body. So the caller stores a
// few pointers per loop, and loops that differ only in their buffers (the
// layers of a model) compile to one body. The functions that call the
// runtime are not inlined: a model's entry function makes hundreds of
// such calls, and each would otherwise bring its branch and both paths.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_ADDRUNTIMEHOOKSPASS
#include "mnemo/Target/CPU/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The dispatches' shared call into the runtime.
constexpr llvm::StringLiteral kParallelForName = "mnemo_parallel_for";

/// `@mnemo_hooks`, the table the runtime fills: parallel_for, profile.
LLVM::GlobalOp hookTable(ModuleOp module) {
  if (auto table = module.lookupSymbol<LLVM::GlobalOp>(mnemo::kHooksSymbol))
    return table;
  MLIRContext *ctx = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(mnemo::kNumHooks, ptr));
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto table =
      LLVM::GlobalOp::create(b, module.getLoc(), type,
                             /*isConstant=*/false, LLVM::Linkage::External,
                             mnemo::kHooksSymbol, Attribute());
  Block *init = b.createBlock(&table.getInitializerRegion());
  b.setInsertionPointToStart(init);
  Value zero = LLVM::ZeroOp::create(b, module.getLoc(), type);
  LLVM::ReturnOp::create(b, module.getLoc(), zero);
  return table;
}

/// Loads hook `slot` of the table.
Value loadHook(OpBuilder &b, Location loc, LLVM::GlobalOp table,
               unsigned slot) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value base = LLVM::AddressOfOp::create(b, loc, table);
  Value addr = LLVM::GEPOp::create(b, loc, ptr, table.getType(), base,
                                   ArrayRef<LLVM::GEPArg>{0, slot});
  return LLVM::LoadOp::create(b, loc, ptr, addr);
}

/// Loads hook `slot` and branches on it into two new blocks of `func`:
/// `set` (the hook is there) and `unset`.
struct HookBranch {
  Value hook;
  Block *set, *unset;
};
HookBranch branchOnHook(OpBuilder &b, Location loc, LLVM::LLVMFuncOp func,
                        LLVM::GlobalOp table, unsigned slot) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value hook = loadHook(b, loc, table, slot);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  Value isNull =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, hook, null);
  Block *set = func.addBlock();
  Block *unset = func.addBlock();
  LLVM::CondBrOp::create(b, loc, isNull, unset, set);
  return {hook, set, unset};
}

/// The constant that every call in `calls` passes as argument `i` (an op
/// without operands or regions), or null (also when there is no call).
Operation *sameConstant(ArrayRef<LLVM::CallOp> calls, unsigned i) {
  Operation *first = nullptr;
  for (LLVM::CallOp call : calls) {
    Operation *def = call.getArgOperands()[i].getDefiningOp();
    if (!def || def->getNumOperands() != 0 || def->getNumRegions() != 0 ||
        !def->hasTrait<OpTrait::ConstantLike>())
      return nullptr;
    if (!first)
      first = def;
    else if (!OperationEquivalence::isEquivalentTo(
                 first, def, OperationEquivalence::ignoreValueEquivalence,
                 nullptr, OperationEquivalence::IgnoreLocations))
      return nullptr;
  }
  return first;
}

/// Makes `decl` an internal function that is never inlined: a model's entry
/// function calls the runtime at every buffer and profile point, and a plain
/// call there keeps it small (and quick to compile); the work behind each
/// call costs far more than the call.
void defineAsRuntimeCall(LLVM::LLVMFuncOp decl) {
  decl.setLinkage(LLVM::Linkage::Internal);
  decl.setNoInline(true);
}

struct AddRuntimeHooksPass final
    : mnemo::impl::AddRuntimeHooksPassBase<AddRuntimeHooksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> dispatches, hooks;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func.isExternal())
        continue;
      if (func->hasAttr(mnemo::kParallelBodyAttr))
        dispatches.push_back(func);
      else if (func->hasAttr(mnemo::kHookAttr))
        hooks.push_back(func);
    }
    auto alloc =
        module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_memref_to_llvm_alloc");
    auto alignedAlloc = module.lookupSymbol<LLVM::LLVMFuncOp>(
        "_mlir_memref_to_llvm_aligned_alloc");
    auto dealloc =
        module.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_memref_to_llvm_free");
    if (dispatches.empty() && hooks.empty() && !alloc && !alignedAlloc &&
        !dealloc)
      return;
    LLVM::GlobalOp table = hookTable(module);
    SymbolTableCollection symbolTables;
    SymbolUserMap users(symbolTables, module);
    for (LLVM::LLVMFuncOp dispatch : dispatches)
      if (failed(defineDispatch(dispatch, table, users)))
        return signalPassFailure();
    for (LLVM::LLVMFuncOp hook : hooks)
      defineHookCall(hook, table);
    if (alloc && alloc.isExternal())
      defineAllocation(alloc, table, /*aligned=*/false);
    if (alignedAlloc && alignedAlloc.isExternal())
      defineAllocation(alignedAlloc, table, /*aligned=*/true);
    if (dealloc && dealloc.isExternal())
      defineFree(dealloc, table);
  }

  /// alloc(size) / aligned_alloc(align, size): the runtime's alloc hook
  /// (size, align) when set, else the C library's.
  void defineAllocation(LLVM::LLVMFuncOp decl, LLVM::GlobalOp table,
                        bool aligned) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Location loc = decl.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    defineAsRuntimeCall(decl);
    OpBuilder mb(ctx);
    Block *entry = decl.addEntryBlock(mb);
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    Value size = entry->getArgument(aligned ? 1 : 0);
    Value align =
        aligned ? entry->getArgument(0)
                : LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(16))
                      .getResult();
    auto [hook, viaHook, viaLibc] =
        branchOnHook(b, loc, decl, table, mnemo::kAllocHook);
    b.setInsertionPointToStart(viaHook);
    auto hookType = LLVM::LLVMFunctionType::get(ptr, {i64, i64});
    Value p =
        LLVM::CallOp::create(b, loc, hookType, ValueRange{hook, size, align})
            .getResult();
    LLVM::ReturnOp::create(b, loc, p);
    b.setInsertionPointToStart(viaLibc);
    OpBuilder::InsertionGuard guard(b);
    FailureOr<LLVM::LLVMFuncOp> libc =
        aligned ? LLVM::lookupOrCreateAlignedAllocFn(b, module, i64)
                : LLVM::lookupOrCreateMallocFn(b, module, i64);
    b.setInsertionPointToStart(viaLibc);
    SmallVector<Value> args;
    if (aligned)
      args.push_back(align);
    args.push_back(size);
    Value q = LLVM::CallOp::create(b, loc, *libc, args).getResult();
    LLVM::ReturnOp::create(b, loc, q);
  }

  /// free(p): the runtime's free hook when set, else the C library's.
  void defineFree(LLVM::LLVMFuncOp decl, LLVM::GlobalOp table) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Location loc = decl.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    defineAsRuntimeCall(decl);
    OpBuilder mb(ctx);
    Block *entry = decl.addEntryBlock(mb);
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    Value p = entry->getArgument(0);
    auto [hook, viaHook, viaLibc] =
        branchOnHook(b, loc, decl, table, mnemo::kFreeHook);
    b.setInsertionPointToStart(viaHook);
    LLVM::CallOp::create(b, loc, LLVM::LLVMFunctionType::get(voidType, {ptr}),
                         ValueRange{hook, p});
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    b.setInsertionPointToStart(viaLibc);
    OpBuilder::InsertionGuard guard(b);
    FailureOr<LLVM::LLVMFuncOp> libc = LLVM::lookupOrCreateFreeFn(b, module);
    b.setInsertionPointToStart(viaLibc);
    LLVM::CallOp::create(b, loc, *libc, ValueRange{p});
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }

  /// dispatch(args..., n, cost): packs args into a struct on the stack and
  /// runs the trampoline over [0, n) through parallel_for, or directly.
  LogicalResult defineDispatch(LLVM::LLVMFuncOp dispatch, LLVM::GlobalOp table,
                               const SymbolUserMap &users) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Location loc = dispatch.getLoc();
    auto bodyName =
        cast<FlatSymbolRefAttr>(dispatch->getAttr(mnemo::kParallelBodyAttr));
    dispatch->removeAttr(mnemo::kParallelBodyAttr);
    auto body = module.lookupSymbol<LLVM::LLVMFuncOp>(bodyName.getValue());
    if (!body)
      return dispatch.emitError("no parallel body '")
             << bodyName.getValue() << "'";
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    ArrayRef<Type> params = dispatch.getFunctionType().getParams();
    unsigned numArgs = params.size() - 2;
    // Folding the body's descriptors (extractvalue of insertvalue) leaves
    // the arguments it does not read unused.
    SmallVector<Operation *> descriptorOps;
    body.walk([&](Operation *op) {
      if (isa<LLVM::ExtractValueOp, LLVM::InsertValueOp>(op))
        descriptorOps.push_back(op);
    });
    (void)applyOpPatternsGreedily(
        descriptorOps, FrozenRewritePatternSet(),
        GreedyRewriteConfig()
            .setStrictness(GreedyRewriteStrictness::ExistingOps)
            .enableConstantCSE(false));
    // Constants are rebuilt only when every use is a call.
    SmallVector<LLVM::CallOp> calls;
    for (Operation *user : users.getUsers(dispatch)) {
      auto call = dyn_cast<LLVM::CallOp>(user);
      if (!call) {
        calls.clear();
        break;
      }
      calls.push_back(call);
    }
    // How each argument reaches the body: through the frame, as a
    // constant (`rebuilt`), or not at all.
    SmallVector<Operation *> rebuilt(numArgs, nullptr);
    SmallVector<bool> unused(numArgs, false);
    SmallVector<Type> fields;
    SmallVector<unsigned> fieldArg;
    for (unsigned i = 0; i < numArgs; ++i) {
      if (body.getArgument(i).use_empty()) {
        unused[i] = true;
        continue;
      }
      rebuilt[i] = sameConstant(calls, i);
      if (rebuilt[i])
        continue;
      fields.push_back(params[i]);
      fieldArg.push_back(i);
    }
    auto frame = LLVM::LLVMStructType::getLiteral(ctx, fields);

    // The trampoline: void (ptr ctx, i64 begin, i64 end).
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto tramp = LLVM::LLVMFuncOp::create(
        mb, loc, (dispatch.getName() + "_trampoline").str(),
        LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64}));
    tramp.setLinkage(LLVM::Linkage::Internal);
    // Reached only through its address (mnemo_parallel_for or the
    // runtime's threads); the body is inlined here, nowhere else.
    tramp.setNoInline(true);
    {
      Block *entry = tramp.addEntryBlock(mb);
      OpBuilder b = OpBuilder::atBlockEnd(entry);
      SmallVector<Value> args(numArgs);
      for (auto [i, type] : llvm::enumerate(fields)) {
        Value addr = LLVM::GEPOp::create(
            b, loc, ptr, frame, entry->getArgument(0),
            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
        args[fieldArg[i]] = LLVM::LoadOp::create(b, loc, type, addr);
      }
      for (unsigned i = 0; i < numArgs; ++i) {
        if (unused[i])
          args[i] = LLVM::PoisonOp::create(b, loc, params[i]);
        else if (rebuilt[i])
          args[i] = b.clone(*rebuilt[i])->getResult(0);
      }
      args.append({entry->getArgument(1), entry->getArgument(2)});
      LLVM::CallOp::create(b, loc, body, args);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }

    dispatch.setLinkage(LLVM::Linkage::Internal);
    Block *entry = dispatch.addEntryBlock(mb);
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    Value frameAddr = LLVM::AllocaOp::create(b, loc, ptr, frame, one);
    for (unsigned i = 0; i < fields.size(); ++i) {
      Value addr = LLVM::GEPOp::create(
          b, loc, ptr, frame, frameAddr,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, entry->getArgument(fieldArg[i]), addr);
    }
    Value n = entry->getArgument(numArgs);
    Value cost = entry->getArgument(numArgs + 1);
    Value trampAddr = LLVM::AddressOfOp::create(b, loc, tramp);
    LLVM::CallOp::create(b, loc, parallelFor(table),
                         ValueRange{trampAddr, frameAddr, n, cost});
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return success();
  }

  /// `mnemo_parallel_for(trampoline, frame, n, cost)`, shared by the
  /// dispatches: parallel_for when the runtime set it, else
  /// trampoline(frame, 0, n).
  LLVM::LLVMFuncOp parallelFor(LLVM::GlobalOp table) {
    ModuleOp module = getOperation();
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelForName))
      return fn;
    MLIRContext *ctx = &getContext();
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto fn = LLVM::LLVMFuncOp::create(
        mb, loc, kParallelForName,
        LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, i64, i64}));
    defineAsRuntimeCall(fn);
    Block *entry = fn.addEntryBlock(mb);
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    Value tramp = entry->getArgument(0), frame = entry->getArgument(1);
    Value n = entry->getArgument(2), cost = entry->getArgument(3);
    auto [hook, poolBlock, inlineBlock] =
        branchOnHook(b, loc, fn, table, mnemo::kParallelForHook);
    b.setInsertionPointToStart(inlineBlock);
    Value zero = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
    LLVM::CallOp::create(b, loc,
                         LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64}),
                         ValueRange{tramp, frame, zero, n});
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    b.setInsertionPointToStart(poolBlock);
    LLVM::CallOp::create(
        b, loc, LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, i64, i64}),
        ValueRange{hook, tramp, frame, n, cost});
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return fn;
  }

  /// hook(args...): calls table slot `mnemo.hook` when the runtime set it.
  void defineHookCall(LLVM::LLVMFuncOp decl, LLVM::GlobalOp table) {
    MLIRContext *ctx = &getContext();
    Location loc = decl.getLoc();
    unsigned slot = cast<IntegerAttr>(decl->getAttr(mnemo::kHookAttr)).getInt();
    decl->removeAttr(mnemo::kHookAttr);
    defineAsRuntimeCall(decl);
    OpBuilder mb(ctx);
    Block *entry = decl.addEntryBlock(mb);
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    auto [hook, call, done] = branchOnHook(b, loc, decl, table, slot);
    b.setInsertionPointToStart(call);
    SmallVector<Value> operands = {hook};
    operands.append(entry->args_begin(), entry->args_end());
    LLVM::CallOp::create(b, loc, decl.getFunctionType(), operands);
    LLVM::BrOp::create(b, loc, done);
    b.setInsertionPointToStart(done);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  }
};

} // namespace
