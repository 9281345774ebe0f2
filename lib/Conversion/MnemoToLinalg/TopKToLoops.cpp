//===- TopKToLoops.cpp - mnemo.top_k as a selection per row -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mnemo.top_k's reference form: a parallel loop over the rows (one thread
// per row on a GPU), each copying its n scores and their indices into its
// slice of a scratch queue (or, with `rowScratch`, a queue of its own
// allocated in its iteration: the CPU targets, where only the rows in
// flight then hold one), running a selection that moves the k largest to
// the front without sorting the row (introselect, or a heap select when
// 64 k <= n), and writing the selected indices out in ascending order
// through a mark per entry.
//
// The selection is libstdc++'s std::nth_element and std::partial_sort step
// for step (median-of-three quickselect with an unguarded partition,
// insertion sort of the last <= 3 entries, heap select once 2 log2(n)
// rounds are spent): with the `introselect` ties the comparison is the
// score alone, so equal scores end where PyTorch's CPU torch.topk leaves
// them; with `lowest_index` it is (score, -index), a total order whose top
// k any selection finds.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/Utils/LinalgBuilders.h"
#include "mnemo/Conversion/MnemoToLinalg.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include <limits>

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::builders;

namespace {

using BodyFn = function_ref<void(OpBuilder &, Location)>;

/// `scf.if` with results, its two regions built by `then` and `otherwise`.
scf::IfOp ifElse(OpBuilder &b, Location loc, TypeRange types, Value cond,
                 BodyFn then, BodyFn otherwise) {
  auto op = scf::IfOp::create(b, loc, types, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  then(b, loc);
  b.setInsertionPointToStart(op.elseBlock());
  otherwise(b, loc);
  return op;
}

/// One queue entry: a score and the index it came from.
struct Entry {
  Value score, index;
};

/// Emits the selection over the scratch queue (`scores`, `ids`).
class Selector {
public:
  /// The queue is `scores[base + i]`, `ids[base + i]`.
  Selector(Location loc, Value scores, Value ids, Value base, TopKTies ties)
      : loc(loc), scores(scores), ids(ids), base(base), ties(ties) {}

  /// Moves the k largest of the queue's first n entries to its front.
  void select(OpBuilder &b, Value n, Value k);

private:
  Value cst(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(OpBuilder &b, Value x, Value y) {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value cmp(OpBuilder &b, arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value half(OpBuilder &b, Value x) {
    return arith::DivSIOp::create(b, loc, x, cst(b, 2));
  }
  Entry load(OpBuilder &b, Value i) {
    Value at = add(b, base, i);
    return {memref::LoadOp::create(b, loc, scores, at),
            memref::LoadOp::create(b, loc, ids, at)};
  }
  void store(OpBuilder &b, Value i, Entry e) {
    Value at = add(b, base, i);
    memref::StoreOp::create(b, loc, e.score, scores, at);
    memref::StoreOp::create(b, loc, e.index, ids, at);
  }
  void swap(OpBuilder &b, Value i, Value j) {
    Entry x = load(b, i), y = load(b, j);
    store(b, i, y);
    store(b, j, x);
  }
  /// Whether `x` goes before `y`: the greater score (NaN above numbers),
  /// and with `lowest_index` ties the lower index among equal scores.
  Value before(OpBuilder &b, Entry x, Entry y);
  Value before(OpBuilder &b, Value i, Value j) {
    return before(b, load(b, i), load(b, j));
  }
  /// `if (cond) then()` without results.
  void ifThen(OpBuilder &b, Value cond,
              function_ref<void(OpBuilder &)> then) {
    scf::IfOp::create(b, loc, cond, [&](OpBuilder &nb, Location) {
      then(nb);
      scf::YieldOp::create(nb, loc);
    });
  }

  void introselect(OpBuilder &b, Value nth, Value n);
  /// Median of a, b2, c moved to `result`; then the unguarded partition of
  /// [first + 1, last) around it. Returns the cut.
  Value partitionPivot(OpBuilder &b, Value first, Value last);
  void insertionSort(OpBuilder &b, Value first, Value last);
  void heapSelect(OpBuilder &b, Value first, Value middle, Value last);
  void makeHeap(OpBuilder &b, Value first, Value middle);
  void adjustHeap(OpBuilder &b, Value first, Value hole, Value len,
                  Entry value);

  Location loc;
  Value scores, ids, base;
  TopKTies ties;
};

Value Selector::before(OpBuilder &b, Entry x, Entry y) {
  auto isNan = [&](Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  };
  Value xNan = isNan(x.score), yNan = isNan(y.score);
  Value t = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value r = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, xNan, arith::XOrIOp::create(b, loc, yNan, t)),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x.score,
                            y.score));
  if (ties == TopKTies::Introselect)
    return r;
  Value equal = arith::OrIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x.score,
                            y.score),
      arith::AndIOp::create(b, loc, xNan, yNan));
  Value lower = cmp(b, arith::CmpIPredicate::slt, x.index, y.index);
  return arith::OrIOp::create(b, loc, r,
                              arith::AndIOp::create(b, loc, equal, lower));
}

void Selector::select(OpBuilder &b, Value n, Value k) {
  // Only a row longer than k needs a selection.
  ifThen(b, cmp(b, arith::CmpIPredicate::slt, k, n), [&](OpBuilder &nb) {
    Value heap = cmp(nb, arith::CmpIPredicate::sle,
                     arith::MulIOp::create(nb, loc, k, cst(nb, 64)), n);
    scf::IfOp::create(
        nb, loc, heap,
        [&](OpBuilder &tb, Location) {
          heapSelect(tb, cst(tb, 0), k, n); // std::partial_sort
          scf::YieldOp::create(tb, loc);
        },
        [&](OpBuilder &eb, Location) {
          introselect(eb, sub(eb, k, cst(eb, 1)), n); // std::nth_element
          scf::YieldOp::create(eb, loc);
        });
  });
}

void Selector::introselect(OpBuilder &b, Value nth, Value n) {
  // depth = 2 floor(log2 n), by halving (no count-leading-zeros, which not
  // every target lowers).
  Type idx = b.getIndexType();
  auto log2 = scf::WhileOp::create(
      b, loc, TypeRange{idx, idx}, ValueRange{n, cst(b, 0)},
      [&](OpBuilder &nb, Location, ValueRange a) {
        scf::ConditionOp::create(
            nb, loc, cmp(nb, arith::CmpIPredicate::sgt, a[0], cst(nb, 1)), a);
      },
      [&](OpBuilder &nb, Location, ValueRange a) {
        scf::YieldOp::create(
            nb, loc, ValueRange{half(nb, a[0]), add(nb, a[1], cst(nb, 1))});
      });
  Value depth = add(b, log2.getResult(1), log2.getResult(1));
  Value no = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{idx, idx, idx, b.getI1Type()},
      ValueRange{cst(b, 0), n, depth, no},
      [&](OpBuilder &nb, Location, ValueRange a) {
        Value more = cmp(nb, arith::CmpIPredicate::sgt, sub(nb, a[1], a[0]),
                         cst(nb, 3));
        Value go = arith::AndIOp::create(
            nb, loc, more,
            arith::XOrIOp::create(
                nb, loc, a[3],
                arith::ConstantOp::create(nb, loc, nb.getBoolAttr(true))));
        scf::ConditionOp::create(nb, loc, go, a);
      },
      [&](OpBuilder &nb, Location, ValueRange a) {
        Value first = a[0], last = a[1], d = a[2];
        Value spent = cmp(nb, arith::CmpIPredicate::eq, d, cst(nb, 0));
        auto branch = ifElse(
            nb, loc, TypeRange{idx, idx, idx, nb.getI1Type()}, spent,
            [&](OpBuilder &tb, Location) {
              heapSelect(tb, first, add(tb, nth, cst(tb, 1)), last);
              swap(tb, first, nth);
              scf::YieldOp::create(
                  tb, loc,
                  ValueRange{first, last, d,
                             arith::ConstantOp::create(tb, loc,
                                                       tb.getBoolAttr(true))});
            },
            [&](OpBuilder &eb, Location) {
              Value cut = partitionPivot(eb, first, last);
              Value left = cmp(eb, arith::CmpIPredicate::sle, cut, nth);
              Value f = arith::SelectOp::create(eb, loc, left, cut, first);
              Value l = arith::SelectOp::create(eb, loc, left, last, cut);
              scf::YieldOp::create(
                  eb, loc,
                  ValueRange{f, l, sub(eb, d, cst(eb, 1)),
                             arith::ConstantOp::create(eb, loc,
                                                       eb.getBoolAttr(false))});
            });
        scf::YieldOp::create(nb, loc, branch.getResults());
      });
  Value done = loop.getResult(3);
  Value notDone = arith::XOrIOp::create(
      b, loc, done, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  ifThen(b, notDone, [&](OpBuilder &nb) {
    insertionSort(nb, loop.getResult(0), loop.getResult(1));
  });
}

Value Selector::partitionPivot(OpBuilder &b, Value first, Value last) {
  // std::__move_median_to_first(first, first + 1, mid, last - 1).
  Value a = add(b, first, cst(b, 1));
  Value mid = add(b, first, half(b, sub(b, last, first)));
  Value c = sub(b, last, cst(b, 1));
  Value ab = before(b, a, mid), bc = before(b, mid, c), ac = before(b, a, c);
  auto pick = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y).getResult();
  };
  Value median = pick(ab, pick(bc, mid, pick(ac, c, a)),
                      pick(ac, a, pick(bc, c, mid)));
  swap(b, first, median);

  // std::__unguarded_partition(first + 1, last, first).
  Entry pivot = load(b, first);
  Type idx = b.getIndexType();
  auto scan = [&](OpBuilder &sb, Value from, bool up) -> Value {
    auto w = scf::WhileOp::create(
        sb, loc, TypeRange{idx}, ValueRange{from},
        [&](OpBuilder &nb, Location, ValueRange i) {
          Entry e = load(nb, i[0]);
          Value go = up ? before(nb, e, pivot) : before(nb, pivot, e);
          scf::ConditionOp::create(nb, loc, go, i);
        },
        [&](OpBuilder &nb, Location, ValueRange i) {
          scf::YieldOp::create(nb, loc,
                               up ? add(nb, i[0], cst(nb, 1))
                                  : sub(nb, i[0], cst(nb, 1)));
        });
    return w.getResult(0);
  };
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{idx, idx}, ValueRange{a, last},
      [&](OpBuilder &nb, Location, ValueRange r) {
        Value lo = scan(nb, r[0], /*up=*/true);
        Value hi = scan(nb, sub(nb, r[1], cst(nb, 1)), /*up=*/false);
        scf::ConditionOp::create(nb, loc,
                                 cmp(nb, arith::CmpIPredicate::slt, lo, hi),
                                 ValueRange{lo, hi});
      },
      [&](OpBuilder &nb, Location, ValueRange r) {
        swap(nb, r[0], r[1]);
        scf::YieldOp::create(nb, loc,
                             ValueRange{add(nb, r[0], cst(nb, 1)), r[1]});
      });
  return loop.getResult(0);
}

void Selector::insertionSort(OpBuilder &b, Value first, Value last) {
  Type idx = b.getIndexType();
  scf::ForOp::create(
      b, loc, add(b, first, cst(b, 1)), last, cst(b, 1), ValueRange{},
      [&](OpBuilder &nb, Location, Value i, ValueRange) {
        Entry v = load(nb, i);
        Value front = before(nb, v, load(nb, first));
        scf::IfOp::create(
            nb, loc, front,
            [&](OpBuilder &tb, Location) {
              // std::move_backward(first, i, i + 1), then *first = v.
              scf::ForOp::create(
                  tb, loc, cst(tb, 0), sub(tb, i, first), cst(tb, 1),
                  ValueRange{},
                  [&](OpBuilder &fb, Location, Value j, ValueRange) {
                    Value p = sub(fb, i, j);
                    store(fb, p, load(fb, sub(fb, p, cst(fb, 1))));
                    scf::YieldOp::create(fb, loc);
                  });
              store(tb, first, v);
              scf::YieldOp::create(tb, loc);
            },
            [&](OpBuilder &eb, Location) {
              // std::__unguarded_linear_insert(i).
              auto w = scf::WhileOp::create(
                  eb, loc, TypeRange{idx}, ValueRange{i},
                  [&](OpBuilder &wb, Location, ValueRange p) {
                    Value prev = sub(wb, p[0], cst(wb, 1));
                    scf::ConditionOp::create(
                        wb, loc, before(wb, v, load(wb, prev)), p);
                  },
                  [&](OpBuilder &wb, Location, ValueRange p) {
                    Value prev = sub(wb, p[0], cst(wb, 1));
                    store(wb, p[0], load(wb, prev));
                    scf::YieldOp::create(wb, loc, prev);
                  });
              store(eb, w.getResult(0), v);
              scf::YieldOp::create(eb, loc);
            });
        scf::YieldOp::create(nb, loc);
      });
}

void Selector::heapSelect(OpBuilder &b, Value first, Value middle,
                          Value last) {
  makeHeap(b, first, middle);
  Value len = sub(b, middle, first);
  scf::ForOp::create(
      b, loc, middle, last, cst(b, 1), ValueRange{},
      [&](OpBuilder &nb, Location, Value i, ValueRange) {
        // std::__pop_heap(first, middle, i) when *i goes before the top.
        ifThen(nb, before(nb, i, first), [&](OpBuilder &tb) {
          Entry v = load(tb, i);
          store(tb, i, load(tb, first));
          adjustHeap(tb, first, cst(tb, 0), len, v);
        });
        scf::YieldOp::create(nb, loc);
      });
}

void Selector::makeHeap(OpBuilder &b, Value first, Value middle) {
  Value len = sub(b, middle, first);
  ifThen(b, cmp(b, arith::CmpIPredicate::sge, len, cst(b, 2)),
         [&](OpBuilder &nb) {
           Value top = half(nb, sub(nb, len, cst(nb, 2)));
           scf::ForOp::create(
               nb, loc, cst(nb, 0), add(nb, top, cst(nb, 1)), cst(nb, 1),
               ValueRange{},
               [&](OpBuilder &fb, Location, Value j, ValueRange) {
                 Value parent = sub(fb, top, j);
                 adjustHeap(fb, first, parent, len,
                            load(fb, add(fb, first, parent)));
                 scf::YieldOp::create(fb, loc);
               });
         });
}

void Selector::adjustHeap(OpBuilder &b, Value first, Value hole, Value len,
                          Entry value) {
  Type idx = b.getIndexType();
  Value top = hole;
  Value limit = half(b, sub(b, len, cst(b, 1)));
  // Move the hole down to a leaf, always towards the child that goes first.
  auto down = scf::WhileOp::create(
      b, loc, TypeRange{idx}, ValueRange{hole},
      [&](OpBuilder &nb, Location, ValueRange h) {
        scf::ConditionOp::create(
            nb, loc, cmp(nb, arith::CmpIPredicate::slt, h[0], limit), h);
      },
      [&](OpBuilder &nb, Location, ValueRange h) {
        Value right = arith::MulIOp::create(nb, loc, add(nb, h[0], cst(nb, 1)),
                                            cst(nb, 2));
        Value left = sub(nb, right, cst(nb, 1));
        Value useLeft = before(nb, add(nb, first, right), add(nb, first, left));
        Value child = arith::SelectOp::create(nb, loc, useLeft, left, right);
        store(nb, add(nb, first, h[0]), load(nb, add(nb, first, child)));
        scf::YieldOp::create(nb, loc, child);
      });
  Value h = down.getResult(0);
  // An even length leaves one last left child.
  Value even = cmp(b, arith::CmpIPredicate::eq,
                   arith::RemSIOp::create(b, loc, len, cst(b, 2)), cst(b, 0));
  Value lastParent = cmp(b, arith::CmpIPredicate::eq, h,
                         half(b, sub(b, len, cst(b, 2))));
  Value one = arith::AndIOp::create(b, loc, even, lastParent);
  auto leaf = ifElse(
      b, loc, TypeRange{idx}, one,
      [&](OpBuilder &tb, Location) {
        Value child = sub(tb, arith::MulIOp::create(
                                  tb, loc, add(tb, h, cst(tb, 1)), cst(tb, 2)),
                          cst(tb, 1));
        store(tb, add(tb, first, h), load(tb, add(tb, first, child)));
        scf::YieldOp::create(tb, loc, child);
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, h); });
  // std::__push_heap: the value climbs while its parent goes after it.
  auto up = scf::WhileOp::create(
      b, loc, TypeRange{idx}, ValueRange{leaf.getResult(0)},
      [&](OpBuilder &nb, Location, ValueRange hh) {
        Value parent = half(nb, sub(nb, hh[0], cst(nb, 1)));
        Value above = cmp(nb, arith::CmpIPredicate::sgt, hh[0], top);
        // The parent is read only when above (its index is in range then).
        auto climb = ifElse(
            nb, loc, TypeRange{nb.getI1Type()}, above,
            [&](OpBuilder &tb, Location) {
              scf::YieldOp::create(
                  tb, loc,
                  before(tb, load(tb, add(tb, first, parent)), value));
            },
            [&](OpBuilder &eb, Location) {
              scf::YieldOp::create(
                  eb, loc,
                  arith::ConstantOp::create(eb, loc, eb.getBoolAttr(false))
                      .getResult());
            });
        scf::ConditionOp::create(nb, loc, climb.getResult(0), hh);
      },
      [&](OpBuilder &nb, Location, ValueRange hh) {
        Value parent = half(nb, sub(nb, hh[0], cst(nb, 1)));
        store(nb, add(nb, first, hh[0]), load(nb, add(nb, first, parent)));
        scf::YieldOp::create(nb, loc, parent);
      });
  store(b, add(b, first, up.getResult(0)), value);
}

struct TopKLowering final : OpRewritePattern<TopKOp> {
  TopKLowering(MLIRContext *ctx, bool rowScratch)
      : OpRewritePattern(ctx), rowScratch(rowScratch) {}

  LogicalResult matchAndRewrite(TopKOp op,
                                PatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value scores = op.getScores(), lengths = op.getLengths();
    auto scoresType = cast<RankedTensorType>(scores.getType());
    FloatType ct = computeType(scoresType.getElementType());
    // Queue indices in i32 (a row is far shorter than 2^31): 9 bytes of
    // scratch per score with the mark.
    Type i64 = b.getI64Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
    int64_t k = op.getK();
    auto cst = [&](OpBuilder &nb, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(nb, loc, v);
    };

    SmallVector<OpFoldResult> sizes = tensorSizes(b, loc, scores);
    Value rows = getValueOrCreateConstantIndexOp(b, loc, sizes[0]);
    Value seq = getValueOrCreateConstantIndexOp(b, loc, sizes[1]);
    Value width = getValueOrCreateConstantIndexOp(b, loc, sizes[2]);
    // Each row's scratch queue and marks, and the result, as buffers; the
    // buffer deallocation pipeline frees them. The queues are one slice of
    // width per row, so that the rows run in parallel (one thread each on
    // a GPU), or with rowScratch each row's own, allocated in its
    // iteration.
    auto buffer = [&](OpBuilder &nb, Type t, Value n) -> Value {
      return memref::AllocOp::create(
          nb, loc, MemRefType::get({ShapedType::kDynamic}, t), ValueRange{n});
    };
    Value qScores, qIds, marks;
    if (!rowScratch) {
      Value total = arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, rows, seq), width);
      qScores = buffer(b, ct, total);
      qIds = buffer(b, i32, total);
      marks = buffer(b, i8, total);
    }
    auto resultType = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, k}, i64);
    Value out =
        memref::AllocOp::create(b, loc, resultType, ValueRange{rows, seq});
    Value negInf =
        floatConst(b, loc, ct, -std::numeric_limits<double>::infinity());

    auto row = [&](OpBuilder &nb, Value bi, Value si) {
      Value base = cst(nb, 0);
      if (rowScratch) {
        qScores = buffer(nb, ct, width);
        qIds = buffer(nb, i32, width);
        marks = buffer(nb, i8, width);
      } else {
        base = arith::MulIOp::create(
            nb, loc,
            arith::AddIOp::create(nb, loc,
                                  arith::MulIOp::create(nb, loc, bi, seq), si),
            width);
      }
      auto at = [&](OpBuilder &fb, Value t) {
        return arith::AddIOp::create(fb, loc, base, t).getResult();
      };
      Value n = width;
      if (lengths) {
        Value len = arith::IndexCastOp::create(
            nb, loc, nb.getIndexType(),
            tensor::ExtractOp::create(nb, loc, lengths, bi));
        n = arith::MinSIOp::create(
            nb, loc, arith::MaxSIOp::create(nb, loc, len, cst(nb, 0)), width);
      }
      auto forEach = [&](OpBuilder &fb, Value lb, Value ub,
                         function_ref<void(OpBuilder &, Value)> body) {
        scf::ForOp::create(fb, loc, lb, ub, cst(fb, 1), ValueRange{},
                           [&](OpBuilder &lb2, Location, Value i, ValueRange) {
                             body(lb2, i);
                             scf::YieldOp::create(lb2, loc);
                           });
      };
      Value zero8 = arith::ConstantIntOp::create(nb, loc, i8, 0);
      // Load the row; clear its marks and its result.
      forEach(nb, cst(nb, 0), n, [&](OpBuilder &fb, Value t) {
        Value s = tensor::ExtractOp::create(fb, loc, scores,
                                            ValueRange{bi, si, t});
        memref::StoreOp::create(fb, loc, castFloat(fb, loc, s, ct), qScores,
                                at(fb, t));
        memref::StoreOp::create(fb, loc,
                                arith::IndexCastOp::create(fb, loc, i32, t),
                                qIds, at(fb, t));
        memref::StoreOp::create(fb, loc, zero8, marks, at(fb, t));
      });
      forEach(nb, cst(nb, 0), cst(nb, k), [&](OpBuilder &fb, Value j) {
        memref::StoreOp::create(fb, loc,
                                arith::ConstantIntOp::create(fb, loc, i64, -1),
                                out, ValueRange{bi, si, j});
      });
      Selector(loc, qScores, qIds, base, op.getTiesOrDefault())
          .select(nb, n, cst(nb, k));
      // Mark the selected entries that are not -inf.
      Value m = arith::MinSIOp::create(nb, loc, n, cst(nb, k));
      forEach(nb, cst(nb, 0), m, [&](OpBuilder &fb, Value j) {
        Value s = memref::LoadOp::create(fb, loc, qScores, at(fb, j));
        Value keep = arith::CmpFOp::create(fb, loc, arith::CmpFPredicate::UNE,
                                           s, negInf);
        scf::IfOp::create(fb, loc, keep, [&](OpBuilder &tb, Location) {
          Value id = arith::IndexCastOp::create(
              tb, loc, tb.getIndexType(),
              memref::LoadOp::create(tb, loc, qIds, at(tb, j)));
          memref::StoreOp::create(
              tb, loc, arith::ConstantIntOp::create(tb, loc, i8, 1), marks,
              at(tb, id));
          scf::YieldOp::create(tb, loc);
        });
      });
      // The marked indices in ascending order.
      scf::ForOp::create(
          nb, loc, cst(nb, 0), n, cst(nb, 1), ValueRange{cst(nb, 0)},
          [&](OpBuilder &fb, Location, Value t, ValueRange a) {
            Value marked = arith::CmpIOp::create(
                fb, loc, arith::CmpIPredicate::ne,
                memref::LoadOp::create(fb, loc, marks, at(fb, t)), zero8);
            auto branch = ifElse(
                fb, loc, TypeRange{fb.getIndexType()}, marked,
                [&](OpBuilder &tb, Location) {
                  memref::StoreOp::create(
                      tb, loc, arith::IndexCastOp::create(tb, loc, i64, t),
                      out, ValueRange{bi, si, a[0]});
                  scf::YieldOp::create(
                      tb, loc, arith::AddIOp::create(tb, loc, a[0], cst(tb, 1))
                                   .getResult());
                },
                [&](OpBuilder &eb, Location) {
                  scf::YieldOp::create(eb, loc, a);
                });
            scf::YieldOp::create(fb, loc, branch.getResults());
          });
    };
    scf::ParallelOp::create(
        b, loc, ValueRange{cst(b, 0), cst(b, 0)}, ValueRange{rows, seq},
        ValueRange{cst(b, 1), cst(b, 1)},
        [&](OpBuilder &nb, Location, ValueRange ivs) {
          row(nb, ivs[0], ivs[1]);
        });
    auto tensorType = RankedTensorType::get(resultType.getShape(), i64);
    Value result = bufferization::ToTensorOp::create(
        b, loc, tensorType, out, /*restrict=*/true, /*writable=*/true);
    b.replaceOp(op, castToType(b, loc, result, op.getResult().getType()));
    return success();
  }

private:
  bool rowScratch;
};

} // namespace

void mlir::mnemo::buildTopKSelection(OpBuilder &b, Location loc, Value scores,
                                     Value ids, Value base, TopKTies ties,
                                     Value n, Value k) {
  Selector(loc, scores, ids, base, ties).select(b, n, k);
}

void mlir::mnemo::populateTopKToLoopsPatterns(RewritePatternSet &patterns,
                                               bool rowScratch) {
  patterns.add<TopKLowering>(patterns.getContext(), rowScratch);
}
