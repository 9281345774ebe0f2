//===- LinalgBuilders.h - helpers for mnemo lowerings -----------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Small builders shared by the mnemo lowerings (the reference decomposition
// and the tiling passes): empty and filled tensors with dynamic sizes,
// elementwise casts to the compute type, and projection indexing maps.
//
//===----------------------------------------------------------------------===//

#ifndef MNEMO_DIALECT_UTILS_LINALGBUILDERS_H
#define MNEMO_DIALECT_UTILS_LINALGBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::mnemo::builders {

/// The type the reference computes in: f32, or f64 for f64 tensors.
FloatType computeType(Type elementType);

/// Converts a float scalar to `type` (extf/truncf, or nothing).
Value castFloat(OpBuilder &b, Location loc, Value v, Type type);

/// Yields `acc + x * y` from a contraction's body, x and y converted to
/// `type` (the accumulator's) first.
void yieldMultiplyAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc,
                      Type type);

/// A float constant of `type`.
Value floatConst(OpBuilder &b, Location loc, Type type, double value);

/// `tensor.empty` of the given sizes.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType);

/// A [B, Hq, S] tensor initialized per head from the sink logits [Hq]
/// (or filled with `fallback` without a sink). With `rowMax` [B, Hq, S],
/// it holds exp(sink - rowMax): the sink's term of a softmax denominator.
Value sinkRowInit(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> rowSizes,
                  Value sink, FloatType ct, double fallback, Value rowMax);

/// A tensor of the given sizes filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type elementType, double value);

/// `value` as `type`, through a tensor.cast when the static information
/// differs (the op's result may know more, or less, than its operands).
Value castToType(OpBuilder &b, Location loc, Value value, Type type);

/// The generic computing `v` element by element from its indices alone:
/// no inputs, an empty init it does not read, every dim parallel, an
/// identity map and the indices used only in its body's top level (a
/// gather of a paged cache, say); null when `v` is not one.
linalg::GenericOp indexGenerated(Value v);

/// `concat(first, second)` along one dim as the importers write it:
/// `first` inserted at zero offsets into a tensor.empty, then `second` at
/// offset `split` along `axis` (zero elsewhere), unit strides, one rank.
struct TwoPartConcat {
  Value first, second;
  int64_t axis;
  OpFoldResult split;
};
/// `v` before any tensor.casts (which only change its static sizes).
Value throughCasts(Value v);

/// The concat `v` is, or nothing.
std::optional<TwoPartConcat> matchTwoPartConcat(Value v);

/// Sizes of a ranked tensor value, static where known.
SmallVector<OpFoldResult> tensorSizes(OpBuilder &b, Location loc, Value t);

/// Map (d0..dn-1) → (d[dims[0]], d[dims[1]], ...).
AffineMap projection(MLIRContext *ctx, unsigned numDims,
                     ArrayRef<unsigned> dims);

/// Map from the `numDims` loops of an op whose trailing loops are `target`'s
/// dimensions to an operand broadcast to them with numpy rules (aligned on the
/// right; extents of 1 read element 0).
AffineMap broadcastMap(MLIRContext *ctx, unsigned numDims,
                       RankedTensorType operand);

/// `v` with elements of `elementType`: an elementwise castFloat, or `v`
/// itself when its elements already are.
Value castElements(OpBuilder &b, Location loc, Value v, Type elementType);

/// An index read from a tensor (any integer type) as an `index` clamped to 0
/// when outside [0, bound), so that a read through it is safe, and whether
/// it was inside.
std::pair<Value, Value> clampedIndex(OpBuilder &b, Location loc, Value raw,
                                     Value bound);

/// `w` [E, R, C] with each expert's matrix transposed ([E, C, R]), when it
/// is a dense constant of byte-sized elements; else null.
Value transposedExperts(OpBuilder &b, Location loc, Value w);

/// An index constant.
Value indexConst(OpBuilder &b, Location loc, int64_t value);

/// A linalg.generic into `init` reading `inputs` through `maps` (the
/// inputs' maps, then init's; the loops are their dims, `reductions` among
/// them), yielding `body`'s value.
Value yieldingGeneric(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<AffineMap> maps,
    Value init, ArrayRef<unsigned> reductions,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// A 1-D tensor of `size` elements of the integer or index `type`, all
/// `value`.
Value filledIntegers(OpBuilder &b, Location loc, OpFoldResult size, Type type,
                     int64_t value);

/// Iterator types: all parallel, except the listed reduction loops.
SmallVector<utils::IteratorType>
iterators(unsigned numDims, ArrayRef<unsigned> reductions = {});

} // namespace mlir::mnemo::builders

#endif // MNEMO_DIALECT_UTILS_LINALGBUILDERS_H
