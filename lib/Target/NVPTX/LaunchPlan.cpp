//===- LaunchPlan.cpp - buffers and launches of a GPU function --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/LaunchPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

int64_t constantOr(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return kDynamicValue;
}

int64_t elementBytes(MemRefType type) {
  // Kernels lower `index` to 64 bits (the NVVM conversion's default).
  if (type.getElementType().isIndex())
    return 8;
  return std::max<int64_t>(1,
                           llvm::divideCeil(type.getElementTypeBitWidth(), 8));
}

/// Integer values of the host function as expressions of the input dims
/// (GpuExpr), shared by the plan's sizes. A value it cannot describe sets
/// `why` and fails.
class ExprBuilder {
public:
  explicit ExprBuilder(std::vector<GpuExpr> &exprs) : exprs(exprs) {}

  /// An index or integer value: static, or an expression.
  FailureOr<GpuSize> sizeOf(Value v) {
    int64_t c = constantOr(v);
    if (c != kDynamicValue || matchPattern(v, m_Constant()))
      return GpuSize{c};
    FailureOr<int32_t> e = exprOf(v);
    if (failed(e))
      return failure();
    return GpuSize{0, *e};
  }

  /// Dim `d` of memref `m`.
  FailureOr<GpuSize> dimOf(Value m, int64_t d);

  /// The bytes of buffer `m`: its dims' product times the element size.
  FailureOr<GpuSize> bytesOf(Value m) {
    auto type = cast<MemRefType>(m.getType());
    if (type.hasStaticShape())
      return GpuSize{type.getNumElements() * elementBytes(type)};
    GpuSize bytes{elementBytes(type)};
    for (int64_t d = 0; d < type.getRank(); ++d) {
      FailureOr<GpuSize> dim = dimOf(m, d);
      if (failed(dim))
        return failure();
      bytes = mul(bytes, *dim);
    }
    return bytes;
  }

  std::string why;

private:
  FailureOr<int32_t> exprOf(Value v);
  FailureOr<int32_t> build(Value v);
  /// The index of `e`, added unless an equal expression exists.
  int32_t add(GpuExpr e) {
    auto key = std::make_tuple(static_cast<int>(e.op), e.a, e.b, e.c, e.value);
    auto [it, inserted] = known.try_emplace(key, 0);
    if (inserted) {
      exprs.push_back(e);
      it->second = static_cast<int32_t>(exprs.size() - 1);
    }
    return it->second;
  }
  int32_t constant(int64_t c) { return add({GpuExpr::Op::Const, 0, 0, 0, c}); }
  int32_t exprOf(GpuSize s) { return s.isStatic() ? constant(s.value) : s.expr; }

public:
  /// The expression giving `s` (a constant one for a static value).
  int32_t indexOf(GpuSize s) { return exprOf(s); }

  /// x * y, folded when both are known.
  GpuSize product(GpuSize x, GpuSize y) { return mul(x, y); }

private:
  GpuSize mul(GpuSize x, GpuSize y) {
    if (x.isStatic() && y.isStatic())
      return GpuSize{x.value * y.value};
    if (x.isStatic() && x.value == 1)
      return y;
    if (y.isStatic() && y.value == 1)
      return x;
    return GpuSize{0, add({GpuExpr::Op::Mul, static_cast<uint32_t>(exprOf(x)),
                           static_cast<uint32_t>(exprOf(y)), 0, 0})};
  }
  /// Says why a value cannot be described (`op`: where).
  void setWhy(Operation *op, const Twine &what) {
    why = what.str();
    if (op)
      why += " ('" + op->getName().getStringRef().str() + "')";
  }

  std::vector<GpuExpr> &exprs;
  DenseMap<Value, int32_t> memo;
  std::map<std::tuple<int, uint32_t, uint32_t, uint32_t, int64_t>, int32_t>
      known;
};

FailureOr<GpuSize> ExprBuilder::dimOf(Value m, int64_t d) {
  auto type = cast<MemRefType>(m.getType());
  if (!type.isDynamicDim(d))
    return GpuSize{type.getDimSize(d)};
  if (auto arg = dyn_cast<BlockArgument>(m))
    return GpuSize{0, add({GpuExpr::Op::InputDim, arg.getArgNumber(),
                           static_cast<uint32_t>(d), 0, 0})};
  Operation *op = m.getDefiningOp();
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return sizeOf(alloc.getDynamicSizes()[type.getDynamicDimIndex(d)]);
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(op)) {
    OpFoldResult size = expand.getMixedOutputShape()[d];
    if (auto attr = dyn_cast<Attribute>(size))
      return GpuSize{cast<IntegerAttr>(attr).getInt()};
    return sizeOf(cast<Value>(size));
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(op)) {
    GpuSize product{1};
    for (int64_t j : collapse.getReassociationIndices()[d]) {
      FailureOr<GpuSize> dim = dimOf(collapse.getSrc(), j);
      if (failed(dim))
        return failure();
      product = mul(product, *dim);
    }
    return product;
  }
  if (auto cast = dyn_cast<memref::CastOp>(op))
    return dimOf(cast.getSource(), d);
  if (auto view = dyn_cast<OffsetSizeAndStrideOpInterface>(op)) {
    SmallVector<OpFoldResult> sizes = view.getMixedSizes();
    if (static_cast<int64_t>(sizes.size()) == type.getRank()) {
      if (auto attr = dyn_cast<Attribute>(sizes[d]))
        return GpuSize{cast<IntegerAttr>(attr).getInt()};
      return sizeOf(cast<Value>(sizes[d]));
    }
  }
  setWhy(op, "a dynamic dim the plan cannot follow");
  return failure();
}

FailureOr<int32_t> ExprBuilder::exprOf(Value v) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  FailureOr<int32_t> e = build(v);
  if (succeeded(e))
    memo[v] = *e;
  return e;
}

FailureOr<int32_t> ExprBuilder::build(Value v) {
  int64_t c = constantOr(v);
  if (c != kDynamicValue || matchPattern(v, m_Constant()))
    return constant(c);
  Operation *op = v.getDefiningOp();
  if (!op)
    return setWhy(nullptr, "a scalar argument of the function"), failure();
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return setWhy(op, "a dim of a dynamic index"), failure();
    FailureOr<GpuSize> size = dimOf(dim.getSource(), *index);
    if (failed(size))
      return failure();
    return exprOf(*size);
  }
  if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
    Value source = meta.getSource();
    auto type = cast<MemRefType>(source.getType());
    unsigned n = cast<OpResult>(v).getResultNumber();
    int64_t rank = type.getRank();
    if (n >= 2 && n < 2 + rank) {
      FailureOr<GpuSize> size = dimOf(source, n - 2);
      if (failed(size))
        return failure();
      return exprOf(*size);
    }
    // Strides (and the offset) of an identity layout: products of the
    // inner dims (0).
    if (!type.getLayout().isIdentity())
      return setWhy(op, "a stride of a view"), failure();
    if (n == 1)
      return constant(0);
    GpuSize stride{1};
    for (int64_t d = n - 2 - rank + 1; d < rank; ++d) {
      FailureOr<GpuSize> dim = dimOf(source, d);
      if (failed(dim))
        return failure();
      stride = mul(stride, *dim);
    }
    return exprOf(stride);
  }
  // Casts keep the value (sizes fit 32 bits); a flag (i1) extended to an
  // integer is left to fail: sign-extended, true is -1.
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(op) &&
      !op->getOperand(0).getType().isInteger(1))
    return exprOf(op->getOperand(0));
  using Op = GpuExpr::Op;
  std::optional<Op> binary =
      llvm::TypeSwitch<Operation *, std::optional<Op>>(op)
          .Case([](arith::AddIOp) { return Op::Add; })
          .Case([](arith::SubIOp) { return Op::Sub; })
          .Case([](arith::MulIOp) { return Op::Mul; })
          .Case([](arith::DivSIOp) { return Op::DivS; })
          .Case([](arith::FloorDivSIOp) { return Op::FloorDivS; })
          .Case([](arith::CeilDivSIOp) { return Op::CeilDivS; })
          .Case([](arith::RemSIOp) { return Op::RemS; })
          .Case([](arith::MinSIOp) { return Op::MinS; })
          .Case([](arith::MaxSIOp) { return Op::MaxS; })
          .Case([](arith::DivUIOp) { return Op::DivU; })
          .Case([](arith::RemUIOp) { return Op::RemU; })
          .Case([](arith::MinUIOp) { return Op::MinU; })
          .Case([](arith::MaxUIOp) { return Op::MaxU; })
          .Case([](arith::CmpIOp cmp) -> std::optional<Op> {
            using P = arith::CmpIPredicate;
            switch (cmp.getPredicate()) {
            case P::eq: return Op::CmpEq;
            case P::ne: return Op::CmpNe;
            case P::slt: return Op::CmpSlt;
            case P::sle: return Op::CmpSle;
            case P::sgt: return Op::CmpSgt;
            case P::sge: return Op::CmpSge;
            case P::ult: return Op::CmpUlt;
            case P::ule: return Op::CmpUle;
            case P::ugt: return Op::CmpUgt;
            case P::uge: return Op::CmpUge;
            }
            return std::nullopt;
          })
          .Default([](Operation *) { return std::nullopt; });
  if (binary) {
    FailureOr<int32_t> a = exprOf(op->getOperand(0));
    if (failed(a))
      return failure();
    FailureOr<int32_t> b = exprOf(op->getOperand(1));
    if (failed(b))
      return failure();
    return add({*binary, static_cast<uint32_t>(*a), static_cast<uint32_t>(*b),
                0, 0});
  }
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    FailureOr<int32_t> cond = exprOf(select.getCondition());
    if (failed(cond))
      return failure();
    FailureOr<int32_t> a = exprOf(select.getTrueValue());
    if (failed(a))
      return failure();
    FailureOr<int32_t> b = exprOf(select.getFalseValue());
    if (failed(b))
      return failure();
    return add({Op::Select, static_cast<uint32_t>(*a),
                static_cast<uint32_t>(*b), static_cast<uint32_t>(*cond), 0});
  }
  return setWhy(op, "a value computed on the host"), failure();
}

class PlanBuilder {
public:
  explicit PlanBuilder(GpuFunctionPlan &plan)
      : plan(plan), exprs(plan.exprs) {}

  /// A size the plan cannot record: the function is marked unsupported
  /// (success: the module still compiles).
  bool unsupported(const Twine &what) {
    if (plan.unsupported.empty())
      plan.unsupported = "'" + plan.name + "': " + what.str();
    return true;
  }

  /// The buffer a memref value lives in.
  FailureOr<int64_t> bufferOf(Value value) {
    while (true) {
      if (auto it = ids.find(value); it != ids.end())
        return it->second;
      if (auto meta = value.getDefiningOp<memref::ExtractStridedMetadataOp>()) {
        value = meta.getSource();
        continue;
      }
      if (auto view = value.getDefiningOp<ViewLikeOpInterface>();
          view && !isa<memref::ViewOp>(view)) {
        value = view.getViewSource();
        continue;
      }
      break;
    }
    GpuBuffer buffer;
    FailureOr<GpuSize> bytes = exprs.bytesOf(value);
    if (failed(bytes) && unsupported("the size of a buffer: " + exprs.why))
      bytes = GpuSize{0};
    buffer.bytes = *bytes;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto func = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
      if (auto w = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                      "mnemo.weight")) {
        buffer.kind = GpuBuffer::Kind::Weight;
        buffer.weight = w.getInt();
      } else {
        buffer.kind = GpuBuffer::Kind::Input;
        buffer.input = arg.getArgNumber();
      }
    } else if (auto global = value.getDefiningOp<memref::GetGlobalOp>()) {
      // Constants are sunk into the kernels (mnemo-gpu-sink-constant-globals);
      // the plan has no way to pass one.
      return emitError(value.getLoc(), "constant global '")
             << global.getName() << "' passed to a kernel (not sunk into it)";
    } else if (auto alloc = value.getDefiningOp<memref::AllocOp>()) {
      buffer.kind = GpuBuffer::Kind::Temporary;
    } else if (auto mapCast =
                   value.getDefiningOp<UnrealizedConversionCastOp>()) {
      FailureOr<GpuTensorMap> map = tensorMapOf(mapCast);
      if (failed(map))
        return failure();
      buffer.kind = GpuBuffer::Kind::TensorMap;
      buffer.map = *map;
      buffer.bytes = GpuSize{128};
    } else {
      return emitError(value.getLoc(), "buffer of a kernel argument is not an "
                                       "input, weight or allocation");
    }
    plan.buffers.push_back(buffer);
    return ids[value] = plan.buffers.size() - 1;
  }

  /// The tensor map that `cast` passes to a kernel as a byte buffer:
  /// unrealized_conversion_cast(nvgpu.tma.create.descriptor(memref.cast X)).
  FailureOr<GpuTensorMap> tensorMapOf(UnrealizedConversionCastOp mapCast) {
    Location loc = mapCast.getLoc();
    auto desc = mapCast.getNumOperands() == 1
                    ? mapCast.getOperand(0)
                          .getDefiningOp<nvgpu::TmaCreateDescriptorOp>()
                    : nullptr;
    auto unranked = desc ? desc.getTensor().getDefiningOp<memref::CastOp>()
                         : nullptr;
    auto type = unranked ? dyn_cast<MemRefType>(unranked.getSource().getType())
                         : nullptr;
    if (!type || !type.getLayout().isIdentity())
      return emitError(loc, "kernel argument is not a tensor map "
                            "of a buffer with an identity layout");
    FailureOr<int64_t> source = bufferOf(unranked.getSource());
    if (failed(source))
      return failure();
    // What the plan line fixes: zero fill, 128-byte L2 promotion, no
    // interleave, a 16- or 32-bit float type.
    nvgpu::TensorMapDescriptorType descType = desc.getTensorMap().getType();
    Type elem = type.getElementType();
    bool fp8 = isa<Float8E4M3FNType>(elem);
    if (!elem.isBF16() && !elem.isF16() && !elem.isF32() && !fp8)
      return emitError(loc, "tensor map of ")
             << elem
             << ": the launch plan holds bf16, f16, f32 or f8E4M3FN maps";
    if (descType.getOob() != nvgpu::TensorMapOOBKind::OOB_ZERO ||
        descType.getL2promo() != nvgpu::TensorMapL2PromoKind::L2PROMO_128B ||
        descType.getInterleave() !=
            nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
      return emitError(loc,
                       "tensor map with an out-of-bounds fill, L2 promotion "
                       "or interleave the launch plan cannot express (zero "
                       "fill, 128 bytes, none)");
    GpuTensorMap map;
    map.source = *source;
    map.dtype = elem.isBF16()  ? "bf16"
                : elem.isF16() ? "f16"
                : fp8          ? "f8e4m3"
                               : "f32";
    // Dims innermost first; a dynamic one (and the strides past it) are
    // expressions of the input dims.
    GpuSize stride{type.getElementTypeBitWidth() / 8};
    for (int64_t i = type.getRank() - 1; i >= 0; --i) {
      FailureOr<GpuSize> dim = exprs.dimOf(unranked.getSource(), i);
      if (failed(dim))
        return unsupported("a tensor map's dim: " + exprs.why), map;
      map.dims.push_back(*dim);
      if (i != type.getRank() - 1)
        map.strides.push_back(stride);
      stride = exprs.product(stride, *dim);
    }
    for (Value size : llvm::reverse(desc.getBoxDimensions()))
      map.box.push_back(constantOr(size));
    if (llvm::is_contained(map.box, kDynamicValue))
      return emitError(loc, "tensor map box of dynamic size");
    switch (desc.getTensorMap().getType().getSwizzle()) {
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE: map.swizzle = 0; break;
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B: map.swizzle = 32; break;
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B: map.swizzle = 64; break;
    case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B: map.swizzle = 128; break;
    }
    return map;
  }

  /// Whether the launched kernel (a gpu.func or, lowered, an llvm.func)
  /// executes `griddepcontrol.wait` before any operation that may touch
  /// memory (mnemo-gpu-programmatic-launch; constants the folder hoisted
  /// may come first).
  static bool kernelWaitsFirst(gpu::LaunchFuncOp op) {
    Operation *kernel =
        SymbolTable::lookupNearestSymbolFrom(op, op.getKernel());
    if (!kernel || kernel->getNumRegions() != 1 || kernel->getRegion(0).empty())
      return false;
    for (Operation &first : kernel->getRegion(0).front()) {
      if (auto wait = dyn_cast<NVVM::GriddepcontrolOp>(first))
        return wait.getKind() == NVVM::GridDepActionKind::wait;
      if (!isMemoryEffectFree(&first) || first.getNumRegions())
        return false;
    }
    return false;
  }

  LogicalResult addLaunch(gpu::LaunchFuncOp op) {
    GpuLaunch launch;
    launch.kernel = op.getKernelName().str();
    launch.programmatic = kernelWaitsFirst(op);
    gpu::KernelDim3 grid = op.getGridSizeOperandValues();
    gpu::KernelDim3 block = op.getBlockSizeOperandValues();
    for (auto [d, size] : llvm::enumerate(ValueRange{grid.x, grid.y, grid.z})) {
      FailureOr<GpuSize> s = exprs.sizeOf(size);
      if (failed(s))
        return unsupported("a grid size: " + exprs.why), success();
      launch.grid[d] = *s;
    }
    launch.block = {constantOr(block.x), constantOr(block.y),
                    constantOr(block.z)};
    if (llvm::is_contained(launch.block, kDynamicValue))
      return unsupported("a block size known at run time only"), success();
    if (Value shared = op.getDynamicSharedMemorySize())
      launch.sharedBytes = constantOr(shared);
    if (launch.sharedBytes == kDynamicValue)
      return unsupported("shared memory known at run time only"), success();
    for (Value operand : op.getKernelOperands()) {
      GpuArgument arg;
      if (isa<MemRefType>(operand.getType())) {
        FailureOr<int64_t> id = bufferOf(operand);
        if (failed(id))
          return failure();
        arg.buffer = *id;
      } else {
        Type type = operand.getType();
        arg.kind = GpuArgument::Kind::Scalar;
        arg.type = type.isIndex() ? "i64"
                   : type.isF32() ? "f32"
                   : type.isInteger(32) ? "i32"
                   : type.isInteger(64) ? "i64"
                                        : "";
        if (arg.type.empty())
          return op.emitOpError("kernel argument of type ")
                 << type << " has no launch-plan form";
        if (!type.isF32()) {
          FailureOr<GpuSize> value = exprs.sizeOf(operand);
          if (failed(value))
            return unsupported("a kernel argument: " + exprs.why), success();
          arg.value = *value;
        } else {
          FloatAttr f;
          if (!matchPattern(operand, m_Constant(&f)))
            return unsupported("an f32 kernel argument known at run time "
                               "only"),
                   success();
          arg.value = GpuSize{static_cast<int64_t>(
              llvm::bit_cast<uint32_t>(f.getValue().convertToFloat()))};
        }
      }
      launch.args.push_back(arg);
    }
    plan.launches.push_back(std::move(launch));
    return success();
  }

  /// The expression of each dynamic dim of output `value`.
  void addOutputDims(Value value, GpuTensor &t) {
    auto type = cast<MemRefType>(value.getType());
    t.dimExprs.assign(type.getRank(), -1);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      FailureOr<GpuSize> dim = exprs.dimOf(value, d);
      if (failed(dim)) {
        unsupported("an output dim: " + exprs.why);
        return;
      }
      // A dim the signature leaves dynamic has an expression even when
      // the host knows it (a constant one).
      t.dimExprs[d] = exprs.indexOf(*dim);
    }
  }

private:
  GpuFunctionPlan &plan;
  ExprBuilder exprs;
  DenseMap<Value, int64_t> ids;
};

/// The runtime's name of an element type, or "".
std::string dtypeName(Type t) {
  if (t.isF32()) return "f32";
  if (t.isF16()) return "f16";
  if (t.isBF16()) return "bf16";
  if (t.isF64()) return "f64";
  if (t.isInteger(64)) return "i64";
  if (t.isInteger(32)) return "i32";
  if (t.isInteger(8)) return t.isUnsignedInteger() ? "u8" : "i8";
  if (t.isInteger(1)) return "bool";
  if (isa<Float8E4M3FNType>(t)) return "f8e4m3";
  return "";
}

LogicalResult signature(func::FuncOp func, TypeRange types, bool results,
                        std::vector<GpuTensor> &out) {
  for (auto [i, type] : llvm::enumerate(types)) {
    auto memref = dyn_cast<MemRefType>(type);
    DictionaryAttr attrs =
        results ? func.getResultAttrDict(i) : func.getArgAttrDict(i);
    // Weight operands of an artifact are plan buffers, not inputs.
    if (attrs && attrs.get("mnemo.weight"))
      continue;
    auto name = attrs ? attrs.getAs<StringAttr>("mnemo.name") : StringAttr();
    GpuTensor t;
    t.name = name ? name.str()
                  : (results ? "output" : "input") + std::to_string(i);
    t.dtype = memref ? dtypeName(memref.getElementType()) : "";
    if (t.dtype.empty())
      return func.emitOpError("signature type ")
             << type << " has no launch-plan form";
    for (int64_t d : memref.getShape())
      t.shape.push_back(ShapedType::isDynamic(d) ? kDynamicValue : d);
    out.push_back(std::move(t));
  }
  return success();
}

LogicalResult buildPlan(func::FuncOp func, GpuFunctionPlan &plan) {
  plan.name = func.getName().str();
  if (failed(signature(func, func.getArgumentTypes(), false, plan.inputs)) ||
      failed(signature(func, func.getResultTypes(), true, plan.outputs)))
    return failure();
  PlanBuilder builder(plan);
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      return failed(builder.addLaunch(launch)) ? WalkResult::interrupt()
                                               : WalkResult::advance();
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        FailureOr<int64_t> id = builder.bufferOf(v);
        if (failed(id))
          return WalkResult::interrupt();
        plan.outputBuffers.push_back(*id);
        builder.addOutputDims(v, plan.outputs[i]);
      }
      return WalkResult::advance();
    }
    if (op == func.getOperation() || isMemoryEffectFree(op) ||
        isa<memref::AllocOp, memref::DeallocOp, memref::GetGlobalOp,
            nvgpu::TmaCreateDescriptorOp>(op))
      return WalkResult::advance();
    op->emitOpError("runs on the host between kernels; a GPU launch plan "
                    "cannot hold it");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

} // namespace

FailureOr<std::vector<GpuFunctionPlan>>
mnemo::buildLaunchPlans(ModuleOp module) {
  std::vector<GpuFunctionPlan> plans;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isPrivate() || func.isExternal())
      continue;
    plans.emplace_back();
    if (failed(buildPlan(func, plans.back())))
      return failure();
  }
  return plans;
}

void mnemo::printLaunchPlan(const GpuFunctionPlan &plan, llvm::raw_ostream &os) {
  // Dynamic values print as the expression that gives them: eN.
  auto value = [](int64_t v) {
    return v == kDynamicValue ? std::string("?") : std::to_string(v);
  };
  auto size = [](GpuSize s) {
    return s.isStatic() ? std::to_string(s.value) : "e" + std::to_string(s.expr);
  };
  auto tensor = [&](const GpuTensor &t) {
    os << " " << t.name << " " << t.dtype << " ";
    for (auto [i, d] : llvm::enumerate(t.shape))
      os << (i ? "x" : "")
         << (i < t.dimExprs.size() && t.dimExprs[i] >= 0
                 ? "e" + std::to_string(t.dimExprs[i])
                 : value(d));
  };
  static const char *const ops[] = {
      "const", "input_dim", "add", "sub", "mul", "div_s", "floor_div_s",
      "ceil_div_s", "rem_s", "min_s", "max_s", "div_u", "rem_u", "min_u",
      "max_u", "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt",
      "uge", "select"};
  os << "// mnemo.function " << plan.name << "\n";
  if (!plan.unsupported.empty())
    os << "// mnemo.unsupported " << plan.unsupported << "\n";
  for (auto [i, e] : llvm::enumerate(plan.exprs)) {
    os << "// mnemo.expr e" << i << " = " << ops[static_cast<int>(e.op)];
    if (e.op == GpuExpr::Op::Const)
      os << " " << e.value;
    else if (e.op == GpuExpr::Op::InputDim)
      os << " " << e.a << " " << e.b;
    else if (e.op == GpuExpr::Op::Select)
      os << " e" << e.c << " e" << e.a << " e" << e.b;
    else
      os << " e" << e.a << " e" << e.b;
    os << "\n";
  }
  for (auto [i, t] : llvm::enumerate(plan.inputs)) {
    os << "// mnemo.input " << i;
    tensor(t);
    os << "\n";
  }
  for (auto [i, b] : llvm::enumerate(plan.buffers)) {
    os << "// mnemo.buffer " << i << " ";
    switch (b.kind) {
    case GpuBuffer::Kind::Input:
      os << "input " << b.input;
      break;
    case GpuBuffer::Kind::Weight:
      os << "weight " << b.weight;
      break;
    case GpuBuffer::Kind::Temporary:
      os << "temporary";
      break;
    case GpuBuffer::Kind::TensorMap: {
      const GpuTensorMap &m = b.map;
      auto list = [&](ArrayRef<int64_t> xs) {
        if (xs.empty())
          os << "-";
        for (auto [j, x] : llvm::enumerate(xs))
          os << (j ? "x" : "") << x;
      };
      auto sizes = [&](ArrayRef<GpuSize> xs) {
        if (xs.empty())
          os << "-";
        for (auto [j, x] : llvm::enumerate(xs))
          os << (j ? "x" : "") << size(x);
      };
      os << "tensormap of " << m.source << " " << m.dtype << " dims ";
      sizes(m.dims);
      os << " strides ";
      sizes(m.strides);
      os << " box ";
      list(m.box);
      os << " swizzle " << m.swizzle;
      break;
    }
    }
    os << " bytes " << size(b.bytes) << "\n";
  }
  for (const GpuLaunch &l : plan.launches) {
    os << "// mnemo.launch " << l.kernel << " grid " << size(l.grid[0]) << " "
       << size(l.grid[1]) << " " << size(l.grid[2]) << " block "
       << value(l.block[0]) << " " << value(l.block[1]) << " "
       << value(l.block[2]) << " shared " << value(l.sharedBytes) << " args";
    for (const GpuArgument &a : l.args) {
      if (a.kind == GpuArgument::Kind::Buffer)
        os << " buffer:" << a.buffer;
      else
        os << " " << a.type << ":" << size(a.value);
    }
    if (l.programmatic)
      os << " programmatic";
    os << "\n";
  }
  for (auto [i, b] : llvm::enumerate(plan.outputBuffers)) {
    os << "// mnemo.output " << i << " buffer " << b;
    tensor(plan.outputs[i]);
    os << "\n";
  }
}
