//===- TensorCoreBuilder.cpp - warp-level MMA building blocks ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TensorCoreBuilder.h"

#include "dialects/Mnemo/IR/MnemoOps.h"

#include "llvm/ADT/StringSwitch.h"

namespace mlir::mnemo::nvptx {

Value indexConstant(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

Value f32Constant(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}

Value exp2Approx(ImplicitLocOpBuilder &b, Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
      .getResult(0);
}

Value pointerFromIndex(ImplicitLocOpBuilder &b, Value address,
                       unsigned addressSpace) {
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), addressSpace),
      Value(arith::IndexCastUIOp::create(b, b.getI64Type(), address)));
}

Value readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor) {
  if (!tensor)
    return nullptr;
  auto t = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, MemRefType::get(t.getShape(), t.getElementType()), tensor,
      /*readOnly=*/true);
}

/// The one 16-bit type of the weights of `func`'s linear layers (a bf16 or
/// f16 artifact), or null when they have none or several.
Type sixteenBitWeightType(func::FuncOp func) {
  Type found;
  bool mixed = false;
  func.walk([&](mnemo::LinearOp op) {
    Type t = cast<RankedTensorType>(op.getWeight().getType()).getElementType();
    if (!t.isBF16() && !t.isF16())
      mixed = true;
    else if (found && found != t)
      mixed = true;
    found = t;
  });
  return mixed ? Type() : found;
}

Value dynamicSharedView(ImplicitLocOpBuilder &b, int64_t elements, Type elem) {
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), workgroup));
  return memref::ViewOp::create(
      b,
      MemRefType::get({elements}, elem, MemRefLayoutAttrInterface(), workgroup),
      raw, indexConstant(b, 0), ValueRange{});
}

gpu::LaunchOp createKernelLaunch(ImplicitLocOpBuilder &b, StringRef name,
                                 std::array<int64_t, 3> grid,
                                 int64_t threads, int64_t sharedBytes) {
  auto c = [&](int64_t v) { return indexConstant(b, v); };
  Value gx = c(grid[0]), gy = c(grid[1]), gz = c(grid[2]);
  Value bx = c(threads), one = c(1);
  Value shared = sharedBytes
                     ? Value(arith::ConstantIntOp::create(b, sharedBytes, 32))
                     : Value();
  auto launch = gpu::LaunchOp::create(
      b, gx, gy, gz, bx, one, one, shared, /*asyncTokenType=*/nullptr,
      ValueRange{}, /*workgroupAttributions=*/TypeRange{},
      /*privateAttributions=*/TypeRange{}, /*clusterSizeX=*/nullptr,
      /*clusterSizeY=*/nullptr, /*clusterSizeZ=*/nullptr, /*module=*/nullptr,
      FlatSymbolRefAttr::get(b.getContext(), name));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b);
  return launch;
}

Value createTensorMap(ImplicitLocOpBuilder &b, Value buffer,
                      ArrayRef<int64_t> box, Type elem, int64_t swizzle) {
  MLIRContext *ctx = b.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto type = cast<MemRefType>(buffer.getType());
  Value unranked = memref::CastOp::create(
      b, UnrankedMemRefType::get(elem, type.getMemorySpace()), buffer);
  SmallVector<Value> sizes;
  for (int64_t d : box)
    sizes.push_back(indexConstant(b, d));
  auto descType = nvgpu::TensorMapDescriptorType::get(
      ctx, MemRefType::get(box, elem, MemRefLayoutAttrInterface(), workgroup),
      swizzle == 128  ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
      : swizzle == 64 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_64B
      : swizzle == 32 ? nvgpu::TensorMapSwizzleKind::SWIZZLE_32B
                      : nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE,
      nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value desc =
      nvgpu::TmaCreateDescriptorOp::create(b, descType, unranked, sizes);
  return UnrealizedConversionCastOp::create(
             b, MemRefType::get({128}, b.getI8Type()), desc)
      .getResult(0);
}

std::optional<F32Precision> parseF32Precision(StringRef name) {
  return llvm::StringSwitch<std::optional<F32Precision>>(name)
      .Case("3xtf32", F32Precision::tf32x3)
      .Case("tf32", F32Precision::tf32)
      .Case("f32", F32Precision::cudaCores)
      .Default(std::nullopt);
}

TensorCoreBuilder::TensorCoreBuilder(ImplicitLocOpBuilder &b, Type elem)
    : b(b), elem(elem), f32(b.getF32Type()), i32(b.getI32Type()) {
  reg = elem.isF16() ? Type(VectorType::get({2}, elem)) : i32;
}

void TensorCoreBuilder::ifThen(Value cond, function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

Value TensorCoreBuilder::offset(const SharedTile &r, Value row, Value col) {
  int64_t w = r.panelWidth();
  Value chunk = div(rem(col, w), 8);
  if (r.swizzled())
    chunk = arith::XOrIOp::create(b, chunk, rem(row, 8));
  Value panel = mul(div(col, w), r.rows * w);
  Value base = idx(r.base);
  if (r.shift)
    base = add(base, r.shift);
  return add(base, add(panel, add(mul(row, w), mul(chunk, 8))));
}

Value TensorCoreBuilder::asyncCopy(const SharedTile &r, Value row, Value col,
                                   Value memref, ArrayRef<Value> rowIndices,
                                   Value srcCol, Value valid) {
  SmallVector<Value> src;
  for (Value i : rowIndices)
    src.push_back(select(valid, i, idx(0)));
  src.push_back(srcCol);
  // 16 bytes: 8 16-bit elements or 4 f32 ones.
  bool wide = cast<MemRefType>(memref.getType()).getElementTypeBitWidth() == 32;
  int64_t count = wide ? 4 : 8;
  Value elements = select(valid, idx(count), idx(0));
  Value dst = offset(r, row, col);
  if (wide)
    dst = div(dst, 2);
  return nvgpu::DeviceAsyncCopyOp::create(
      b, nvgpu::DeviceAsyncTokenType::get(b.getContext()),
      wide ? wideTiles : tiles, ValueRange{dst}, memref, src,
      b.getIndexAttr(count), elements, b.getUnitAttr());
}

void TensorCoreBuilder::commit(ArrayRef<Value> tokens) {
  nvgpu::DeviceAsyncCreateGroupOp::create(
      b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
}

void TensorCoreBuilder::fenceAsyncShared() {
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void TensorCoreBuilder::waitAll(bool asyncProxy, int64_t pending) {
  // cp.async.wait_group N waits until at most N groups are in flight; the
  // token it takes only orders it in the IR, so an empty group stands in
  // for groups committed in other regions (the previous iterations'
  // prefetches).
  Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
      b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), ValueRange{});
  nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(pending));
  // wgmma reads shared memory through the async proxy: the copies (made
  // through the generic proxy) must be fenced before the barrier.
  if (asyncProxy)
    fenceAsyncShared();
  gpu::BarrierOp::create(b);
}

Fragment TensorCoreBuilder::ldmatrix(const SharedTile &r, Value row, Value col,
                                     bool transpose) {
  auto type = VectorType::get({4, 2}, elem);
  Value m = nvgpu::LdMatrixOp::create(b, type, tiles,
                                      ValueRange{offset(r, row, col)},
                                      transpose, /*numTiles=*/4);
  Fragment f;
  for (int64_t i = 0; i < 4; ++i)
    f.push_back(toReg(vector::ExtractOp::create(b, m, ArrayRef<int64_t>{i})));
  return f;
}

Accumulator TensorCoreBuilder::mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                   ArrayRef<Value> c, Type operands) {
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               {f32, f32, f32, f32});
  if (!operands)
    operands = elem;
  // f32 operands are TF32 values (i32 registers): m16n8k8.
  NVVM::MMATypes t = operands.isF32()   ? NVVM::MMATypes::tf32
                     : operands.isF16() ? NVVM::MMATypes::f16
                                        : NVVM::MMATypes::bf16;
  int64_t k = operands.isF32() ? 8 : 16;
  Value d = NVVM::MmaOp::create(
      b, type, a, bFrag, c, ArrayRef<int64_t>{16, 8, k}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{t, t},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  Accumulator out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, d, ArrayRef<int64_t>{i}));
  return out;
}

std::pair<Value, Value> TensorCoreBuilder::splitTf32(Value bits,
                                                     bool withRest) {
  auto round = [&](Value x) -> Value {
    return NVVM::ConvertFloatToTF32Op::create(
        b, i32, x, NVVM::FPRoundingMode::RNA, NVVM::SaturationMode::NONE,
        /*relu=*/false);
  };
  Value x = arith::BitcastOp::create(b, f32, bits);
  Value hi = round(x);
  if (!withRest)
    return {hi, nullptr};
  Value rest = fsub(x, arith::BitcastOp::create(b, f32, hi));
  return {hi, round(rest)};
}

void TensorCoreBuilder::splitFragment(ArrayRef<Value> f, Fragment &hi,
                                      Fragment &lo, bool withRest) {
  for (Value r : f) {
    auto [h, l] = splitTf32(r, withRest);
    hi.push_back(h);
    if (withRest)
      lo.push_back(l);
  }
}

Accumulator TensorCoreBuilder::mmaSplit(ArrayRef<Value> aHi,
                                        ArrayRef<Value> aLo,
                                        ArrayRef<Value> bHi,
                                        ArrayRef<Value> bLo, Accumulator c) {
  // (B without a rest: a TF32 value already, as decoded weight codes.)
  if (!aLo.empty())
    c = mma(aLo, bHi, c, f32);
  if (!bLo.empty())
    c = mma(aHi, bLo, c, f32);
  return mma(aHi, bHi, c, f32);
}

Value TensorCoreBuilder::pack(Value lo, Value hi, Type type) {
  if (!type)
    type = elem;
  Value pair = vector::FromElementsOp::create(
      b, VectorType::get({2}, f32), ValueRange{lo, hi});
  return toReg(arith::TruncFOp::create(b, VectorType::get({2}, type), pair));
}

Value TensorCoreBuilder::toReg(Value pair) {
  // mma.sync takes f16 pairs as vector<2xf16>, bf16 pairs as i32.
  if (cast<VectorType>(pair.getType()).getElementType().isF16())
    return pair;
  Value v = vector::BitCastOp::create(b, VectorType::get({1}, i32), pair);
  return vector::ExtractOp::create(b, v, ArrayRef<int64_t>{0});
}

void TensorCoreBuilder::tmaCopy(Value map, ArrayRef<Value> coords, Value dst,
                                Value barrier) {
  Value mapPointer = pointerFromIndex(
      b, memref::ExtractAlignedPointerAsIndexOp::create(b, map),
      /*addressSpace=*/0);
  // The destination is in the cluster's shared window (address space 7); a
  // block without a cluster is a cluster of one.
  Value to = LLVM::AddrSpaceCastOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), 7), sharedPointer(dst));
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, to, mapPointer, coords, barrier, /*im2colOffsets=*/ValueRange{},
      /*multicastMask=*/nullptr, /*l2CacheHint=*/nullptr,
      NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
      b.getBoolAttr(false), /*group=*/nullptr, /*predicate=*/nullptr);
}

void TensorCoreBuilder::expectBytes(Value barrier, int64_t bytes) {
  expectBytes(barrier, i32c(bytes));
}

void TensorCoreBuilder::expectBytes(Value barrier, Value bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(b, Type(), barrier, bytes,
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false,
                                         /*predicate=*/nullptr);
}

void TensorCoreBuilder::waitPhase(Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, barrier, toI32(parity),
                                        i32c(1000000));
}

Value TensorCoreBuilder::descriptor(Value address, int64_t leadingBytes,
                                    int64_t strideBytes) {
  // Bits 0-13: address >> 4 (shared window offsets fit 18 bits); 16-29:
  // leading byte offset >> 4; 32-45: stride byte offset >> 4; 49-51: base
  // offset (0: tiles are 1024-byte aligned); 62-63: swizzle (1 = 128B).
  Type i64 = b.getI64Type();
  auto c = [&](uint64_t v) -> Value {
    return arith::ConstantOp::create(b, b.getIntegerAttr(i64, v));
  };
  Value start = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, address, c(4)), c(0x3FFF));
  uint64_t fixed = (uint64_t(leadingBytes >> 4) << 16) |
                   (uint64_t(strideBytes >> 4) << 32) | (uint64_t(1) << 62);
  return arith::OrIOp::create(b, start, c(fixed));
}

void TensorCoreBuilder::wgmmaBegin() { NVVM::WgmmaFenceAlignedOp::create(b); }

Value TensorCoreBuilder::wgmmaStep(Type accType, Value acc, Value a,
                                   Value bDesc, int64_t n, bool bKMajor,
                                   bool zero, Type operands) {
  if (!operands)
    operands = elem;
  NVVM::WGMMATypes t = operands.isF32()   ? NVVM::WGMMATypes::tf32
                       : operands.isF16() ? NVVM::WGMMATypes::f16
                                          : NVVM::WGMMATypes::bf16;
  return NVVM::WgmmaMmaAsyncOp::create(
      b, accType, acc, a, bDesc,
      NVVM::MMAShapeAttr::get(b.getContext(), 64, n, operands.isF32() ? 8 : 16),
      t, t, NVVM::WGMMATypes::f32,
      zero ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
      NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
      bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      /*satfinite=*/nullptr);
}

void TensorCoreBuilder::wgmmaEnd(int64_t pending) {
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  NVVM::WgmmaWaitGroupSyncOp::create(b, pending);
}

Value TensorCoreBuilder::wgmmaRegisterA(ArrayRef<Value> acc, ArrayRef<Value> a,
                                        Value bDesc, Value scaleD, int64_t n) {
  // Accumulators tied in and out ($0.. = f, inputs "0".."regs-1"), the A
  // registers, the B descriptor, the scale-d predicate's source.
  int64_t regs = n / 2;
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                    std::to_string(2 * regs + 5) + ", 0;\n";
  ptx += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
         "k16.f32." + (elem.isF16() ? "f16.f16" : "bf16.bf16") + " {";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i) {
    ptx += (i ? ", $" : "$") + std::to_string(i);
    constraints += (i ? ",=f" : "=f");
  }
  ptx += "}, {";
  for (int64_t i = 0; i < regs; ++i)
    constraints += "," + std::to_string(i);
  for (int64_t i = 0; i < 4; ++i) {
    ptx += (i ? ", $" : "$") + std::to_string(2 * regs + i);
    constraints += ",r";
  }
  ptx += "}, $" + std::to_string(2 * regs + 4) + ", p, 1, 1, 1;\n}\n";
  constraints += ",l,r";
  auto type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(regs, f32));
  SmallVector<Value> operands(acc);
  operands.append(a.begin(), a.end());
  operands.append({bDesc, scaleD});
  return LLVM::InlineAsmOp::create(
             b, type, operands, ptx, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/nullptr, /*operand_attrs=*/nullptr)
      .getResult(0);
}

/// `v` with element type `type`: a linalg.generic of arith.truncf or extf.
Value convertElements(OpBuilder &b, Location loc, Value v, Type type) {
  auto t = cast<RankedTensorType>(v.getType());
  bool narrow = type.getIntOrFloatBitWidth() < t.getElementTypeBitWidth();
  Value init =
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v), type);
  AffineMap id = b.getMultiDimIdentityMap(t.getRank());
  SmallVector<utils::IteratorType> parallel(t.getRank(),
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{v}, ValueRange{init},
             ArrayRef<AffineMap>{id, id}, parallel,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x =
                   narrow
                       ? Value(arith::TruncFOp::create(nb, nl, type, args[0]))
                       : Value(arith::ExtFOp::create(nb, nl, type, args[0]));
               linalg::YieldOp::create(nb, nl, x);
             })
      .getResult(0);
}

/// Erases the conversion `generic` and its init.
void eraseConversion(linalg::GenericOp generic) {
  Operation *init = generic.getDpsInits()[0].getDefiningOp();
  generic.erase();
  init->erase();
}

} // namespace mlir::mnemo::nvptx
