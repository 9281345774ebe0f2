//===- TensorCoreBuilder.h - warp-level MMA building blocks -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The pieces the tensor-core kernels (attention, linear) share: swizzled
// 16-bit tiles in dynamic shared memory, cp.async staging, ldmatrix and
// mma.sync m16n8k16 fragments, wgmma shared-memory descriptors, TMA copies
// and their mbarriers. The fragment layouts are those of the PTX ISA
// ("Matrix fragments for mma.m16n8k16", "wgmma register fragments").
// Also the element conversions that narrow a kernel's f32 operands.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_LIB_TARGET_NVPTX_TENSORCOREBUILDER_H
#define MNEMO_LIB_TARGET_NVPTX_TENSORCOREBUILDER_H

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::mnemo::nvptx {

Value indexConstant(ImplicitLocOpBuilder &b, int64_t v);
Value f32Constant(ImplicitLocOpBuilder &b, double v);
/// 2^x with PTX's ex2.approx.ftz (the softmax's exponential, SiLU's).
Value exp2Approx(ImplicitLocOpBuilder &b, Value x);
/// The LLVM pointer in `addressSpace` of an address held as an index.
Value pointerFromIndex(ImplicitLocOpBuilder &b, Value address,
                       unsigned addressSpace);

/// `tensor` as a read-only buffer of identity layout, for a kernel launch
/// (null for null).
Value readOnlyBuffer(ImplicitLocOpBuilder &b, Value tensor);
/// The launch's dynamic shared memory (1024-byte aligned: mnemo-gpu-extern-
/// dynamic-shared) as a 1-D workgroup memref of `elements` `elem`.
Value dynamicSharedView(ImplicitLocOpBuilder &b, int64_t elements, Type elem);
/// A gpu.launch of the kernel `name`: a grid of `grid` blocks of `threads`
/// threads with `sharedBytes` of dynamic shared memory (none for 0); its
/// body holds the terminator only.
gpu::LaunchOp createKernelLaunch(ImplicitLocOpBuilder &b, StringRef name,
                                 std::array<int64_t, 3> grid,
                                 int64_t threads, int64_t sharedBytes);

/// How the kernels take f32 operands (the passes' `f32-precision`): on the
/// CUDA cores (the generic path), or on the tensor cores as TF32, one
/// product or three (3xTF32, about f32's accuracy).
enum class F32Precision { cudaCores, tf32, tf32x3 };
/// `name` (f32, tf32 or 3xtf32) as an F32Precision, if it is one.
std::optional<F32Precision> parseF32Precision(StringRef name);

/// The one 16-bit type of the weights of `func`'s linear layers (a bf16 or
/// f16 artifact, whose f32 attention and indexer operands the kernels round
/// to it), or null when they have none or several.
Type sixteenBitWeightType(func::FuncOp func);
/// A TMA tensor map of `buffer` (an identity-layout memref of `elem`) with
/// boxes of `box` (memref order, innermost 64 elements: 128 bytes) and the
/// 128B swizzle (or `swizzle`: 0, 32, 64 or 128 bytes, the box's row no
/// wider), rows past the tensor read as zeros: created on the host
/// (`nvgpu.tma.create.descriptor`, a `tensormap` buffer of the launch
/// plan), taken by the kernel as a memref<128xi8>.
Value createTensorMap(ImplicitLocOpBuilder &b, Value buffer,
                      ArrayRef<int64_t> box, Type elem, int64_t swizzle = 128);

/// A tile of `rows` x `width` 16-bit elements in shared memory from element
/// `base` (plus `shift` elements when set: the stage of a multi-buffered
/// tile). Widths that are multiples of 64 are stored as 64-column panels
/// of 128-byte rows whose 16-byte chunks are XOR-swizzled with the row (the
/// 128B swizzle of wgmma and TMA, which also keeps ldmatrix free of bank
/// conflicts); other widths are plain rows.
struct SharedTile {
  int64_t base, rows, width;
  Value shift = nullptr;

  int64_t panelWidth() const { return width % 64 ? width : 64; }
  bool swizzled() const { return width % 64 == 0; }
  /// Bytes from one panel to the next.
  int64_t panelBytes() const { return rows * 128; }
};

/// An A (16x16) or B (16x8, two registers) MMA fragment: packed 16-bit
/// pairs in the MMA's register form.
using Fragment = SmallVector<Value, 4>;
/// Accumulator of one m16n8 block: c0, c1 (row g), c2, c3 (row g + 8).
using Accumulator = SmallVector<Value, 4>;

/// Emits the shared pieces for 16-bit elements `elem` (bf16 or f16) over
/// the block's tiles in shared memory (`tiles`, a 1-D workgroup memref of
/// `elem`, set by the kernel).
class TensorCoreBuilder {
public:
  TensorCoreBuilder(ImplicitLocOpBuilder &b, Type elem);

protected:
  Value idx(int64_t v) { return indexConstant(b, v); }
  Value cf(double v) { return f32Constant(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, x, idx(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, x, idx(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, x, idx(y)); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  }
  Value ge(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::sge, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  /// Emits `body` under `scf.if cond` (no results); the builder continues
  /// after the scf.if.
  void ifThen(Value cond, function_ref<void()> body);

  /// The element offset in shared memory of (row, col) of `r`; `col` is a
  /// multiple of 8.
  Value offset(const SharedTile &r, Value row, Value col);
  /// Starts a 16-byte cp.async from `memref[rowIndices..., srcCol]` to
  /// (row, col) of `r`: 8 elements of a 16-bit `memref`, or 4 of an f32
  /// one (into `wideTiles`, the f32 view of the tiles; `col` counts 16-bit
  /// units); when `valid` is false it copies 0 bytes (zero fill) from a
  /// row of index 0. Returns its token.
  Value asyncCopy(const SharedTile &r, Value row, Value col, Value memref,
                  ArrayRef<Value> rowIndices, Value srcCol, Value valid);
  /// Commits the copies of `tokens` as one cp.async group.
  void commit(ArrayRef<Value> tokens);
  /// Orders the thread's shared-memory accesses through the generic proxy
  /// (stores, cp.async) before later ones of the async proxy (wgmma reads,
  /// TMA writes): fence.proxy.async.shared::cta.
  void fenceAsyncShared();
  /// Waits until at most `pending` of the committed copy groups (the
  /// newest) are in flight; with `asyncProxy` fences the landed copies for
  /// the async proxy (wgmma reads); then waits for the block.
  void waitAll(bool asyncProxy = false, int64_t pending = 0);

  /// ldmatrix.x4 (optionally .trans) at (row, col) of `r` for this lane;
  /// the four registers in `reg` form.
  Fragment ldmatrix(const SharedTile &r, Value row, Value col, bool transpose);
  /// D = A B + C with mma.sync.m16n8k16 (f32 accumulators), A and B of
  /// `type` (null: elem; f16 pairs as vector<2xf16>, bf16 pairs as i32).
  /// With f32 `type` the operands are TF32 values (A: 4, B: 2 i32
  /// registers) and the shape m16n8k8: an f32 tile read with ldmatrix as
  /// pairs of 16-bit units gives these fragments as they are, each 32-bit
  /// register holding the element the TF32 layout places there.
  Accumulator mma(ArrayRef<Value> a, ArrayRef<Value> bFrag, ArrayRef<Value> c,
                  Type type = {});
  /// An f32 held as i32 as the sum of two TF32 values (i32), the larger
  /// rounded to nearest (ties away) and the rest rounded likewise: 3xTF32
  /// multiplies hi hi + hi lo + lo hi, within about 2^-21 of f32's product.
  /// Without `withRest`, the rounded value only (lo null).
  std::pair<Value, Value> splitTf32(Value bits, bool withRest = true);
  /// Each register of `f` (f32 bits) split by splitTf32 into `hi` and,
  /// with `withRest`, `lo`.
  void splitFragment(ArrayRef<Value> f, Fragment &hi, Fragment &lo,
                     bool withRest);
  /// c + A B over TF32 m16n8k8 from split fragments: with rests (3xTF32)
  /// the small products lo hi and hi lo first, then hi hi; an operand
  /// without a rest (empty: B of TF32 values, as decoded weight codes)
  /// drops its product.
  Accumulator mmaSplit(ArrayRef<Value> aHi, ArrayRef<Value> aLo,
                       ArrayRef<Value> bHi, ArrayRef<Value> bLo, Accumulator c);
  /// Two f32 values rounded to a 16-bit pair of `type` (null: elem) in
  /// its register form.
  Value pack(Value lo, Value hi, Type type = {});
  /// A 16-bit pair (vector<2xf16> or vector<2xbf16>) in its register
  /// form.
  Value toReg(Value pair);
  /// TMA: copies the box of `map` (a memref<128xi8>) at `coords` (i32,
  /// innermost first) to byte `dst` (an index) of shared memory,
  /// completing on the mbarrier at `barrier` (an LLVM shared pointer).
  void tmaCopy(Value map, ArrayRef<Value> coords, Value dst, Value barrier);
  /// The calling thread arrives on `barrier`, expecting `bytes` more.
  void expectBytes(Value barrier, int64_t bytes);
  void expectBytes(Value barrier, Value bytes); // an i32
  /// Waits for phase `parity` (an index) of `barrier`.
  void waitPhase(Value barrier, Value parity);
  Value i32c(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
  Value toI32(Value index) { return arith::IndexCastOp::create(b, i32, index); }
  /// The LLVM shared-memory pointer of a byte address held as an index.
  Value sharedPointer(Value address) {
    return pointerFromIndex(b, address, /*addressSpace=*/3);
  }

  /// The wgmma shared-memory descriptor of the 128B-swizzled tile at byte
  /// `address` (an i64 in the shared window): start address, leading and
  /// stride byte offsets, swizzle.
  Value descriptor(Value address, int64_t leadingBytes, int64_t strideBytes);

  /// wgmma (sm_90a), one warpgroup's m64nNk16 steps, f32 accumulators:
  /// begin() fences the registers; each step multiplies A and B read
  /// through shared-memory descriptors (A K-major; B K-major when
  /// `bKMajor`, else MN-major) into the accumulator struct `acc` (of type
  /// `accType`), adding to it unless `zero`; end() commits the group and
  /// waits until at most `pending` groups are in flight.
  void wgmmaBegin();
  /// With f32 `operands` (null: elem) the step is m64nNk8 of TF32, both
  /// tiles K-major: 32 bytes of K, as a 16-bit step.
  Value wgmmaStep(Type accType, Value acc, Value a, Value bDesc, int64_t n,
                  bool bKMajor, bool zero = false, Type operands = {});
  void wgmmaEnd(int64_t pending);
  /// One m64nNk16 step with A in registers (`a`: the 4 registers of the
  /// thread's A fragment) and B MN-major through `bDesc`, adding to the
  /// accumulators `acc` (N / 2 f32 values) when `scaleD` (i32) is non-zero;
  /// returns the accumulator struct. Upstream NVVM has no wgmma with A in
  /// registers: this is the target's one inline-PTX builder.
  Value wgmmaRegisterA(ArrayRef<Value> acc, ArrayRef<Value> a, Value bDesc,
                       Value scaleD, int64_t n);

  ImplicitLocOpBuilder &b;
  Type elem, f32, i32;
  /// mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as i32.
  Type reg;
  Value tiles;
  /// The tiles as f32 (the same shared memory), for copies of f32 rows.
  Value wideTiles;
};

/// `v` with element type `type`: a linalg.generic of arith.truncf or extf.
Value convertElements(OpBuilder &b, Location loc, Value v, Type type);

/// Erases the conversion `generic` and its init.
void eraseConversion(linalg::GenericOp generic);

} // namespace mlir::mnemo::nvptx

#endif // MNEMO_LIB_TARGET_NVPTX_TENSORCOREBUILDER_H
