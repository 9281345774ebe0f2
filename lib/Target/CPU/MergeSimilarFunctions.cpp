//===- MergeSimilarFunctions.cpp - one body for kernels of any size ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A model's kernels are specialized to their static shapes: the GEMM of a
// 64-wide projection and that of a 128-wide one are the same instructions
// with other constants (loop bounds, strides), as are a norm over every
// hidden size. `mnemo-cpu-merge-kernels` folds equal kernels in MLIR, and
// LLVM's MergeFunctions equal functions; these differ, and each was
// optimized and generated on its own: code generation is most of a model's
// compile (deepseek_mla: eight GEMM kernels of 500 instructions each).
//
// Here, functions equal up to scalar constants (integers and floats, or a
// constant in one and an integer argument in another) are grouped, and one
// copy takes the values that differ as extra parameters (one parameter per
// distinct column of values across the group). The originals keep their
// names and signatures; each body becomes a tail call of the shared copy
// with its own values, which O1 inlines into the callers. Constants stay
// constants where they must be: switch cases, struct indices of a GEP,
// alloca sizes, `immarg` arguments, divisors (a division by a constant is a
// multiplication; by a register, a division).
//
//===----------------------------------------------------------------------===//

#include "MergeSimilarFunctions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/StructuralHash.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;
using mlir::mnemo::SimilarFunctionsMerged;

namespace {

/// Smaller functions are not worth a call.
constexpr unsigned kMinInstructions = 32;
/// Nor are bodies that would need more parameters than this.
constexpr unsigned kMaxExtraParameters = 24;

/// An operand of the leader's instructions, numbered in order.
struct Site {
  unsigned instruction;
  unsigned operand;
  bool operator<(const Site &other) const {
    return std::tie(instruction, operand) <
           std::tie(other.instruction, other.operand);
  }
  bool operator==(const Site &other) const {
    return instruction == other.instruction && operand == other.operand;
  }
};

/// Whether operand `i` of `inst` may be a run-time value instead of a
/// constant, at no more cost than a register.
bool isParameterizable(const Instruction &inst, unsigned i) {
  switch (inst.getOpcode()) {
  case Instruction::UDiv:
  case Instruction::SDiv:
  case Instruction::URem:
  case Instruction::SRem:
    return i == 0;
  case Instruction::Switch:
    return i == 0;
  case Instruction::Alloca:
    return false;
  default:
    break;
  }
  if (const auto *gep = dyn_cast<GetElementPtrInst>(&inst)) {
    if (i == 0)
      return true;
    auto it = gep_type_begin(gep);
    std::advance(it, i - 1);
    return !it.isStruct();
  }
  if (const auto *call = dyn_cast<CallBase>(&inst))
    return !call->isInlineAsm() && i < call->arg_size() &&
           !call->paramHasAttr(i, Attribute::ImmArg);
  return true;
}

/// Whether two instructions' metadata say the same. Loop metadata is
/// distinct per loop: its properties (operands after the self reference,
/// uniqued) are compared. Debug locations differ between any two
/// functions, so code with debug info is never merged.
bool sameMetadata(const Instruction &a, const Instruction &b) {
  SmallVector<std::pair<unsigned, MDNode *>, 4> ma, mb;
  a.getAllMetadata(ma);
  b.getAllMetadata(mb);
  if (ma.size() != mb.size())
    return false;
  for (auto [x, y] : llvm::zip(ma, mb)) {
    if (x.first != y.first)
      return false;
    if (x.second == y.second)
      continue;
    if (x.first != LLVMContext::MD_loop ||
        x.second->getNumOperands() != y.second->getNumOperands())
      return false;
    for (unsigned i = 1, e = x.second->getNumOperands(); i < e; ++i)
      if (x.second->getOperand(i) != y.second->getOperand(i))
        return false;
  }
  return true;
}

/// What a parameter may carry in one function of a group: a scalar
/// constant, or one of the function's own non-pointer arguments (a size
/// that is static in one kernel and dynamic in another). Never a pointer:
/// the shared body would reach one object through two arguments, which
/// `noalias` on either would make a miscompile.
bool isParameterValue(const Value *v) {
  return isa<ConstantInt, ConstantFP>(v) ||
         (isa<Argument>(v) && !v->getType()->isPointerTy());
}

/// A function's instructions in order.
SmallVector<Instruction *> instructionsOf(Function &f) {
  SmallVector<Instruction *> result;
  for (Instruction &inst : instructions(f))
    result.push_back(&inst);
  return result;
}

/// Compares `g` with `leader`, instruction by instruction; where they
/// differ only in scalar constants at operands that may be parameters,
/// adds those operands to `sites` and returns true.
bool equalUpToConstants(Function &leader, Function &g,
                        SmallVectorImpl<Site> &sites) {
  if (leader.getFunctionType() != g.getFunctionType() ||
      leader.getAttributes() != g.getAttributes() ||
      leader.getCallingConv() != g.getCallingConv() ||
      leader.getAlign() != g.getAlign() || leader.size() != g.size() ||
      leader.getInstructionCount() != g.getInstructionCount())
    return false;
  // g's arguments, blocks and instructions, mapped to the leader's.
  DenseMap<const Value *, const Value *> map;
  for (auto [a, b] : llvm::zip(leader.args(), g.args()))
    map[&b] = &a;
  for (auto [a, b] : llvm::zip(leader, g)) {
    if (a.size() != b.size() || a.hasAddressTaken() || b.hasAddressTaken())
      return false;
    map[&b] = &a;
    for (auto [x, y] : llvm::zip(a, b))
      map[&y] = &x;
  }
  unsigned index = 0;
  for (auto [x, y] : llvm::zip(instructions(leader), instructions(g))) {
    if (!x.isSameOperationAs(&y) || !x.hasSameSubclassOptionalData(&y) ||
        !sameMetadata(x, y))
      return false;
    if (const auto *phi = dyn_cast<PHINode>(&x))
      for (auto [bx, by] :
           llvm::zip(phi->blocks(), cast<PHINode>(&y)->blocks()))
        if (map.lookup(by) != bx)
          return false;
    for (unsigned i = 0, e = x.getNumOperands(); i < e; ++i) {
      const Value *a = x.getOperand(i), *b = y.getOperand(i);
      auto it = map.find(b);
      if (it == map.end() ? a == b : it->second == a)
        continue;
      if (it != map.end() && !isa<Argument>(b))
        return false;
      if (isParameterValue(a) && isParameterValue(b) &&
          a->getType() == b->getType() && isParameterizable(x, i)) {
        sites.push_back({index, i});
        continue;
      }
      return false;
    }
    ++index;
  }
  return true;
}

/// Replaces `f`'s body with a tail call of `shared`, passing its own
/// arguments and then `extra`.
void callShared(Function &f, Function &shared, ArrayRef<Value *> extra) {
  GlobalValue::LinkageTypes linkage = f.getLinkage();
  f.deleteBody();
  f.setLinkage(linkage);
  IRBuilder<> builder(BasicBlock::Create(f.getContext(), "", &f));
  SmallVector<Value *> args;
  for (Argument &arg : f.args())
    args.push_back(&arg);
  llvm::append_range(args, extra);
  CallInst *call = builder.CreateCall(&shared, args);
  call->setTailCall();
  call->setCallingConv(shared.getCallingConv());
  if (f.getReturnType()->isVoidTy())
    builder.CreateRetVoid();
  else
    builder.CreateRet(call);
}

/// Merges `group` (the leader first); each member's differing operands are
/// in `memberSites` (empty for the leader). Returns false, changing
/// nothing, when the group needs too many parameters.
bool mergeGroup(ArrayRef<Function *> group,
                ArrayRef<SmallVector<Site>> memberSites) {
  SmallVector<Site> sites;
  for (const SmallVector<Site> &s : memberSites)
    llvm::append_range(sites, s);
  llvm::sort(sites);
  sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
  SmallVector<SmallVector<Instruction *>> insts;
  for (Function *f : group)
    insts.push_back(instructionsOf(*f));
  // One parameter per distinct column of values (the same stride in ten
  // places is one parameter).
  MapVector<SmallVector<Value *>, SmallVector<Site>> columns;
  for (const Site &site : sites) {
    SmallVector<Value *> column;
    for (const SmallVector<Instruction *> &member : insts)
      column.push_back(member[site.instruction]->getOperand(site.operand));
    columns[column].push_back(site);
  }
  if (columns.size() > kMaxExtraParameters)
    return false;

  Function &leader = *group.front();
  FunctionType *type = leader.getFunctionType();
  SmallVector<Type *> params(type->params());
  for (auto &[column, _] : columns)
    params.push_back(column.front()->getType());
  Function *shared = Function::Create(
      FunctionType::get(type->getReturnType(), params, /*isVarArg=*/false),
      GlobalValue::InternalLinkage, leader.getName() + ".shared",
      leader.getParent());
  ValueToValueMapTy vmap;
  for (auto [from, to] : llvm::zip(leader.args(), shared->args()))
    vmap[&from] = &to;
  SmallVector<ReturnInst *> returns;
  CloneFunctionInto(shared, &leader, vmap,
                    CloneFunctionChangeType::LocalChangesOnly, returns);
  shared->setCallingConv(leader.getCallingConv());
  // One copy for all: never inlined back into each caller.
  shared->addFnAttr(Attribute::NoInline);
  unsigned param = type->getNumParams();
  for (auto &[column, columnSites] : columns) {
    Argument *arg = shared->getArg(param++);
    for (const Site &site : columnSites)
      cast<Instruction>(vmap[insts.front()[site.instruction]])
          ->setOperand(site.operand, arg);
  }
  for (auto [m, f] : llvm::enumerate(group)) {
    SmallVector<Value *> extra;
    for (auto &[column, _] : columns)
      extra.push_back(column[m]);
    callShared(*f, *shared, extra);
  }
  return true;
}

/// Whether `f` computes on vectors already (a GEMM or attention tile that
/// MLIR vectorized). Scalar loops (copies, transposes, elementwise chains)
/// are left to LLVM's loop vectorizer, which needs their constant strides
/// and trip counts: with them as parameters, a transpose became a gather
/// (deepseek_mla's ONNX export: its KV copies 2.5x slower).
bool isVectorCode(const Function &f) {
  for (const Instruction &inst : instructions(f))
    if (inst.getType()->isVectorTy())
      return true;
  return false;
}

/// Whether a call of `f` with its own arguments needs more than the
/// arguments: attributes that change how they are passed (the shared
/// body's call carries none).
bool hasABIAttributes(const Function &f) {
  static constexpr Attribute::AttrKind kinds[] = {
      Attribute::ByVal,      Attribute::ByRef,        Attribute::StructRet,
      Attribute::InAlloca,   Attribute::Preallocated, Attribute::InReg,
      Attribute::ZExt,       Attribute::SExt,         Attribute::SwiftSelf,
      Attribute::SwiftError, Attribute::SwiftAsync,   Attribute::Nest};
  AttributeList attrs = f.getAttributes();
  for (Attribute::AttrKind kind : kinds) {
    if (attrs.hasRetAttr(kind))
      return true;
    for (unsigned i = 0, e = f.arg_size(); i < e; ++i)
      if (attrs.hasParamAttr(i, kind))
        return true;
  }
  return false;
}

/// Functions that may take part: local vector kernels with nothing
/// attached that a shared copy could not keep for each of them (a
/// section, GC, prefix or prologue data, a comdat, function metadata).
bool isCandidate(const Function &f) {
  return !f.isDeclaration() && f.hasLocalLinkage() && !f.isVarArg() &&
         !f.hasPersonalityFn() && !f.hasGC() && !f.hasSection() &&
         !f.hasPrefixData() && !f.hasPrologueData() && !f.hasComdat() &&
         !f.hasMetadata() && !f.hasFnAttribute(Attribute::AlwaysInline) &&
         !hasABIAttributes(f) && f.getInstructionCount() >= kMinInstructions &&
         isVectorCode(f);
}

} // namespace

SimilarFunctionsMerged mlir::mnemo::mergeSimilarFunctions(Module &module) {
  // Buckets of functions with the same shape (opcodes and blocks), in
  // module order.
  MapVector<std::pair<stable_hash, FunctionType *>, SmallVector<Function *>>
      buckets;
  for (Function &f : module)
    if (isCandidate(f))
      buckets[{StructuralHash(f), f.getFunctionType()}].push_back(&f);
  SimilarFunctionsMerged merged;
  for (auto &[_, bucket] : buckets) {
    SmallVector<Function *> rest = bucket;
    while (rest.size() > 1) {
      SmallVector<Function *> group = {rest.front()};
      SmallVector<SmallVector<Site>> sites(1);
      SmallVector<Function *> unmatched;
      for (Function *g : llvm::drop_begin(rest)) {
        SmallVector<Site> s;
        if (equalUpToConstants(*rest.front(), *g, s)) {
          group.push_back(g);
          sites.push_back(std::move(s));
        } else {
          unmatched.push_back(g);
        }
      }
      if (group.size() > 1 && mergeGroup(group, sites)) {
        merged.functions += group.size();
        ++merged.bodies;
      }
      rest = std::move(unmatched);
    }
  }
  return merged;
}
