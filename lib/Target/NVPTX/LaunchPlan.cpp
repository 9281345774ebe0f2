//===- LaunchPlan.cpp - buffers and launches of a GPU function --*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/LaunchPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mnemo;

namespace {

int64_t constantOr(Value v) {
  APInt value;
  if (matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return kDynamicValue;
}

/// Bytes of a buffer: whole bytes per element, as the kernels address them
/// (an i1 takes a byte).
int64_t bytesOf(MemRefType type) {
  if (!type.hasStaticShape())
    return kDynamicValue;
  return type.getNumElements() *
         std::max<int64_t>(1, llvm::divideCeil(type.getElementTypeBitWidth(), 8));
}

class PlanBuilder {
public:
  explicit PlanBuilder(GpuFunctionPlan &plan) : plan(plan) {}

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
    auto type = cast<MemRefType>(value.getType());
    buffer.bytes = bytesOf(type);
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
      buffer.bytes = 128;
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
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return emitError(loc, "kernel argument is not a tensor map "
                                      "of a buffer with a static shape");
    FailureOr<int64_t> source = bufferOf(unranked.getSource());
    if (failed(source))
      return failure();
    // What the plan line fixes: zero fill, 128-byte L2 promotion, no
    // interleave, a 16- or 32-bit float type.
    nvgpu::TensorMapDescriptorType descType = desc.getTensorMap().getType();
    Type elem = type.getElementType();
    if (!elem.isBF16() && !elem.isF16() && !elem.isF32())
      return emitError(loc, "tensor map of ")
             << elem << ": the launch plan holds bf16, f16 or f32 maps";
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
    map.dtype = elem.isBF16() ? "bf16" : elem.isF16() ? "f16" : "f32";
    int64_t bytes = type.getElementTypeBitWidth() / 8, stride = bytes;
    ArrayRef<int64_t> shape = type.getShape();
    for (int64_t i = shape.size() - 1; i >= 0; --i) {
      map.dims.push_back(shape[i]);
      if (i != static_cast<int64_t>(shape.size()) - 1)
        map.strides.push_back(stride);
      stride *= shape[i];
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

  LogicalResult addLaunch(gpu::LaunchFuncOp op) {
    GpuLaunch launch;
    launch.kernel = op.getKernelName().str();
    gpu::KernelDim3 grid = op.getGridSizeOperandValues();
    gpu::KernelDim3 block = op.getBlockSizeOperandValues();
    launch.grid = {constantOr(grid.x), constantOr(grid.y), constantOr(grid.z)};
    launch.block = {constantOr(block.x), constantOr(block.y),
                    constantOr(block.z)};
    if (Value shared = op.getDynamicSharedMemorySize())
      launch.sharedBytes = constantOr(shared);
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
        if (!type.isF32())
          arg.value = constantOr(operand);
        else {
          FloatAttr f;
          arg.value = matchPattern(operand, m_Constant(&f))
                          ? static_cast<int64_t>(llvm::bit_cast<uint32_t>(
                                f.getValue().convertToFloat()))
                          : kDynamicValue;
        }
      }
      launch.args.push_back(arg);
    }
    plan.launches.push_back(std::move(launch));
    return success();
  }

private:
  GpuFunctionPlan &plan;
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
      for (Value v : ret.getOperands()) {
        FailureOr<int64_t> id = builder.bufferOf(v);
        if (failed(id))
          return WalkResult::interrupt();
        plan.outputBuffers.push_back(*id);
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
  auto value = [](int64_t v) {
    return v == kDynamicValue ? std::string("?") : std::to_string(v);
  };
  auto tensor = [&](const GpuTensor &t) {
    os << " " << t.name << " " << t.dtype << " ";
    for (auto [i, d] : llvm::enumerate(t.shape))
      os << (i ? "x" : "") << value(d);
  };
  os << "// mnemo.function " << plan.name << "\n";
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
      os << "tensormap of " << m.source << " " << m.dtype << " dims ";
      list(m.dims);
      os << " strides ";
      list(m.strides);
      os << " box ";
      list(m.box);
      os << " swizzle " << m.swizzle;
      break;
    }
    }
    os << " bytes " << value(b.bytes) << "\n";
  }
  for (const GpuLaunch &l : plan.launches) {
    os << "// mnemo.launch " << l.kernel << " grid " << value(l.grid[0]) << " "
       << value(l.grid[1]) << " " << value(l.grid[2]) << " block "
       << value(l.block[0]) << " " << value(l.block[1]) << " "
       << value(l.block[2]) << " shared " << value(l.sharedBytes) << " args";
    for (const GpuArgument &a : l.args) {
      if (a.kind == GpuArgument::Kind::Buffer)
        os << " buffer:" << a.buffer;
      else
        os << " " << a.type << ":" << value(a.value);
    }
    os << "\n";
  }
  for (auto [i, b] : llvm::enumerate(plan.outputBuffers)) {
    os << "// mnemo.output " << i << " buffer " << b;
    tensor(plan.outputs[i]);
    os << "\n";
  }
}
