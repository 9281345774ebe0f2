//===- InputShapes.cpp - entry inputs specialized to static shapes -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mnemoc --input-shape NAME=2x23` compiles a model for one input shape: the
// named argument of every public function gets the static type, and a
// tensor.cast back to the declared type keeps the body valid. Folding the
// tensor.dim ops of the cast then makes every derived size a constant, which
// targets without dynamic shapes (the GPU launch plan) need; once the
// tensor IR is static, the results' types are refined the same way.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Compiler/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::mnemo;

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s;
}

LogicalResult mnemo::specializeInputShapes(ModuleOp module,
                                           ArrayRef<InputShape> shapes) {
  llvm::StringSet<> used;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    SmallVector<Type> argTypes(func.getArgumentTypes());
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "mnemo.name");
      auto it = llvm::find_if(shapes, [&](const InputShape &s) {
        return name && s.name == name.getValue();
      });
      if (it == shapes.end())
        continue;
      used.insert(it->name);
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() != int64_t(it->shape.size()))
        return func.emitError("--input-shape ")
               << it->name << "=" << formatShape(it->shape) << ": input has type "
               << arg.getType();
      for (auto [d, want] : llvm::zip(type.getShape(), it->shape))
        if (want <= 0 || (!ShapedType::isDynamic(d) && d != want))
          return func.emitError("--input-shape ")
                 << it->name << "=" << formatShape(it->shape)
                 << ": input has shape " << formatShape(type.getShape());
      auto staticType = type.clone(it->shape);
      if (staticType == type)
        continue;
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      arg.setType(staticType);
      auto cast = tensor::CastOp::create(b, arg.getLoc(), type, arg);
      arg.replaceAllUsesExcept(cast, cast);
      argTypes[i] = staticType;
    }
    func.setType(FunctionType::get(module.getContext(), argTypes,
                                   func.getResultTypes()));
  }
  for (const InputShape &s : shapes)
    if (!used.contains(s.name))
      return module.emitError("--input-shape: no input named '")
             << s.name << "'";
  return success();
}

void mnemo::refineEntryResultTypes(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<Type> results(func.getResultTypes());
    for (OpOperand &operand : ret->getOpOperands()) {
      auto castOp = operand.get().getDefiningOp<tensor::CastOp>();
      if (!castOp ||
          !tensor::preservesStaticInformation(castOp.getType(),
                                              castOp.getSource().getType()))
        continue;
      operand.set(castOp.getSource());
      results[operand.getOperandNumber()] = castOp.getSource().getType();
    }
    func.setType(FunctionType::get(module.getContext(),
                                   func.getArgumentTypes(), results));
  }
}
