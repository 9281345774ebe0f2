//===- BufferReadsAtLaunch.cpp - reads where kernels run --------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo-gpu-buffer-reads-at-launch: the kernel passes (attention, linear,
// indexer, top-k) read tensors through `bufferization.to_buffer` placed
// just before each gpu.launch, and One-Shot Bufferize takes that op as the
// point where the tensor is read. The op is Pure, so CSE merges two
// kernels' reads of one tensor into the first: the second kernel then
// reads the first one's buffer, and bufferization, which sees no later
// use, may reuse that buffer in place before the second kernel runs.
// (DeepSeek-V4's query latent, read by its attention's and its indexer's
// projections with an rms_norm writing in place between them, gave logits
// off by 0.36 with both projections on the tensor cores.)
//
// This pass gives every launch its own to_buffer of each tensor it reads,
// with the views (subviews, reshapes, casts) the launch uses, cloned right
// before it. What nothing uses any more is erased.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Target/NVPTX/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::mnemo {
#define GEN_PASS_DEF_BUFFERREADSATLAUNCHPASS
#include "mnemo/Target/NVPTX/Passes.h.inc"
} // namespace mlir::mnemo

using namespace mlir;

namespace {

/// The ops from a read-only to_buffer to `value` through views, the
/// to_buffer first; empty when `value` is no such view. (A to_buffer that
/// may be written is a write where it stands: it keeps its place.)
SmallVector<Operation *> chainOf(Value value) {
  SmallVector<Operation *> chain;
  while (Operation *def = value.getDefiningOp()) {
    chain.push_back(def);
    if (auto read = dyn_cast<bufferization::ToBufferOp>(def)) {
      if (!read.getReadOnly())
        return {};
      return {chain.rbegin(), chain.rend()};
    }
    // (memref.cast is a view too.)
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return {};
}

struct BufferReadsAtLaunchPass final
    : mnemo::impl::BufferReadsAtLaunchPassBase<BufferReadsAtLaunchPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    SetVector<Operation *> replaced;
    for (gpu::LaunchOp launch : launches) {
      SetVector<Value> captured;
      getUsedValuesDefinedAbove(launch.getBody(), captured);
      OpBuilder b(launch);
      for (Value value : captured) {
        if (!isa<MemRefType>(value.getType()))
          continue;
        SmallVector<Operation *> chain = chainOf(value);
        if (chain.empty())
          continue;
        IRMapping map;
        // A view's other operands (a subview's dynamic offsets, a view's
        // shift) are defined before it, so before the launch too.
        for (Operation *op : chain)
          b.clone(*op, map);
        Value local = map.lookup(value);
        replaceAllUsesInRegionWith(value, local, launch.getBody());
        replaced.insert(chain.begin(), chain.end());
      }
    }
    // The originals nothing reads any more, the last view first.
    for (Operation *op : llvm::reverse(replaced))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace
