//===- SplitCodegen.cpp - O1 and codegen of a module on threads -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// LLVM's optimizer and code generator take most of a model's compile time,
// and each runs on one thread. A model's code is a set of independent
// kernels (the entry functions and the parallel loops' trampolines, which
// the entry reaches only through the runtime's parallel_for), so the
// module splits cleanly into partitions that are optimized and generated
// at the same time, each in its own LLVM context, as LTO's parallel code
// generation does:
//
//   1. clusters: a function with the local, inlinable functions it calls
//      (a trampoline and its body stay together); noinline callees and
//      address-taken functions start their own cluster, and small helpers
//      that several functions call are copied into every partition;
//   2. clusters go to the least loaded partition, largest first (size in
//      instructions); global variables to partition 0;
//   3. locals referenced from another partition become hidden globals;
//   4. the module is written as bitcode once; each thread reads it into its
//      own context, turns what other partitions own into declarations, and
//      runs the LLVM passes (optimizeModule) and code generation on the
//      rest.
//
//===----------------------------------------------------------------------===//

#include "SplitCodegen.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"

using namespace mlir;
using namespace mlir::mnemo;

void mnemo::mergeIdenticalFunctions(llvm::Module &module) {
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder().registerModuleAnalyses(mam);
  llvm::MergeFunctionsPass().run(module, mam);
}

namespace {

/// The default is LLVM's O1 as `buildPerModuleDefaultPipeline` makes it
/// (with the loop vectorizer, which `opt -passes='default<O1>'` runs only
/// where forced). A reduced O1 without the loop passes inside the inliner's
/// walk and the interprocedural constant propagation took O1 from 0.54 to
/// 0.35 CPU-s on deepseek_mla, but left loop nests that stay scalar
/// slower: DeepSeek-V4's reference model ran 22% slower (2026-12-05,
/// docs/CPU.md), so O1 stays.
llvm::cl::opt<std::string> llvmPasses(
    "mnemo-cpu-llvm-passes", llvm::cl::Hidden,
    llvm::cl::desc("LLVM passes run on a CPU target's code before code "
                   "generation, in `opt -passes=` syntax (default: LLVM's "
                   "O1 with its loop vectorizer)"));

/// The pass pipeline, parsed for `pb`.
llvm::Expected<llvm::ModulePassManager> parsePipeline(llvm::PassBuilder &pb) {
  if (!llvmPasses.getNumOccurrences())
    return pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
  llvm::ModulePassManager mpm;
  if (llvm::Error error = pb.parsePassPipeline(mpm, llvmPasses.getValue()))
    return llvm::createStringError("-mnemo-cpu-llvm-passes: " +
                                   llvm::toString(std::move(error)));
  return std::move(mpm);
}
} // namespace

llvm::Error mnemo::checkLLVMPasses(llvm::TargetMachine &tm) {
  if (!llvmPasses.getNumOccurrences())
    return llvm::Error::success();
  llvm::PassBuilder pb(&tm);
  return parsePipeline(pb).takeError();
}

llvm::Error mnemo::optimizeModule(llvm::Module &module,
                                  llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::Expected<llvm::ModulePassManager> mpm = parsePipeline(pb);
  if (!mpm)
    return mpm.takeError();
  mpm->run(module, mam);
  return llvm::Error::success();
}

namespace {

/// Calls `fn` for each global value that `user` refers to, through
/// constant expressions and aggregates.
void forEachReferencedGlobal(
    const llvm::User *user, llvm::SmallPtrSetImpl<const llvm::Constant *> &seen,
    llvm::function_ref<void(const llvm::GlobalValue *)> fn) {
  for (const llvm::Value *operand : user->operands()) {
    if (const auto *gv = llvm::dyn_cast<llvm::GlobalValue>(operand)) {
      fn(gv);
      continue;
    }
    const auto *c = llvm::dyn_cast<llvm::Constant>(operand);
    if (c && seen.insert(c).second)
      forEachReferencedGlobal(c, seen, fn);
  }
}

/// Whether the module is made only of what the partitioning understands:
/// functions and global variables (no aliases, ifuncs or comdats).
bool isSplittable(const llvm::Module &module) {
  if (!module.aliases().empty() || !module.ifuncs().empty())
    return false;
  for (const llvm::GlobalObject &go : module.global_objects())
    if (go.hasComdat())
      return false;
  return true;
}

/// The owner of a helper: every partition has its own copy.
constexpr unsigned kEverywhere = ~0u;

/// A local function that may be inlined where it is called.
bool isInlinableLocal(const llvm::Function *f) {
  return f && !f->isDeclaration() && f->hasLocalLinkage() &&
         !f->hasFnAttribute(llvm::Attribute::NoInline);
}

/// A small inlinable local called from several functions (the allocation
/// and profile hooks' wrappers): copied into each partition rather than
/// joining every kernel into one cluster.
bool isHelper(const llvm::Function &f) {
  if (!isInlinableLocal(&f) || f.getInstructionCount() > 64)
    return false;
  llvm::SmallPtrSet<const llvm::Function *, 4> callers;
  for (const llvm::User *user : f.users())
    if (const auto *call = llvm::dyn_cast<llvm::CallBase>(user))
      callers.insert(call->getFunction());
  return callers.size() > 1;
}

/// The work of optimizing and generating `f`, estimated before O1: its
/// instructions, those in loops weighted by how deep (loops are where O1
/// vectorizes and unrolls, multiplying the code). Twice per level: at four
/// times, the entry functions' long straight-line code (as costly to
/// generate as a kernel) weighed so little that all three shared the last
/// partition, which then ran alone for a third of the code generation.
uint64_t estimateCost(const llvm::Function &f) {
  llvm::DominatorTree dom(const_cast<llvm::Function &>(f));
  llvm::LoopInfo loops(dom);
  uint64_t cost = 0;
  for (const llvm::BasicBlock &block : f)
    cost += block.size() << std::min(loops.getLoopDepth(&block), 3u);
  return cost;
}

/// Partition of each defined global, by name: variables in 0, helpers
/// everywhere.
llvm::StringMap<unsigned> partition(llvm::Module &module, unsigned partitions) {
  llvm::SmallPtrSet<const llvm::Function *, 8> helpers;
  for (const llvm::Function &f : module)
    if (isHelper(f))
      helpers.insert(&f);
  llvm::EquivalenceClasses<const llvm::Function *> clusters;
  for (const llvm::Function &f : module) {
    if (f.isDeclaration() || helpers.contains(&f))
      continue;
    clusters.insert(&f);
    for (const llvm::Instruction &inst : llvm::instructions(f)) {
      const auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
      const llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
      if (isInlinableLocal(callee) && !helpers.contains(callee))
        clusters.unionSets(&f, callee);
    }
  }
  // Cluster sizes, and the clusters in module order of their first
  // function (deterministic).
  llvm::DenseMap<const llvm::Function *, uint64_t> size;
  llvm::SmallVector<const llvm::Function *> leaders;
  for (const llvm::Function &f : module) {
    if (f.isDeclaration() || helpers.contains(&f))
      continue;
    const llvm::Function *leader = clusters.getLeaderValue(&f);
    auto [it, inserted] = size.try_emplace(leader, 0);
    if (inserted)
      leaders.push_back(leader);
    it->second += estimateCost(f);
  }
  llvm::stable_sort(leaders,
                    [&](const llvm::Function *a, const llvm::Function *b) {
                      return size[a] > size[b];
                    });
  llvm::SmallVector<uint64_t> load(partitions, 0);
  llvm::DenseMap<const llvm::Function *, unsigned> owner;
  for (const llvm::Function *leader : leaders) {
    unsigned p = std::min_element(load.begin(), load.end()) - load.begin();
    load[p] += size[leader];
    owner[leader] = p;
  }
  llvm::StringMap<unsigned> result;
  for (const llvm::Function &f : module)
    if (!f.isDeclaration())
      result[f.getName()] = helpers.contains(&f)
                                ? kEverywhere
                                : owner[clusters.getLeaderValue(&f)];
  for (const llvm::GlobalVariable &g : module.globals())
    if (!g.isDeclaration())
      result[g.getName()] = 0;
  return result;
}

/// Gives the locals that another partition refers to hidden, external
/// linkage, so that the partitions' objects link.
void exportSharedLocals(llvm::Module &module,
                        const llvm::StringMap<unsigned> &owners) {
  llvm::SmallPtrSet<const llvm::GlobalValue *, 16> shared;
  auto visit = [&](const llvm::User *user, unsigned from) {
    llvm::SmallPtrSet<const llvm::Constant *, 16> seen;
    forEachReferencedGlobal(user, seen, [&](const llvm::GlobalValue *gv) {
      auto it = owners.find(gv->getName());
      if (gv->hasLocalLinkage() && it != owners.end() &&
          it->second != kEverywhere && it->second != from)
        shared.insert(gv);
    });
  };
  for (const llvm::Function &f : module)
    if (!f.isDeclaration())
      for (const llvm::Instruction &inst : llvm::instructions(f))
        visit(&inst, owners.lookup(f.getName()));
  for (const llvm::GlobalVariable &g : module.globals())
    if (g.hasInitializer())
      visit(&g, 0);
  for (const llvm::GlobalValue *gv : shared) {
    auto *g = const_cast<llvm::GlobalValue *>(gv);
    g->setLinkage(llvm::GlobalValue::ExternalLinkage);
    g->setVisibility(llvm::GlobalValue::HiddenVisibility);
    g->setDSOLocal(true);
  }
}

/// Reads partition `p` of `bitcode` into `context`: what other partitions
/// define becomes a declaration. The module is read lazily, so only the
/// partition's own function bodies are parsed.
llvm::Expected<std::unique_ptr<llvm::Module>>
loadPartition(llvm::MemoryBufferRef bitcode, llvm::LLVMContext &context,
              const llvm::StringMap<unsigned> &owners, unsigned p) {
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      llvm::getLazyBitcodeModule(bitcode, context);
  if (!module)
    return module.takeError();
  for (llvm::Function &f : **module) {
    if (f.isDeclaration())
      continue;
    unsigned owner = owners.lookup(f.getName());
    if (owner == p || owner == kEverywhere)
      continue;
    // An unread body is dropped unread. Visibility stays: a declaration's
    // would constrain the definition's when the objects are linked.
    f.deleteBody();
  }
  if (llvm::Error error = (*module)->materializeAll())
    return std::move(error);
  for (llvm::GlobalVariable &g : (*module)->globals()) {
    if (g.isDeclaration() || owners.lookup(g.getName()) == p)
      continue;
    g.setInitializer(nullptr);
    g.setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
  return module;
}

llvm::Expected<std::string> emitObject(llvm::Module &module,
                                       llvm::TargetMachine &tm) {
  if (llvm::Error error = optimizeModule(module, tm))
    return std::move(error);
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target machine cannot emit objects");
  pm.run(module);
  return std::string(buffer.str());
}

} // namespace

llvm::Expected<llvm::SmallVector<std::string>>
mnemo::emitPartitionedObjects(llvm::Module &module, unsigned partitions,
                              unsigned threads,
                              TargetMachineFactory makeTarget) {
  unsigned functions = 0;
  for (const llvm::Function &f : module)
    functions += !f.isDeclaration();
  partitions = std::max(1u, std::min(partitions, functions));
  if (partitions == 1 || !isSplittable(module)) {
    std::unique_ptr<llvm::TargetMachine> tm = makeTarget();
    if (!tm)
      return llvm::createStringError("no target machine");
    llvm::Expected<std::string> object = emitObject(module, *tm);
    if (!object)
      return object.takeError();
    return llvm::SmallVector<std::string>{std::move(*object)};
  }
  llvm::StringMap<unsigned> owners = partition(module, partitions);
  exportSharedLocals(module, owners);
  llvm::SmallString<0> bitcode;
  {
    llvm::raw_svector_ostream os(bitcode);
    llvm::WriteBitcodeToFile(module, os);
  }
  llvm::MemoryBufferRef bitcodeRef(bitcode, module.getModuleIdentifier());

  // Target machines are made here, one per partition, and not shared.
  llvm::SmallVector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (unsigned p = 0; p < partitions; ++p) {
    machines.push_back(makeTarget());
    if (!machines.back())
      return llvm::createStringError("no target machine");
  }
  llvm::SmallVector<std::string> objects(partitions);
  llvm::SmallVector<std::string> errors(partitions);
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
    for (unsigned p = 0; p < partitions; ++p)
      pool.async([&, p] {
        llvm::LLVMContext context;
        llvm::Expected<std::unique_ptr<llvm::Module>> part =
            loadPartition(bitcodeRef, context, owners, p);
        llvm::Expected<std::string> object =
            part ? emitObject(**part, *machines[p])
                 : llvm::Expected<std::string>(part.takeError());
        if (object)
          objects[p] = std::move(*object);
        else
          errors[p] = llvm::toString(object.takeError());
      });
    pool.wait();
  }
  for (const std::string &error : errors)
    if (!error.empty())
      return llvm::createStringError(error);
  return objects;
}
