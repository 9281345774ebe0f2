//===- CompilePipelines.cpp - mnemoc's target-independent stages -*- C++ -*-=//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/Transforms/Passes.h"
#include "mnemo/Conversion/Passes.h"
#include "mnemo/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mnemo::buildFusionPipeline(OpPassManager &pm, bool keepWeightLayout,
                                bool f32OutIn) {
  // Rope fuses into the attention tile loads later (mnemo-tile-attention);
  // here the graph is simplified, each MLA op gets its form (expanded for
  // prefill, absorbed for decode), matrix products become mnemo.linear and
  // constant weights are laid out for the generated loops.
  // Function by function, on the context's threads.
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(createCanonicalizerPass());
  funcs.addPass(createCSEPass());
  funcs.addPass(mnemo::createFoldShapeReshapesPass());
  funcs.addPass(mnemo::createRaiseContractionsPass());
  pm.addPass(mnemo::createSelectMLAFormPass());
  // Weights read in place from a checkpoint keep its [out, in] layout.
  mnemo::TransposeConstantWeightsPassOptions layout;
  layout.toInOut = !keepWeightLayout;
  layout.f32OutIn = f32OutIn;
  if (layout.toInOut || layout.f32OutIn)
    pm.addPass(mnemo::createTransposeConstantWeightsPass(layout));
}

void mnemo::buildTilingPipeline(OpPassManager &pm,
                                const TilingOptions &options) {
  // Canonicalization and CSE run function by function (forward, prefill
  // and decode on the context's threads): the same result, a quarter of
  // this stage's time saved on two cores.
  // MLA becomes mnemo.attention (plus projections) that is tiled below.
  mnemo::DecomposeMLAPassOptions mla;
  mla.form = options.mlaForm;
  pm.addPass(mnemo::createDecomposeMLAPass(mla));
  // DeepSeek-V4's attention over raw keys and entries: masked
  // mnemo.attention ops (on CPUs, a prefill's by chunks of queries).
  mnemo::DecomposeCompressedAttentionPassOptions compressed;
  compressed.queryChunk = options.compressedQueryChunk;
  compressed.selectedGroup = options.compressedSelectedGroup;
  pm.addPass(mnemo::createDecomposeCompressedAttentionPass(compressed));
  // A prefill's lightning indexer and its top-k by chunks of queries (after
  // the decomposition above, which reads the top-k's listings as distinct).
  mnemo::ChunkIndexerTopKPassOptions indexerChunks;
  indexerChunks.headRows = options.indexerHeadRows;
  pm.addPass(mnemo::createChunkIndexerTopKPass(indexerChunks));
  // A prefill's experts expert by expert, their products mnemo.linear ops
  // for the kernels selected below.
  if (options.groupExperts) {
    mnemo::GroupExpertsPassOptions group;
    group.groupRows = options.expertBlockRows;
    group.roundRows = options.expertBlockRows > 0;
    pm.addPass(mnemo::createGroupExpertsPass(group));
  }
  // Sizes fixed by --input-shape reach the mnemo ops, for kernels that
  // need static shapes.
  pm.addPass(mnemo::createRefineShapesPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Sizes the canonicalization just made static (a reshape's extents read
  // from a refined op) reach the mnemo ops after it.
  pm.addPass(mnemo::createRefineShapesPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Reshapes to computed shapes whose source the refinement made static
  // behind a tensor.cast (a step of one token) fold now.
  pm.addNestedPass<func::FuncOp>(mnemo::createFoldShapeReshapesPass());
  // Transposes the refinement left moving only unit dims (a decode step's
  // heads) become views.
  pm.addNestedPass<func::FuncOp>(mnemo::createFoldUnitTransposesPass());
  // A decoder's past read from its pages: by a paged attention where the
  // target has one, else as a generic (the concat below).
  mnemo::AttendOverPagesPassOptions pages;
  pages.pagedAttention = options.attendOverPages;
  pm.addPass(mnemo::createAttendOverPagesPass(pages));
  // A contiguous past built from a paged cache and concatenated with the
  // new tokens is computed where the attention loads it.
  pm.addPass(mnemo::createGenerateConcatsPass());
  if (options.selectKernels)
    options.selectKernels(pm);
  // A paged attention no kernel took becomes a gather of its pages and a
  // mnemo.attention, tiled below.
  pm.addPass(mnemo::createDecomposePagedCachePass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  if (options.tileAttention) {
    mnemo::TileAttentionPassOptions tile;
    tile.blockQ = options.blockQ;
    tile.blockKV = options.blockKV;
    tile.groupInBlock = options.groupInBlock;
    tile.transposeKeys = options.transposeKeys;
    tile.foldTransposes = options.foldTransposes;
    tile.maskEdgesOnly = options.maskEdgesOnly;
    pm.addNestedPass<func::FuncOp>(mnemo::createTileAttentionPass(tile));
    if (options.selectTileKernels)
      options.selectTileKernels(pm);
  }
  if (options.tileLinear)
    pm.addNestedPass<func::FuncOp>(mnemo::createTileLinearPass());
  mnemo::ConvertMnemoToLinalgPassOptions lowering;
  lowering.ropeTables = options.ropeTables;
  lowering.topKRowScratch = options.topKRowScratch;
  lowering.expertsAlongOutputs = options.expertsAlongOutputs;
  pm.addPass(mnemo::createConvertMnemoToLinalgPass(lowering));
  // CSE also shares the rope tables of one set of positions.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
}
