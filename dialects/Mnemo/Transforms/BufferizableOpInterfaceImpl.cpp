//===- BufferizableOpInterfaceImpl.cpp - mnemo ops on buffers ---*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mnemo.kv_cache_write` is a scatter: each new token lands in the page and
// row its position and block table name, padding tokens nowhere. Linalg
// cannot write through computed indices, and a loop of tensor inserts is
// sequential by nature (each insert yields the next pool), so the op
// bufferizes itself, in place into its pool, as a parallel loop over the
// tokens that stores each one's heads:
//
//   scf.forall (b, s) in (B, S)                    independent slots
//     p = positions[b, s]
//     if p >= 0:
//       page = block_table[b, p / P], row = p % P
//       for h: for d: pool[page, h, row, d] = round(new[b, h, s, d])
//       FP8: for h: scale = max(amax_d |new| / 448, 2^-126) stored at
//            scales[page, h, row]; then for h, d: each value as
//            E4M3(new / scales[page, h, row])
//
// The CPU runs the loop on its threads; a GPU target launches it as a
// kernel like any other parallel loop on buffers.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Transforms/BufferizableOpInterfaceImpl.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/Float8.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

struct KVCacheWriteOpInterface
    : BufferizableOpInterface::ExternalModel<KVCacheWriteOpInterface,
                                             KVCacheWriteOp> {
  /// The pools are written; every operand counts as read, the pools too:
  /// the rows no token writes keep their contents, so a pool that cannot be
  /// updated in place is copied before the loop writes into the copy.
  static bool isPool(KVCacheWriteOp op, OpOperand &operand) {
    return &operand == &op.getPoolMutable() ||
           (op.getScales() && &operand == &op.getScalesMutable()[0]);
  }

  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return isPool(cast<KVCacheWriteOp>(op), operand);
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto write = cast<KVCacheWriteOp>(op);
    if (&operand == &write.getPoolMutable())
      return {{write.getResult(), BufferRelation::Equivalent}};
    if (write.getScales() && &operand == &write.getScalesMutable()[0])
      return {{write.getResultScales(), BufferRelation::Equivalent}};
    return {};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto write = cast<KVCacheWriteOp>(op);
    auto buffer = [&](Value v) -> FailureOr<Value> {
      return getBuffer(rewriter, v, options, state);
    };
    FailureOr<Value> x = buffer(write.getNewValues()),
                     pool = buffer(write.getPool()),
                     positions = buffer(write.getPositions()),
                     table = buffer(write.getBlockTable());
    if (failed(x) || failed(pool) || failed(positions) || failed(table))
      return failure();
    Value scales;
    if (write.getScales()) {
      FailureOr<Value> s = buffer(write.getScales());
      if (failed(s))
        return failure();
      scales = *s;
    }

    Location loc = write.getLoc();
    rewriter.setInsertionPoint(write);
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
    };
    RankedTensorType poolType = write.getPool().getType();
    int64_t heads = poolType.getDimSize(1), dim = poolType.getDimSize(3);
    Type stored = poolType.getElementType();
    Value page = c(write.getPageSize());
    SmallVector<OpFoldResult> ubs = {
        memref::DimOp::create(rewriter, loc, *x, 0).getResult(),
        memref::DimOp::create(rewriter, loc, *x, 2).getResult()};
    auto forall = scf::ForallOp::create(rewriter, loc, ubs, ValueRange{},
                                        std::nullopt);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getBody()->getTerminator());
    Value bi = forall.getInductionVar(0), si = forall.getInductionVar(1);
    Value p = memref::LoadOp::create(rewriter, loc, *positions,
                                     ValueRange{bi, si});
    Value valid = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sge, p,
        arith::ConstantIntOp::create(rewriter, loc, p.getType(), 0));
    auto ifOp = scf::IfOp::create(rewriter, loc, valid, /*else=*/false);
    rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value pos = arith::IndexCastOp::create(rewriter, loc,
                                           rewriter.getIndexType(), p);
    Value logical = arith::DivUIOp::create(rewriter, loc, pos, page);
    Value row = arith::RemUIOp::create(rewriter, loc, pos, page);
    Value pageIndex = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(),
        memref::LoadOp::create(rewriter, loc, *table,
                               ValueRange{bi, logical}));
    Type f32 = rewriter.getF32Type();
    auto load = [&](OpBuilder &b, Location l, Value h, Value d) {
      return memref::LoadOp::create(b, l, *x, ValueRange{bi, h, si, d})
          .getResult();
    };
    // FP8: first each head's scale from its largest magnitude, a parallel
    // loop over the heads.
    if (scales)
      scf::ParallelOp::create(
          rewriter, loc, ValueRange{c(0)}, ValueRange{c(heads)},
          ValueRange{c(1)}, [&](OpBuilder &b, Location l, ValueRange hs) {
            Value h = hs[0];
            auto amax = scf::ForOp::create(
                b, l, c(0), c(dim), c(1),
                ValueRange{floatConst(b, l, f32, 0.0)},
                [&](OpBuilder &nb, Location nl, Value d, ValueRange acc) {
                  Value v = castFloat(nb, nl, load(nb, nl, h, d), f32);
                  Value m = arith::MaximumFOp::create(
                      nb, nl, math::AbsFOp::create(nb, nl, v), acc[0]);
                  scf::YieldOp::create(nb, nl, m);
                });
            Value scale = arith::MaximumFOp::create(
                b, l,
                arith::DivFOp::create(b, l, amax.getResult(0),
                                      floatConst(b, l, f32, 448.0)),
                floatConst(b, l, f32, 0x1p-126));
            memref::StoreOp::create(b, l, scale, scales,
                                    ValueRange{pageIndex, h, row});
          });
    // Every value rounded to the pool (FP8: divided by its head's scale,
    // read back), a parallel loop over the heads and values: on the GPU the
    // token's block spreads it over its threads.
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{c(0), c(0)}, ValueRange{c(heads), c(dim)},
        ValueRange{c(1), c(1)}, [&](OpBuilder &b, Location l, ValueRange hd) {
          Value v = load(b, l, hd[0], hd[1]);
          if (scales) {
            Value scale = memref::LoadOp::create(
                b, l, scales, ValueRange{pageIndex, hd[0], row});
            v = encodeE4M3(
                b, l,
                arith::DivFOp::create(b, l, castFloat(b, l, v, f32), scale));
          } else {
            v = castFloat(b, l, v, stored);
          }
          memref::StoreOp::create(b, l, v, *pool,
                                  ValueRange{pageIndex, hd[0], row, hd[1]});
        });
    SmallVector<Value> results = {*pool};
    if (scales)
      results.push_back(scales);
    replaceOpWithBufferizedValues(rewriter, write, results);
    return success();
  }
};

} // namespace

void mlir::mnemo::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MnemoDialect *) {
    KVCacheWriteOp::attachInterface<KVCacheWriteOpInterface>(*ctx);
  });
}
