//===- FuseIndexProducers.cpp - values of indices where read ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-gpu-fuse-index-producers: a linalg.generic that reads nothing and
// makes each element from its indices alone (a forward's positions, the
// sequence's arange that its rotary embeddings read) would be a kernel of
// one thread an element on the GPU, storing what its readers then load.
// Fused into each elementwise generic that reads it, it is a few integer
// ops on the reader's own loop indices, and once nothing reads it, it is
// gone. The fusion is upstream's (linalg::fuseElementwiseOps), which
// composes the producer's linalg.index ops with the reader's indexing map.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_FUSEINDEXPRODUCERSPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// Body ops (besides the yield) a producer may have: recomputed by every
/// element of every reader, so only a few cheap ones.
constexpr int64_t kMaxBodyOps = 4;

/// Whether `op` makes its one result from its indices alone, cheaply.
bool isIndexProducer(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 0 ||
      op.getNumResults() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  Block *body = op.getBody();
  // The body does not read the output's value.
  if (!body->getArguments().back().use_empty())
    return false;
  int64_t count = 0;
  for (Operation &inner : body->without_terminator()) {
    if (!isPure(&inner) || inner.getNumRegions() || ++count > kMaxBodyOps)
      return false;
  }
  return true;
}

struct FuseIndexProducersPass final
    : mnemo::impl::FuseIndexProducersPassBase<FuseIndexProducersPass> {
  /// A read of an index producer by a generic it can fuse into, other
  /// than those in `refused`.
  OpOperand *nextRead(const DenseSet<OpOperand *> &refused) {
    OpOperand *found = nullptr;
    getOperation().walk([&](linalg::GenericOp producer) {
      if (!isIndexProducer(producer))
        return WalkResult::advance();
      for (OpOperand &use : producer->getResult(0).getUses())
        if (isa<linalg::GenericOp>(use.getOwner()) && !refused.count(&use) &&
            linalg::areElementwiseOpsFusable(&use)) {
          found = &use;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return found;
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    DenseSet<OpOperand *> refused;
    // One read at a time: each fusion replaces its reader by a new generic.
    while (OpOperand *read = nextRead(refused)) {
      // The reader's own copy of the producer, so that the fusion keeps
      // none of the producer's results for other readers.
      auto producer = cast<linalg::GenericOp>(read->get().getDefiningOp());
      Operation *reader = read->getOwner();
      rewriter.setInsertionPoint(reader);
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(reader, [&] { read->set(copy->getResult(0)); });
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, read);
      if (failed(fused)) {
        rewriter.modifyOpInPlace(reader,
                                 [&] { read->set(producer->getResult(0)); });
        rewriter.eraseOp(copy);
        refused.insert(read);
        continue;
      }
      for (OpResult result : reader->getResults())
        rewriter.replaceAllUsesWith(result, fused->replacements.at(result));
      rewriter.eraseOp(reader);
      rewriter.eraseOp(copy);
    }
    // Producers nothing reads any more.
    getOperation().walk([&](linalg::GenericOp op) {
      if (isIndexProducer(op) && op->use_empty())
        rewriter.eraseOp(op);
    });
  }
};

} // namespace
