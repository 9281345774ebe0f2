//===- DeepSeekV4Attention.cpp - DeepSeek-V4 attention and memory -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A V4 layer's attention (docs/DeepSeekV4.md): low-rank queries with an
// unweighted per-head RMSNorm; one key head that is also the value; a
// sliding window over the raw tokens, and in compressed layers the entries
// of closed windows (HCA: all visible ones; CSA: those the lightning
// indexer selects) after the raw keys, under one softmax with a per-head
// sink; the output rotated back at the query's position, then the grouped
// low-rank projection.
//
// V4 rotates the *trailing* rope channels of each head, interleaved.
// mnemo.rope rotates leading ones, so the importer permutes the channels:
// every weight row (or column) that produces or reads a head's channels
// has the trailing ropeDim moved in front, for queries, keys, entries and
// the output projection alike. Dot products and the attention's output
// (which the permuted wo_a reads) are unchanged.
//
// The reference decomposition here is the concat-plus-mask form: the keys
// are [raw tokens, entries] and an additive mask says what each query
// sees. The compressor's gated pool is three linalg reductions over the
// window's slots.
//
//===----------------------------------------------------------------------===//

#include "DeepSeekV4.h"

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "dialects/Mnemo/Utils/PagedCache.h"
#include "mnemo/Frontend/GenerationStep.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::mnemo;

using IT = utils::IteratorType;

std::optional<DeepSeekV4Builder::Compressor>
DeepSeekV4Builder::loadCompressor(const std::string &prefix, int64_t rate,
                                  int64_t dim, bool overlapping) {
  Compressor c;
  c.rate = rate;
  c.dim = dim;
  c.overlapping = overlapping;
  c.width = overlapping ? 2 * dim : dim;
  c.slots = overlapping ? 2 * rate : rate;
  int64_t hidden = config.hiddenSize;
  RowBlocks rows = ropeFirstRows(overlapping ? 2 : 1, dim);
  c.wkv = rowsOf(prefix + "wkv.weight", c.width, hidden, rows,
                 {c.width, hidden}, /*isMatrix=*/true);
  c.wgate = rowsOf(prefix + "wgate.weight", c.width, hidden, rows,
                   {c.width, hidden}, /*isMatrix=*/true);
  c.norm = rowsOf(prefix + "norm.weight", dim, 1, ropeFirstRows(1, dim),
                  {dim});
  std::optional<std::vector<float>> ape =
      weightData(prefix + "ape", {rate, c.width});
  if (failed() || !ape)
    return std::nullopt;
  // The position bias per slot j of an entry and channel c: slot j < rate
  // of an overlapping entry reads the previous window's first half (Ca),
  // the others this window's second half (Cb).
  std::vector<float> bias(c.slots * dim);
  for (int64_t j = 0; j < c.slots; ++j)
    for (int64_t k = 0; k < dim; ++k) {
      int64_t half = overlapping && j >= rate ? 1 : 0;
      bias[j * dim + k] = (*ape)[(j % rate) * c.width + rows[half * dim + k]];
    }
  c.bias = constant({c.slots, dim}, bias);
  return c;
}

Value DeepSeekV4Builder::compressorRows(Value x, const Compressor &c) {
  Value kv = linear(x, c.wkv, Value(), c.width);
  Value gate = linear(x, c.wgate, Value(), c.width);
  Value rows = empty(act({2 * c.width}), {batch, seq});
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  SmallVector<Value> parts = {kv, gate};
  for (auto [k, part] : llvm::enumerate(parts))
    rows = tensor::InsertSliceOp::create(
        b, part, rows,
        SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                  b.getIndexAttr(k * c.width)},
        SmallVector<OpFoldResult>{batch, seq, b.getIndexAttr(c.width)},
        strides);
  return rows;
}

Value DeepSeekV4Builder::poolEntries(const Compressor &c, Value kv,
                                     Value gate, Value entries,
                                     Value ropePositions) {
  auto poolType = RankedTensorType::get({kDyn, kDyn, c.dim}, f32);
  Value pooled = GatedPoolOp::create(
      b, poolType, kv, gate, c.bias, entries, b.getI64IntegerAttr(c.rate),
      c.overlapping ? b.getUnitAttr() : UnitAttr());
  pooled = RmsNormOp::create(b, poolType, pooled, c.norm,
                             llvm::APFloat(config.rmsNormEps));
  Value rows = tensor::DimOp::create(b, entries, 1);
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}};
  auto headType = RankedTensorType::get({kDyn, 1, kDyn, c.dim}, f32);
  Value heads = tensor::ExpandShapeOp::create(
      b, headType, pooled, groups,
      SmallVector<OpFoldResult>{batch, b.getIndexAttr(1), rows,
                                b.getIndexAttr(c.dim)});
  heads = ropeAt(heads, ropePositions, /*compressed=*/true);
  return tensor::CollapseShapeOp::create(b, poolType, heads, groups);
}

Value DeepSeekV4Builder::compress(Value x, const std::string &prefix,
                                  int64_t rate, int64_t dim,
                                  bool overlapping) {
  std::optional<Compressor> c = loadCompressor(prefix, rate, dim, overlapping);
  if (!c)
    return {};
  Value kv = linear(x, c->wkv, Value(), c->width);
  Value gate = linear(x, c->wgate, Value(), c->width);
  // One entry per closed window, entry n rotated at n * rate.
  Value count = arith::DivUIOp::create(
      b, seq, arith::ConstantIndexOp::create(b, rate));
  auto indexOf = [&](OpBuilder &nb, Location l, int64_t dim) {
    return arith::IndexCastOp::create(nb, l, nb.getI64Type(),
                                      linalg::IndexOp::create(nb, l, dim));
  };
  Value entries = generic(
      RankedTensorType::get({kDyn, kDyn}, b.getI64Type()), {batch, count}, {},
      {b.getMultiDimIdentityMap(2)}, {IT::parallel, IT::parallel},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        return indexOf(nb, l, 1);
      });
  Value entryPos = generic(
      RankedTensorType::get({kDyn}, b.getI64Type()), {count}, {},
      {b.getMultiDimIdentityMap(1)}, {IT::parallel},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        return arith::MulIOp::create(
            nb, l, indexOf(nb, l, 0),
            arith::ConstantIntOp::create(nb, l, rate, 64));
      });
  return poolEntries(*c, kv, gate, entries, entryPos);
}

Value DeepSeekV4Builder::readStart(int64_t back, int64_t align) {
  AffineMap firstOfRow = AffineMap::get(
      1, 0, {b.getAffineDimExpr(0), b.getAffineConstantExpr(0)},
      b.getContext());
  return generic(
      RankedTensorType::get({kDyn}, b.getI64Type()), {batch},
      {step->positions}, {firstOfRow, b.getMultiDimIdentityMap(1)},
      {IT::parallel}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto i64 = [&](int64_t v) {
          return arith::ConstantIntOp::create(nb, l, v, 64);
        };
        Value from = arith::MaxSIOp::create(
            nb, l, i64(0), arith::SubIOp::create(nb, l, a[0], i64(back)));
        return arith::MulIOp::create(
            nb, l, arith::DivSIOp::create(nb, l, from, i64(align)),
            i64(align));
      });
}

Value DeepSeekV4Builder::dividedBy(Value rows, int64_t divisor) {
  AffineMap id = b.getMultiDimIdentityMap(1);
  return generic(
      cast<RankedTensorType>(rows.getType()), {batch}, {rows}, {id, id},
      {IT::parallel}, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::DivSIOp::create(
            nb, l, a[0], arith::ConstantIntOp::create(nb, l, divisor, 64));
      });
}

Value DeepSeekV4Builder::pagesCovering(Value tokens, int64_t extra,
                                       int64_t page) {
  Value rows = arith::AddIOp::create(
      b, tokens, arith::ConstantIndexOp::create(b, extra + page - 1));
  return arith::DivUIOp::create(b, rows,
                                arith::ConstantIndexOp::create(b, page));
}

Value DeepSeekV4Builder::stepEntries(Value x, const std::string &prefix,
                                     int64_t rate, int64_t dim,
                                     bool overlapping, Value &rowPool,
                                     Value &entryPool) {
  std::optional<Compressor> c = loadCompressor(prefix, rate, dim, overlapping);
  if (!c)
    return {};
  int64_t width = c->width;
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}};
  auto unit = [&](Value rows, int64_t d, Value count) {
    return tensor::ExpandShapeOp::create(
        b, RankedTensorType::get({kDyn, 1, kDyn, d}, f32), rows, groups,
        SmallVector<OpFoldResult>{batch, b.getIndexAttr(1), count,
                                  b.getIndexAttr(d)});
  };
  writePool(b, *step, rowPool, unit(compressorRows(x, *c), 2 * width, seq),
            step->positions);
  // The entries the step's tokens close, listed from the first: a row's
  // tokens are its last ones, from p = positions[b, 0] to context - 1, and
  // token t closes entry (t + 1) / rate - 1 when (t + 1) % rate == 0, so
  // entries (p + rate) / rate - 1 to context / rate - 1 close, at most
  // S / rate + 1 of them (-1 fills the list; a row of padding lists none).
  // Each is rotated at entry * rate.
  Value listed = arith::AddIOp::create(
      b, arith::DivUIOp::create(b, seq, arith::ConstantIndexOp::create(b, rate)),
      arith::ConstantIndexOp::create(b, 1));
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  AffineMap perRow = AffineMap::get(2, 0, {b.getAffineDimExpr(0)},
                                    b.getContext());
  auto posType = RankedTensorType::get({kDyn, kDyn}, b.getI64Type());
  SmallVector<IT> par2(2, IT::parallel);
  Value firstPos = tensor::ExtractSliceOp::create(
      b, RankedTensorType::get({kDyn}, b.getI64Type()), step->positions,
      SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      SmallVector<OpFoldResult>{batch, b.getIndexAttr(1)},
      SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
  Value closes = generic(
      posType, {batch, listed}, {firstPos, step->contextLengths},
      {perRow, perRow, id2}, par2,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto i64 = [&](int64_t v) {
          return arith::ConstantIntOp::create(nb, l, v, 64);
        };
        Value first = arith::SubIOp::create(
            nb, l,
            arith::DivSIOp::create(nb, l,
                                   arith::AddIOp::create(nb, l, a[0], i64(rate)),
                                   i64(rate)),
            i64(1));
        Value last = arith::SubIOp::create(
            nb, l, arith::DivSIOp::create(nb, l, a[1], i64(rate)), i64(1));
        Value w = arith::AddIOp::create(
            nb, l, first,
            arith::IndexCastOp::create(nb, l, nb.getI64Type(),
                                       linalg::IndexOp::create(nb, l, 1)));
        Value real = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, a[0],
                                  i64(0)),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, w, last));
        return arith::SelectOp::create(nb, l, real, w, i64(-1));
      });
  Value ropePos = generic(
      posType, {batch, listed}, {closes}, {id2, id2}, par2,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::MulIOp::create(
            nb, l, a[0], arith::ConstantIntOp::create(nb, l, rate, 64));
      });
  // The cached rows the closing entries read (this step's included): kv,
  // then gate. The first entry a step closes pools the window of its first
  // token p (overlapping: and the one before), so its pages from there on
  // are gathered, from a multiple of lcm(P, rate) tokens (`skip`) that
  // keeps each window's slots where they were: entry w is then w - skip /
  // rate of the gathered rows (w >= 1 keeps its previous window). The S
  // new tokens end at p + S - 1, at most S + span + align - 2 rows after
  // `skip`: as many pages, whatever the context (a size from shapes).
  int64_t page = cast<RankedTensorType>(rowPool.getType()).getDimSize(2);
  int64_t align = std::lcm(page, rate);
  int64_t span = overlapping ? 2 * rate : rate;
  Value skip = readStart(span - 1, align);
  Value firstPages = dividedBy(skip, page);
  Value shifted = generic(
      posType, {batch, listed}, {closes, skip}, {id2, perRow, id2},
      par2, [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value gone = arith::DivSIOp::create(
            nb, l, a[1], arith::ConstantIntOp::create(nb, l, rate, 64));
        Value none = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::slt, a[0],
            arith::ConstantIntOp::create(nb, l, 0, 64));
        return arith::SelectOp::create(
            nb, l, none, a[0], arith::SubIOp::create(nb, l, a[0], gone));
      });
  Value cached = gatherPages(
      b, b.getLoc(), rowPool, Value(),
      pagesFrom(b, b.getLoc(), step->blockTable, firstPages,
                pagesCovering(seq, span + align - 2, page)),
      f32);
  Value tokens = tensor::DimOp::create(b, cached, 2);
  SmallVector<ReassociationIndices> drop = {{0, 1}, {2}, {3}};
  cached = tensor::CollapseShapeOp::create(
      b, RankedTensorType::get({kDyn, kDyn, 2 * width}, f32), cached, drop);
  auto half = [&](int64_t offset) -> Value {
    return tensor::ExtractSliceOp::create(
        b, RankedTensorType::get({kDyn, kDyn, width}, f32), cached,
        SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                  b.getIndexAttr(offset)},
        SmallVector<OpFoldResult>{batch, tokens, b.getIndexAttr(width)},
        SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
  };
  Value entries = poolEntries(*c, half(0), half(width), shifted, ropePos);
  // Entry w at slot w of the pool's own pages (block_table.every.<rate>).
  writePool(b, *step, entryPool, unit(entries, dim, listed), closes,
            /*scales=*/nullptr, rate);
  return entryPool;
}

Value DeepSeekV4Builder::indexerSelection(Value x, Value qLow, Value keys,
                                          const std::string &prefix,
                                          int64_t rate, Value lengths,
                                          Value table) {
  const SparseIndexerConfig &ix = v4.indexer;
  int64_t hidden = config.hiddenSize, h = ix.heads, d = ix.headDim;
  MLIRContext *ctx = b.getContext();
  Value wq = rowsOf(prefix + "wq_b.weight", h * d, v4.qLoraRank,
                    ropeFirstRows(h, d), {h * d, v4.qLoraRank},
                    /*isMatrix=*/true);
  // The head weights' h^-1/2, folded into their projection.
  Value wHeads = scaledMatrix(prefix + "weights_proj.weight", {h, hidden},
                              1.0 / std::sqrt(double(h)));
  if (failed())
    return {};
  Value q = swap12(splitHeads(linear(qLow, wq, Value(), h * d), h, d));
  q = swap12(ropeAt(q, pos, /*compressed=*/true));
  Value w = linear(x, wHeads, Value(), h);
  // Entry e is visible to the query at t when e < (t + 1) / rate: the
  // indexer's causal position is (t + 1) / rate - 1 (-1: none yet).
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  auto posType = RankedTensorType::get({kDyn, kDyn}, b.getI64Type());
  Value visible = generic(
      posType, {batch, seq}, {pos}, {id2, id2}, {IT::parallel, IT::parallel},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto c = [&](int64_t v) {
          return arith::ConstantIntOp::create(nb, l, v, 64);
        };
        Value n = arith::DivSIOp::create(
            nb, l, arith::AddIOp::create(nb, l, a[0], c(1)), c(rate));
        return arith::SubIOp::create(nb, l, n, c(1));
      });
  Value scores = LightningIndexerOp::create(
      b, RankedTensorType::get({kDyn, kDyn, kDyn}, f32), q, keys, w, visible,
      lengths, table, /*causal=*/true, /*scale=*/FloatAttr());
  // PyTorch's CPU top-k order among equal scores (ReLU zeros tie).
  auto idxType = RankedTensorType::get({kDyn, kDyn, ix.topk}, b.getI64Type());
  return TopKOp::create(
      b, idxType, scores, lengths, b.getI64IntegerAttr(ix.topk),
      TopKTiesAttr::get(ctx, TopKTies::Introselect));
}

Value DeepSeekV4Builder::unionAttention(Value q, Value raw, Value entries,
                                        Value indices, Value sink, int64_t rate,
                                        Value rawStart, Value entryTable) {
  auto type = cast<RankedTensorType>(q.getType());
  return CompressedAttentionOp::create(
      b, type, q, raw, entries, pos, rawStart, indices, entryTable, sink,
      b.getI64IntegerAttr(v4.window), b.getI64IntegerAttr(rate), FloatAttr());
}

Value DeepSeekV4Builder::stepAttention(Value x, Value qLow, Value q, Value kv,
                                       Value sink, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".attn.";
  int64_t d = config.headDim;
  using Memory = DeepSeekV4Config::Memory;
  Memory memory = v4.memory[i];
  // Every cached token's row (K = V), the new ones written first (FP8:
  // with a scale per token, dequantized as gathered).
  bool fp8 = !step->keyScales.empty();
  writePool(b, *step, step->keys[i], kv, step->positions,
            fp8 ? &step->keyScales[i] : nullptr);
  // The keys of the queries' window: from the page holding the first new
  // token's first visible key on (raw_start: the gathered rows' first
  // position), S + window + P - 2 rows at most.
  int64_t page =
      cast<RankedTensorType>(step->keys[i].getType()).getDimSize(2);
  Value rawStart = readStart(v4.window - 1, page);
  Value firstPages = dividedBy(rawStart, page);
  Value keys = gatherPages(
      b, b.getLoc(), step->keys[i], fp8 ? step->keyScales[i] : Value(),
      pagesFrom(b, b.getLoc(), step->blockTable, firstPages,
                pagesCovering(seq, v4.window + page - 2, page)),
      f32);
  // A window-only layer has no entries.
  Value entries = empty(RankedTensorType::get({kDyn, 1, 0, d}, f32), {batch});
  Value selected, entryTable;
  int64_t rate = 1;
  if (memory != Memory::Window) {
    bool csa = memory == Memory::CSA;
    rate = csa ? v4.csaRate : v4.hcaRate;
    SmallVector<Value> &pools = step->extras[i];
    entries = stepEntries(x, p + "compressor.", rate, d, csa, pools[0],
                          pools[1]);
    if (!entries)
      return {};
    // The entries stay in their pages: the indexer scores them there, and
    // the attention reads those it attends through the table
    // (mnemo-decompose-compressed-attention).
    entryTable = blockTableOf(*step, rate);
    if (csa) {
      int64_t di = v4.indexer.headDim;
      Value indexKeys = stepEntries(x, p + "indexer.compressor.", rate, di,
                                    /*overlapping=*/true, pools[2], pools[3]);
      if (!indexKeys)
        return {};
      // A recomputed forward over the sequence has context / rate entries:
      // the rows' width for PyTorch's tie order.
      auto lenType = RankedTensorType::get({kDyn}, b.getI64Type());
      AffineMap id1 = b.getMultiDimIdentityMap(1);
      Value lengths = generic(
          lenType, {batch}, {step->contextLengths}, {id1, id1}, {IT::parallel},
          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
            return arith::DivSIOp::create(
                nb, l, a[0], arith::ConstantIntOp::create(nb, l, rate, 64));
          });
      selected = indexerSelection(x, qLow, indexKeys, p + "indexer.", rate,
                                  lengths, entryTable);
      if (!selected)
        return {};
    }
  }
  return unionAttention(q, keys, entries, selected, sink, rate, rawStart,
                        entryTable);
}

Value DeepSeekV4Builder::outputProjection(Value o, const std::string &p) {
  int64_t hidden = config.hiddenSize, heads = config.numHeads;
  int64_t d = config.headDim, r = v4.ropeDim;
  int64_t groups = v4.oGroups, rank = v4.oLoraRank;
  int64_t per = heads * d / groups;
  std::optional<std::vector<float>> wa =
      weightData(p + "wo_a.weight", {groups * rank, per});
  Value wb = matrix(p + "wo_b.weight", {hidden, groups * rank});
  if (failed() || !wa)
    return {};
  // Column c of a group reads the output's channel c of its heads; the
  // output's channels are permuted as the keys' are (ropeFirstRows), and a
  // group holds whole heads.
  std::vector<float> permuted(wa->size());
  for (int64_t row = 0; row < groups * rank; ++row)
    for (int64_t c = 0; c < per; ++c) {
      int64_t k = c % d;
      int64_t old = c - k + (k < r ? d - r + k : k - r);
      permuted[row * per + c] = (*wa)[row * per + old];
    }
  // One linear per group (each a plain [rank, per] matrix for the GEMM
  // kernels and --dtype), its rank outputs side by side.
  Value merged = mergeHeads(o);
  Value flat = empty(act({groups * rank}), {batch, seq});
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  for (int64_t g = 0; g < groups; ++g) {
    ArrayRef<float> rows(permuted.data() + g * rank * per, rank * per);
    Value wg = matrixConstant({rank, per}, rows);
    Value xg = tensor::ExtractSliceOp::create(
        b, act({per}), merged,
        SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                  b.getIndexAttr(g * per)},
        SmallVector<OpFoldResult>{batch, seq, b.getIndexAttr(per)}, strides);
    flat = tensor::InsertSliceOp::create(
        b, linear(xg, wg, Value(), rank), flat,
        SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                  b.getIndexAttr(g * rank)},
        SmallVector<OpFoldResult>{batch, seq, b.getIndexAttr(rank)}, strides);
  }
  return linear(flat, wb, Value(), hidden);
}

Value DeepSeekV4Builder::attention(Value x, int64_t i) {
  std::string p = "model.layers." + std::to_string(i) + ".attn.";
  int64_t hidden = config.hiddenSize, heads = config.numHeads;
  int64_t d = config.headDim, ql = v4.qLoraRank;
  using Memory = DeepSeekV4Config::Memory;
  Memory memory = v4.memory[i];
  bool compressed = memory != Memory::Window;
  Value wqa = matrix(p + "wq_a.weight", {ql, hidden});
  Value qNorm = weight(p + "q_norm.weight", {ql});
  Value wqb = rowsOf(p + "wq_b.weight", heads * d, ql, ropeFirstRows(heads, d),
                     {heads * d, ql}, /*isMatrix=*/true);
  Value wkv = rowsOf(p + "wkv.weight", d, hidden, ropeFirstRows(1, d),
                     {d, hidden}, /*isMatrix=*/true);
  Value kvNorm = rowsOf(p + "norm.weight", d, 1, ropeFirstRows(1, d), {d});
  Value sink = weight(p + "attn_sink", {heads});
  if (failed())
    return {};

  Value qLow = rmsNorm(linear(x, wqa, Value(), ql), qNorm);
  // Each head normalized without a weight, then rotated.
  Value q = splitHeads(linear(qLow, wqb, Value(), heads * d), heads, d);
  q = RmsNormOp::create(b, q.getType(), q, ones(d),
                        llvm::APFloat(config.rmsNormEps));
  q = ropeAt(swap12(q), pos, compressed);
  Value kv = rmsNorm(linear(x, wkv, Value(), d), kvNorm);
  kv = ropeAt(swap12(splitHeads(kv, 1, d)), pos, compressed);

  auto type = RankedTensorType::get({kDyn, heads, kDyn, d}, f32);
  Value o;
  if (step) {
    o = stepAttention(x, qLow, q, kv, sink, i);
  } else if (!compressed) {
    o = AttentionOp::create(b, type, q, kv, kv, /*mask=*/Value(), sink,
                            /*q_offset=*/Value(), /*causal=*/true,
                            b.getI64IntegerAttr(v4.window), FloatAttr(),
                            FloatAttr());
  } else {
    bool csa = memory == Memory::CSA;
    int64_t rate = csa ? v4.csaRate : v4.hcaRate;
    Value entries = compress(x, p + "compressor.", rate, d, csa);
    Value selected;
    if (entries && csa) {
      Value indexKeys = compress(x, p + "indexer.compressor.", rate,
                                 v4.indexer.headDim, /*overlapping=*/true);
      if (indexKeys)
        selected = indexerSelection(x, qLow, indexKeys, p + "indexer.", rate,
                                    /*lengths=*/Value());
    }
    if (failed() || !entries || (csa && !selected))
      return {};
    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}};
    Value count = tensor::DimOp::create(b, entries, 1);
    Value entryHeads = tensor::ExpandShapeOp::create(
        b, RankedTensorType::get({kDyn, 1, kDyn, d}, f32), entries, groups,
        SmallVector<OpFoldResult>{batch, b.getIndexAttr(1), count,
                                  b.getIndexAttr(d)});
    o = unionAttention(q, kv, entryHeads, selected, sink, rate);
  }
  if (!o)
    return {};
  // The value carries the keys' rotation: undo it at the query's position.
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  Value back = generic(
      RankedTensorType::get({kDyn, kDyn}, b.getI64Type()), {batch, seq},
      {pos}, {id2, id2},
      {IT::parallel, IT::parallel},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::SubIOp::create(
            nb, l, arith::ConstantIntOp::create(nb, l, 0, 64), a[0]);
      });
  o = ropeAt(o, back, compressed);
  return outputProjection(o, p);
}
