//===- MergeSimilarFunctionsTest.cpp - kernels equal up to constants -----===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mergeSimilarFunctions on small LLVM modules: which functions share a body,
// which constants become parameters, and which must stay constants.
//
//===----------------------------------------------------------------------===//

#include "MergeSimilarFunctions.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace llvm;
using mlir::mnemo::mergeSimilarFunctions;

namespace {

/// A vector kernel of 40+ instructions: a loop to `bound` over rows of
/// `stride` floats, storing `scale` vectors (scalars unless `vector`);
/// `tail` is spliced before the return.
std::string kernel(const std::string &name, const std::string &bound,
                   const std::string &stride, const std::string &scale,
                   const std::string &tail = "", bool vector = true) {
  std::string body;
  for (int i = 0; i < 8; ++i) {
    std::string s = std::to_string(i);
    body += "  %o" + s + " = add i64 %row, " + s + "\n";
    body += "  %a" + s + " = mul i64 %o" + s + ", " + stride + "\n";
    body += "  %p" + s + " = getelementptr float, ptr %x, i64 %a" + s + "\n";
    if (vector) {
      body += "  %v" + s + " = insertelement <4 x float> poison, float " +
              scale + ", i64 0\n";
      body += "  store <4 x float> %v" + s + ", ptr %p" + s + "\n";
    } else {
      body += "  %v" + s + " = fadd float " + scale + ", 1.0\n";
      body += "  store float %v" + s + ", ptr %p" + s + "\n";
    }
  }
  return "define internal void @" + name +
         "(ptr %x, i64 %n) {\n"
         "entry:\n"
         "  br label %loop\n"
         "loop:\n"
         "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]\n"
         "  %row = mul i64 %i, " +
         stride + "\n" + body +
         "  %next = add i64 %i, 1\n"
         "  %done = icmp sge i64 %next, " +
         bound +
         "\n"
         "  br i1 %done, label %exit, label %loop\n"
         "exit:\n" +
         tail + "  ret void\n}\n";
}

struct Merged {
  LLVMContext context;
  std::unique_ptr<Module> module;
  mlir::mnemo::SimilarFunctionsMerged result;

  explicit Merged(const std::string &ir) {
    SMDiagnostic error;
    module = parseAssemblyString(ir, error, context);
    if (!module) {
      std::string message;
      raw_string_ostream os(message);
      error.print("test", os);
      ADD_FAILURE() << message;
      return;
    }
    result = mergeSimilarFunctions(*module);
    std::string message;
    raw_string_ostream os(message);
    EXPECT_FALSE(verifyModule(*module, &os)) << message;
  }

  /// The call `name`'s body was reduced to, or null.
  CallInst *sharedCall(StringRef name) {
    Function *f = module->getFunction(name);
    if (!f || f->size() != 1 || f->front().size() != 2)
      return nullptr;
    return dyn_cast<CallInst>(&f->front().front());
  }
};

TEST(MergeSimilarFunctions, ConstantsBecomeParameters) {
  Merged m(kernel("k64", "64", "64", "1.0") +
           kernel("k128", "128", "128", "1.0") +
           kernel("k32", "%n", "32", "2.0"));
  EXPECT_EQ(m.result.functions, 3u);
  EXPECT_EQ(m.result.bodies, 1u);
  CallInst *a = m.sharedCall("k64"), *b = m.sharedCall("k128"),
           *c = m.sharedCall("k32");
  ASSERT_TRUE(a && b && c);
  Function *shared = a->getCalledFunction();
  EXPECT_EQ(shared, b->getCalledFunction());
  EXPECT_EQ(shared, c->getCalledFunction());
  EXPECT_TRUE(shared->hasFnAttribute(Attribute::NoInline));
  // Three parameters: the stride (nine uses), the scale, and the bound,
  // which is a constant in two kernels and the argument %n in the third.
  ASSERT_EQ(shared->arg_size(), 5u);
  auto extra = [](CallInst *call) {
    return SmallVector<Value *>(llvm::drop_begin(call->args(), 2));
  };
  Type *i64 = Type::getInt64Ty(m.context);
  Value *n = c->getFunction()->getArg(1);
  EXPECT_TRUE(is_contained(extra(c), n));
  EXPECT_TRUE(is_contained(extra(c), ConstantInt::get(i64, 32)));
  Constant *two = ConstantFP::get(Type::getFloatTy(m.context), 2.0);
  EXPECT_TRUE(is_contained(extra(c), two));
  EXPECT_EQ(count(extra(a), ConstantInt::get(i64, 64)), 2);
  EXPECT_EQ(count(extra(b), ConstantInt::get(i64, 128)), 2);
  // Every use of the stride reads one parameter.
  unsigned strideParam = 0;
  for (Argument &arg : drop_begin(shared->args(), 2))
    if (arg.getNumUses() == 9)
      strideParam = arg.getArgNo();
  ASSERT_NE(strideParam, 0u);
  EXPECT_EQ(c->getArgOperand(strideParam), ConstantInt::get(i64, 32));
}

TEST(MergeSimilarFunctions, IdenticalShapesOnly) {
  // A different callee, a divisor and a struct index stay apart.
  std::string callee = "declare void @f()\ndeclare void @g()\n";
  Merged calls(callee + kernel("a", "64", "64", "1.0", "  call void @f()\n") +
               kernel("b", "128", "128", "1.0", "  call void @g()\n"));
  EXPECT_EQ(calls.result.functions, 0u);

  Merged divisors(kernel("a", "64", "64", "1.0", "  %q = udiv i64 %n, 64\n") +
                  kernel("b", "64", "64", "1.0", "  %q = udiv i64 %n, 128\n"));
  EXPECT_EQ(divisors.result.functions, 0u);

  std::string gep = "  %s = getelementptr {i64, i64}, ptr %x, i64 0, i32 ";
  Merged fields(kernel("a", "64", "64", "1.0", gep + "0\n") +
                kernel("b", "64", "64", "1.0", gep + "1\n"));
  EXPECT_EQ(fields.result.functions, 0u);

  // Small functions are not merged.
  Merged small("define internal i64 @a(i64 %x) {\n  %y = mul i64 %x, 3\n"
               "  ret i64 %y\n}\n"
               "define internal i64 @b(i64 %x) {\n  %y = mul i64 %x, 5\n"
               "  ret i64 %y\n}\n");
  EXPECT_EQ(small.result.functions, 0u);

  // Scalar loops keep their constants, which LLVM's loop vectorizer needs.
  Merged scalar(kernel("a", "64", "64", "1.0", "", /*vector=*/false) +
                kernel("b", "128", "128", "1.0", "", /*vector=*/false));
  EXPECT_EQ(scalar.result.functions, 0u);

  // Public functions keep their bodies.
  std::string pub = kernel("b", "128", "128", "1.0");
  pub.replace(pub.find("internal "), 9, "");
  Merged exported(kernel("a", "64", "64", "1.0") + pub);
  EXPECT_EQ(exported.result.functions, 0u);
}

/// `ir` with every kernel's signature replaced by `signature`.
std::string withSignature(std::string ir, const std::string &signature) {
  for (size_t at; (at = ir.find("(ptr %x, i64 %n)")) != std::string::npos;)
    ir.replace(at, 16, signature);
  return ir;
}

TEST(MergeSimilarFunctions, WhatASharedBodyCannotKeep) {
  // Two pointer arguments where the other has one: the shared body would
  // reach one object through two arguments, against `noalias`.
  std::string store = "  store float 0.0, ptr %";
  Merged pointers(
      withSignature(kernel("a", "64", "64", "1.0", store + "x\n") +
                        kernel("b", "64", "64", "1.0", store + "y\n"),
                    "(ptr noalias %x, i64 %n, ptr noalias %y)"));
  EXPECT_EQ(pointers.result.functions, 0u);
  // A non-pointer argument against a constant is a parameter.
  Merged sizes(kernel("a", "64", "64", "1.0") + kernel("b", "%n", "64", "1.0"));
  EXPECT_EQ(sizes.result.functions, 2u);

  // Arguments passed by ABI attributes, and always-inline functions.
  Merged abi(withSignature(kernel("a", "64", "64", "1.0") +
                               kernel("b", "128", "128", "1.0"),
                           "(ptr %x, i64 signext %n)"));
  EXPECT_EQ(abi.result.functions, 0u);
  std::string inlined =
      kernel("a", "64", "64", "1.0") + kernel("b", "128", "128", "1.0");
  for (size_t at; (at = inlined.find("i64 %n) {")) != std::string::npos;)
    inlined.replace(at, 9, "i64 %n) alwaysinline {");
  Merged always(inlined);
  EXPECT_EQ(always.result.functions, 0u);
}

TEST(MergeSimilarFunctions, GroupsByShape) {
  // Two groups in one module: the loops of stride 8 and 16 with one tail,
  // those of stride 4 and 2 with another.
  std::string tail = "  call void @f()\n";
  Merged m("declare void @f()\n" + kernel("a", "8", "8", "1.0") +
           kernel("b", "4", "4", "1.0", tail) + kernel("c", "16", "16", "1.0") +
           kernel("d", "2", "2", "1.0", tail));
  EXPECT_EQ(m.result.functions, 4u);
  EXPECT_EQ(m.result.bodies, 2u);
  CallInst *a = m.sharedCall("a"), *c = m.sharedCall("c"),
           *b = m.sharedCall("b"), *d = m.sharedCall("d");
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(a->getCalledFunction(), c->getCalledFunction());
  EXPECT_EQ(b->getCalledFunction(), d->getCalledFunction());
  EXPECT_NE(a->getCalledFunction(), b->getCalledFunction());
}

} // namespace
