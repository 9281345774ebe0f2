//===- generator.cpp - generation over a paged KV cache ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A generator drives a model's generation steps, the functions `prefill`
// and `decode` that mnemoc emits for a checkpoint (and `append`, with
// --append-step):
//
//   (input_ids [B, S] i64, positions [B, S] i64, block_table [B, W] i32,
//    context_lengths [B] i64, [block_table.every.R [B, W_R] i32, ...]
//    cache.L.key / cache.L.value [Pages, Hkv, P, D] ... updated in place)
//    -> logits [B, S, V] f32, or [B, 1, V]: each sequence's last token's
//
// It owns the page pools (allocated once, zeroed; in host memory mapped
// lazily, so that pages no sequence ever took cost nothing; in device
// memory when its sessions run on a CUDA device, where the steps update
// them in place with no copy to the host) and hands pages to sequences
// from free lists, one per block table: the pools of a row per token are
// paged through `block_table`, those of one row per R tokens (compressed
// entries) through `block_table.every.R`, on pages of their own. It takes
// back the pages behind the window the steps read when every pool of a
// table declares one (mnemo.kv_window, mnemo.kv_last), builds each call's
// ragged batch (padding tokens at position -1, which the step neither
// writes nor attends from) and keeps each sequence's last logits. It
// computes nothing itself: the steps' code writes the cache and computes
// the logits.
//
// A call that fails (a bad token, an exhausted pool, a step of a released
// sequence) fails before anything runs and leaves every sequence as it
// was; pages it had taken return to the pool.
//
//===----------------------------------------------------------------------===//

#include "model.h"
#include "session.h"
#include "status.h"
#include "support/Map.h"
#include "support/Memory.h"
#include "support/String.h"
#include "support/Vector.h"

#include "mnemo/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

using namespace mnemo::rt;

namespace {

/// The inputs every generation step takes before its pools (and before
/// the block tables of its entry pools, kEntryTable followed by the rate).
constexpr const char *kStepInputs[] = {"input_ids", "positions", "block_table",
                                       "context_lengths"};
constexpr size_t kNumStepInputs = 4;
constexpr const char kEntryTable[] = "block_table.every.";

struct Pool {
  const char *name;
  mnemo_dtype_t dtype;
  Vector<int64_t> shape; // [Pages, Hkv, P, D], or FP8 scales [Pages, Hkv, P]
  size_t pageClass = 0;  // index in mnemo_generator_s::classes
  void *data = nullptr;       // host memory (sessions on the CPU)
  size_t mapped = 0;          // its size (mmap)
  /// Device memory (sessions on a CUDA device): the pool stays there, bound
  /// in place of the input by both steps.
  Owned<cuda::DeviceMemory> device;
};

/// The pools paged through one block table: those of a row per token
/// (`block_table`, page k holding tokens [kP, (k+1)P)), or those of one
/// row per `every` tokens (`block_table.every.R`, page k holding entries
/// [kP, (k+1)P)).
struct PageClass {
  int64_t every = 0;      // 0: a row per token
  const char *table = ""; // its block table input
  /// The widest window of tokens its pools' rows are read in when every
  /// one of them declares one (mnemo.kv_window, mnemo.kv_last): the pages
  /// wholly behind it are freed. 0: none.
  int64_t window = 0;
  Vector<int32_t> freePages;
  uint64_t pageBytes = 0; // one page of each of its pools
  /// The pages its pools hold now (device pools grow up to the limit).
  int64_t capacity = 0;
  Vector<int32_t> rows; // a call's block table, reused
};

/// Pages a device pool starts with.
constexpr int64_t kInitialDevicePages = 16;

/// A page a sequence no longer reads (freed behind its attention window).
constexpr int32_t kFreedPage = -1;

struct Sequence {
  Vector<Vector<int32_t>> pages; // per page class: the pages it holds
  int64_t length = 0;            // tokens in the cache
  Vector<float> logits;          // of the last token fed
};

/// The tokens one call feeds a sequence.
struct Feed {
  const char *kind; // "sequence", or "prompt" (id is then its index)
  uint64_t id;
  Sequence *sequence;
  const int64_t *tokens;
  int64_t count;
};

} // namespace

struct mnemo_generator_s {
  mnemo_model_t *model = nullptr;
  mnemo_session_t *prefill = nullptr;
  mnemo_session_t *decode = nullptr;
  /// The `append` step's session, when the model has one (hasAppend, which
  /// the probe of its signature sets).
  mnemo_session_t *append = nullptr;
  bool hasAppend = false;
  Vector<Pool> pools;
  /// classes[0]: the pools of a row per token; then one per entry rate.
  Vector<PageClass> classes;
  int64_t pageSize = 0, vocab = 0, maxBatch = 0, maxLength = 0, maxPages = 0;
  /// Pages of each class (mnemo_generator_create's num_pages).
  int64_t pageLimit = 0;
  SortedMap<uint64_t, Sequence> sequences;
  uint64_t nextId = 1;
  // A call's batch, reused between calls.
  Vector<int64_t> ids, positions, lengths;

  ~mnemo_generator_s() {
    mnemo_session_free(prefill);
    mnemo_session_free(decode);
    mnemo_session_free(append);
    for (Pool &p : pools)
      if (p.data)
        munmap(p.data, p.mapped);
    mnemo_model_free(model);
  }

  /// Which step a signature is checked as: `prefill` sets the length and
  /// page bounds, `decode` feeds one token, `append` any number.
  enum class Step { Prefill, Decode, Append };
  mnemo_status_t checkSignature(size_t function, Step step);
  mnemo_status_t checkTables(size_t function, Step step, size_t *numTables);
  mnemo_status_t run(mnemo_session_t *session, const Vector<Feed> &feeds);
  mnemo_status_t feed(mnemo_session_t *session, Vector<Feed> &feeds);
  /// The pages of class `c` a sequence of `length` tokens holds.
  int64_t pagesFor(const PageClass &c, int64_t length) const {
    int64_t rows = c.every ? length / c.every : length;
    return (rows + pageSize - 1) / pageSize;
  }
  void freeBehindWindow(Sequence &q);
  /// Returns every page `q` holds to its class's free list.
  void releasePages(Sequence &q);
  /// Grows the device pools of class `c` to hold page `need - 1` (by half
  /// at least, up to pageLimit), their pages copied over.
  mnemo_status_t growClass(size_t c, int64_t need);
};

namespace {

mnemo_status_t signatureError(const mnemo_model_t *model, size_t function,
                              const char *what) {
  return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                    "%s: function '%s' is not a generation step: %s",
                    model->name.c_str(), model->functions[function].name,
                    what);
}

} // namespace

/// Checks the block tables of `function`'s entry pools, the inputs after
/// the step inputs named kEntryTable + rate (prefill's make the page
/// classes after the first; the other steps' must be the same) and stores
/// their number in `numTables`.
mnemo_status_t mnemo_generator_s::checkTables(size_t function, Step step,
                                              size_t *numTables) {
  const FunctionPlan &p = model->functions[function];
  size_t n = 0;
  while (kNumStepInputs + n < p.inputs.size() &&
         !p.inputs[kNumStepInputs + n].inPlace)
    ++n;
  *numTables = n;
  if (step == Step::Prefill) {
    classes.assign(1, PageClass());
    classes[0].table = kStepInputs[2];
  } else if (n + 1 != classes.size()) {
    return signatureError(model, function,
                          "its block tables differ from prefill's");
  }
  for (size_t k = 0; k < n; ++k) {
    const TensorSig &s = p.inputs[kNumStepInputs + k];
    size_t prefix = sizeof(kEntryTable) - 1;
    char *end = nullptr;
    long long rate = std::strncmp(s.name, kEntryTable, prefix) == 0
                         ? std::strtoll(s.name + prefix, &end, 10)
                         : 0;
    if (rate < 2 || !end || *end || s.dtype != MNEMO_DTYPE_I32 ||
        s.shape.size() != 2)
      return signatureError(model, function,
                            "an input between the step inputs and the cache "
                            "pools is not a block table "
                            "block_table.every.R [B, W] of i32 (R > 1)");
    if (step == Step::Prefill) {
      classes.push_back(PageClass());
      classes.back().every = rate;
      classes.back().table = s.name;
    } else if (std::strcmp(classes[k + 1].table, s.name)) {
      return signatureError(model, function,
                            "its block tables differ from prefill's");
    }
  }
  return nullptr;
}

mnemo_status_t mnemo_generator_s::checkSignature(size_t function,
                                                 Step step) {
  bool isDecode = step == Step::Decode;
  const FunctionPlan &p = model->functions[function];
  if (p.inputs.size() < kNumStepInputs + 1 || p.outputs.size() != 1)
    return signatureError(model, function,
                          "expected input_ids, positions, block_table, "
                          "context_lengths and cache pools, and one output");
  static const mnemo_dtype_t dtypes[] = {MNEMO_DTYPE_I64, MNEMO_DTYPE_I64,
                                         MNEMO_DTYPE_I32, MNEMO_DTYPE_I64};
  static const size_t ranks[] = {2, 2, 2, 1};
  for (size_t i = 0; i < kNumStepInputs; ++i) {
    const TensorSig &s = p.inputs[i];
    if (std::strcmp(s.name, kStepInputs[i]) != 0 || s.dtype != dtypes[i] ||
        s.shape.size() != ranks[i] || s.inPlace)
      return signatureError(model, function, "unexpected step inputs");
  }
  const TensorSig &ids = p.inputs[0];
  const TensorSig &logits = p.outputs[0];
  if (logits.dtype != MNEMO_DTYPE_F32 || logits.shape.size() != 3 ||
      logits.shape[2] < 1)
    return signatureError(model, function,
                          "logits are not f32 [B, S, V] or [B, 1, V]");
  if (isDecode && ids.shape[1] != 1)
    return signatureError(model, function, "decode feeds one token");
  if (vocab && logits.shape[2] != vocab)
    return signatureError(model, function, "another vocabulary");
  vocab = logits.shape[2];
  int64_t batch = ids.maxShape[0];
  maxBatch = maxBatch ? std::min(maxBatch, batch) : batch;
  if (step == Step::Prefill) {
    maxLength = ids.maxShape[1];
    maxPages = p.inputs[2].maxShape[1];
  }
  size_t numTables = 0;
  MNEMO_RETURN_IF_ERROR(checkTables(function, step, &numTables));
  size_t firstPool = kNumStepInputs + numTables;
  size_t numPools = p.inputs.size() - firstPool;
  if (numPools < 1)
    return signatureError(model, function, "no cache pools");
  if (!pools.empty() && pools.size() != numPools)
    return signatureError(model, function, "another set of cache pools");
  // Per class: whether every pool declares a window its rows are read in.
  Vector<bool> windowed(classes.size(), true);
  for (size_t k = 0; k < numPools; ++k) {
    const TensorSig &s = p.inputs[firstPool + k];
    bool values = s.shape.size() == 4 &&
                  (s.dtype == MNEMO_DTYPE_F32 || s.dtype == MNEMO_DTYPE_BF16 ||
                   s.dtype == MNEMO_DTYPE_F16 ||
                   s.dtype == MNEMO_DTYPE_F8_E4M3);
    bool scales = s.shape.size() == 3 && s.dtype == MNEMO_DTYPE_F32;
    bool ok = s.inPlace && (values || scales) && s.shape[0] == -1;
    for (size_t d = 1; ok && d < s.shape.size(); ++d)
      ok = s.shape[d] > 0;
    if (!ok)
      return signatureError(model, function,
                            "a cache pool is neither [Pages, Hkv, P, D] of "
                            "f32, bf16, f16 or f8e4m3 nor FP8 scales "
                            "[Pages, Hkv, P] of f32, updated in place");
    if (k < pools.size()) {
      const Pool &q = pools[k];
      if (std::strcmp(q.name, s.name) || q.dtype != s.dtype ||
          !std::equal(q.shape.begin() + 1, q.shape.end(), s.shape.begin() + 1))
        return signatureError(model, function,
                              "its cache pools differ from prefill's");
      continue;
    }
    size_t c = 0;
    while (c < classes.size() && classes[c].every != s.kvEvery)
      ++c;
    if (c == classes.size())
      return signatureError(model, function,
                            "a cache pool of one row per R tokens has no "
                            "block table block_table.every.R");
    pools.push_back({s.name, s.dtype, s.shape, c, nullptr, 0, nullptr});
    PageClass &pc = classes[c];
    int64_t read = s.kvWindow ? s.kvWindow : s.kvLast;
    windowed[c] = windowed[c] && read > 0 && !pc.every;
    pc.window = std::max(pc.window, read);
    uint64_t bytes = mnemo_dtype_size(s.dtype);
    for (size_t d = 1; d < s.shape.size(); ++d)
      bytes *= static_cast<uint64_t>(s.shape[d]);
    pc.pageBytes += bytes;
    if (pageSize && s.shape[2] != pageSize)
      return signatureError(model, function, "pools of several page sizes");
    pageSize = s.shape[2];
  }
  for (size_t c = 0; c < classes.size(); ++c) {
    if (!windowed[c])
      classes[c].window = 0;
    if (!classes[c].pageBytes)
      return signatureError(model, function,
                            "a block table pages no cache pool");
  }
  return nullptr;
}

/// Runs one step over `feeds` (at most maxBatch of them, their pages
/// already taken) and stores each sequence's last logits.
mnemo_status_t mnemo_generator_s::run(mnemo_session_t *session,
                                      const Vector<Feed> &feeds) {
  int64_t b = static_cast<int64_t>(feeds.size()), s = 0;
  for (const Feed &f : feeds)
    s = std::max(s, f.count);
  ids.assign(b * s, 0);
  positions.assign(b * s, -1);
  lengths.assign(b, 0);
  for (int64_t i = 0; i < b; ++i) {
    const Feed &f = feeds[i];
    for (int64_t t = 0; t < f.count; ++t) {
      ids[i * s + t] = f.tokens[t];
      positions[i * s + t] = f.sequence->length + t;
    }
    lengths[i] = f.sequence->length + f.count;
  }
  int64_t batchShape[] = {b, s}, lengthShape[] = {b};
  MNEMO_RETURN_IF_ERROR(mnemo_session_set_input(
      session, "input_ids", MNEMO_DTYPE_I64, batchShape, 2, ids.data()));
  MNEMO_RETURN_IF_ERROR(mnemo_session_set_input(
      session, "positions", MNEMO_DTYPE_I64, batchShape, 2, positions.data()));
  MNEMO_RETURN_IF_ERROR(mnemo_session_set_input(session, "context_lengths",
                                                MNEMO_DTYPE_I64, lengthShape,
                                                1, lengths.data()));
  for (size_t c = 0; c < classes.size(); ++c) {
    PageClass &pc = classes[c];
    int64_t w = 1; // a table of no pages still has one (masked) column
    for (const Feed &f : feeds)
      w = std::max(w, static_cast<int64_t>(f.sequence->pages[c].size()));
    pc.rows.assign(b * w, 0);
    for (int64_t i = 0; i < b; ++i) {
      // A freed page's tokens are outside every window: any page will do.
      const Vector<int32_t> &held = feeds[i].sequence->pages[c];
      for (size_t k = 0; k < held.size(); ++k)
        pc.rows[i * w + k] = std::max(held[k], 0);
    }
    int64_t tableShape[] = {b, w};
    MNEMO_RETURN_IF_ERROR(mnemo_session_set_input(
        session, pc.table, MNEMO_DTYPE_I32, tableShape, 2, pc.rows.data()));
  }
  for (Pool &p : pools)
    MNEMO_RETURN_IF_ERROR(
        p.device ? bindResidentInput(session, p.name, p.dtype, p.shape.data(),
                                     p.shape.size(), *p.device)
                 : mnemo_session_set_inout(session, p.name, p.dtype,
                                           p.shape.data(), p.shape.size(),
                                           p.data));
  MNEMO_RETURN_IF_ERROR(mnemo_session_run(session));
  mnemo_tensor_t out;
  MNEMO_RETURN_IF_ERROR(mnemo_session_get_output(session, 0, &out));
  // Every token's logits [B, S, V], or each sequence's last token's
  // [B, 1, V].
  bool lastOnly = out.rank == 3 && out.shape[1] == 1;
  if (out.rank != 3 || out.shape[0] != b || (out.shape[1] != s && !lastOnly) ||
      out.shape[2] != vocab)
    return makeStatus(
        MNEMO_STATUS_INTERNAL,
        "generation step: logits of an unexpected shape (rank %zu, "
        "[%lld, %lld, %lld] for a batch of %lld, %lld tokens)",
        static_cast<size_t>(out.rank),
        static_cast<long long>(out.rank > 0 ? out.shape[0] : 0),
        static_cast<long long>(out.rank > 1 ? out.shape[1] : 0),
        static_cast<long long>(out.rank > 2 ? out.shape[2] : 0),
        static_cast<long long>(b), static_cast<long long>(s));
  const auto *logits = static_cast<const float *>(out.data);
  for (int64_t i = 0; i < b; ++i) {
    Sequence &q = *feeds[i].sequence;
    int64_t at = lastOnly ? i : i * s + feeds[i].count - 1;
    const float *row = logits + at * vocab;
    q.logits.assign(row, row + vocab);
    q.length += feeds[i].count;
    freeBehindWindow(q);
  }
  return nullptr;
}

/// With a window W on every pool of a class, the next query (at position
/// `length`) reads no row of it before `length - W + 1`: the pages wholly
/// before it return to the class's free list.
/// `mnemoc --report` counts the pages kept by the same rule
/// (lib/Compiler/KVCacheReport.cpp).
void mnemo_generator_s::freeBehindWindow(Sequence &q) {
  for (size_t c = 0; c < classes.size(); ++c) {
    PageClass &pc = classes[c];
    if (!pc.window)
      continue;
    int64_t firstRead = q.length - pc.window + 1;
    Vector<int32_t> &held = q.pages[c];
    for (size_t k = 0; k < held.size(); ++k) {
      if (static_cast<int64_t>(k + 1) * pageSize > firstRead)
        break;
      if (held[k] != kFreedPage) {
        pc.freePages.push_back(held[k]);
        held[k] = kFreedPage;
      }
    }
  }
}

mnemo_status_t mnemo_generator_s::growClass(size_t c, int64_t need) {
  PageClass &pc = classes[c];
  int64_t pages =
      std::min(pageLimit, std::max(need, pc.capacity + pc.capacity / 2));
  for (Pool &p : pools) {
    if (p.pageClass != c || !p.device || p.shape[0] >= pages)
      continue;
    // No overflow: mnemo_generator_create checked pageLimit pages.
    uint64_t bytes = mnemo_dtype_size(p.dtype) * static_cast<uint64_t>(pages);
    for (size_t d = 1; d < p.shape.size(); ++d)
      bytes *= static_cast<uint64_t>(p.shape[d]);
    String what = formatString("%s: %lld pages of '%s'", model->name.c_str(),
                               static_cast<long long>(pages), p.name);
    MNEMO_RETURN_IF_ERROR(cuda::DeviceMemory::grow(p.device, bytes,
                                                   what.c_str()));
    p.shape[0] = pages;
  }
  pc.capacity = pages;
  return nullptr;
}

void mnemo_generator_s::releasePages(Sequence &q) {
  for (size_t c = 0; c < q.pages.size(); ++c) {
    for (int32_t page : q.pages[c])
      if (page != kFreedPage)
        classes[c].freePages.push_back(page);
    q.pages[c].clear();
  }
}

/// Checks the feeds, takes the pages their tokens need and runs them in
/// batches of at most maxBatch. On an error before any run, every page
/// taken returns to the pool.
mnemo_status_t mnemo_generator_s::feed(mnemo_session_t *session,
                                       Vector<Feed> &feeds) {
  for (const Feed &f : feeds) {
    int64_t length = f.sequence->length + f.count;
    if (f.sequence->pages.size() != classes.size())
      f.sequence->pages.resize(classes.size());
    if (length > maxLength || pagesFor(classes[0], length) > maxPages)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "%s %llu: %lld tokens exceed the model's "
                        "maximum sequence length %lld (mnemoc --max-seq-len)",
                        f.kind, static_cast<unsigned long long>(f.id),
                        static_cast<long long>(length),
                        static_cast<long long>(maxLength));
    for (int64_t t = 0; t < f.count; ++t)
      if (f.tokens[t] < 0 || f.tokens[t] >= vocab)
        return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                          "%s %llu: token %lld (index %lld) is outside "
                          "the vocabulary of %lld",
                          f.kind, static_cast<unsigned long long>(f.id),
                          static_cast<long long>(f.tokens[t]),
                          static_cast<long long>(t),
                          static_cast<long long>(vocab));
  }
  // Pages of class c taken for feed i: taken[i * classes + c].
  // giveBack(first) returns those of the feeds from `first` on, which did
  // not run.
  size_t numClasses = classes.size();
  Vector<size_t> taken(feeds.size() * numClasses, 0);
  auto giveBack = [&](size_t first) {
    for (size_t i = first; i < feeds.size(); ++i)
      for (size_t c = 0; c < numClasses; ++c)
        for (size_t &n = taken[i * numClasses + c]; n > 0; --n) {
          Vector<int32_t> &held = feeds[i].sequence->pages[c];
          classes[c].freePages.push_back(held.back());
          held.pop_back();
        }
  };
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Feed &f = feeds[i];
    int64_t length = f.sequence->length + f.count;
    for (size_t c = 0; c < numClasses; ++c) {
      PageClass &pc = classes[c];
      Vector<int32_t> &held = f.sequence->pages[c];
      size_t need = static_cast<size_t>(pagesFor(pc, length));
      size_t have = held.size();
      if (need <= have)
        continue;
      if (need - have > pc.freePages.size()) {
        size_t missing = need - have - pc.freePages.size();
        giveBack(0);
        String pool =
            pc.every ? formatString("pool of compressed entries (one per "
                                    "%lld tokens)",
                                    static_cast<long long>(pc.every))
                     : String("pool");
        return makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED,
                          "%s %llu: the KV cache %s is exhausted (%zu more "
                          "page%s of %lld %s needed); release a sequence or "
                          "create the generator with more pages",
                          f.kind, static_cast<unsigned long long>(f.id),
                          pool.c_str(), missing, missing == 1 ? "" : "s",
                          static_cast<long long>(pageSize),
                          pc.every ? "entries" : "tokens");
      }
      taken[i * numClasses + c] = need - have;
      for (size_t k = have; k < need; ++k) {
        held.push_back(pc.freePages.back());
        pc.freePages.pop_back();
      }
    }
  }
  // Device pools grow to hold every page the feeds took (host pools hold
  // all pageLimit pages from the start).
  for (size_t c = 0; c < numClasses; ++c) {
    if (classes[c].capacity >= pageLimit)
      continue;
    int64_t highest = -1;
    for (size_t i = 0; i < feeds.size(); ++i) {
      const Vector<int32_t> &held = feeds[i].sequence->pages[c];
      for (size_t k = held.size() - taken[i * numClasses + c];
           k < held.size(); ++k)
        highest = std::max<int64_t>(highest, held[k]);
    }
    if (highest < classes[c].capacity)
      continue;
    if (mnemo_status_t status = growClass(c, highest + 1)) {
      giveBack(0);
      return status;
    }
  }
  for (size_t first = 0; first < feeds.size();
       first += static_cast<size_t>(maxBatch)) {
    size_t end = std::min(feeds.size(), first + static_cast<size_t>(maxBatch));
    Vector<Feed> chunk(feeds.begin() + first, feeds.begin() + end);
    if (mnemo_status_t status = run(session, chunk)) {
      // The chunks before this one ran and keep their pages; this one's
      // sequences and the later ones are left as they were.
      giveBack(first);
      return status;
    }
  }
  return nullptr;
}

/// Finds live sequence `id` in `sequences` (const or not; NOT_FOUND
/// otherwise).
template <typename Map, typename Iterator>
static mnemo_status_t findLive(Map &sequences, uint64_t id, Iterator *out) {
  *out = sequences.find(id);
  if (*out == sequences.end())
    return makeStatus(MNEMO_STATUS_NOT_FOUND,
                      "sequence %llu: not live (released, or never added)",
                      static_cast<unsigned long long>(id));
  return nullptr;
}

/// Appends live sequence `id`'s feed of `count` tokens to `feeds`
/// (INVALID_ARGUMENT, saying it was `fed` twice, when it is there already;
/// NOT_FOUND when not live).
static mnemo_status_t addLiveFeed(mnemo_generator_s &g, uint64_t id,
                                  const int64_t *tokens, int64_t count,
                                  const char *fed, Vector<Feed> &feeds) {
  SortedMap<uint64_t, Sequence>::iterator it;
  MNEMO_RETURN_IF_ERROR(findLive(g.sequences, id, &it));
  for (const Feed &f : feeds)
    if (f.id == id)
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "sequence %llu: %s twice in one call",
                        static_cast<unsigned long long>(id), fed);
  feeds.push_back({"sequence", id, &it->second, tokens, count});
  return nullptr;
}

/// Whether `model` has function `name` (its index in `out_function`).
static bool hasFunction(const mnemo_model_t *model, const char *name,
                        size_t *out_function) {
  mnemo_status_t missing = mnemo_model_find_function(model, name, out_function);
  mnemo_status_free(missing);
  return !missing;
}

/// A new generator holding `model` with its steps' signatures read and
/// checked: no sessions, no pools yet.
static mnemo_status_t probe(mnemo_model_t *model, mnemo_generator_s **out) {
  *out = nullptr;
  size_t prefill = 0, decode = 0, append = 0;
  mnemo_status_t missing = mnemo_model_find_function(model, "prefill", &prefill);
  if (!missing)
    missing = mnemo_model_find_function(model, "decode", &decode);
  if (missing) {
    // Replaced by the message that says what generation needs.
    mnemo_status_free(missing);
    return makeStatus(MNEMO_STATUS_NOT_FOUND,
                      "%s: no generation steps (functions 'prefill' and "
                      "'decode'; mnemoc emits them for checkpoints, "
                      "without --input-shape or --generation=false)",
                      model->name.c_str());
  }
  auto *g = make<mnemo_generator_s>();
  if (!g)
    return makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  retainModel(model);
  g->model = model;
  using Step = mnemo_generator_s::Step;
  mnemo_status_t status = g->checkSignature(prefill, Step::Prefill);
  if (!status)
    status = g->checkSignature(decode, Step::Decode);
  g->hasAppend = hasFunction(model, "append", &append);
  if (!status && g->hasAppend)
    status = g->checkSignature(append, Step::Append);
  if (status) {
    destroy(g);
    return status;
  }
  *out = g;
  return nullptr;
}

extern "C" {

mnemo_status_t mnemo_generator_page_size_of(mnemo_model_t *model,
                                            size_t *out_page_size) {
  if (!model || !out_page_size)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_page_size_of: NULL %s",
                      model ? "out_page_size" : "model");
  mnemo_generator_s *g = nullptr;
  MNEMO_RETURN_IF_ERROR(probe(model, &g));
  *out_page_size = static_cast<size_t>(g->pageSize);
  destroy(g);
  return nullptr;
}

mnemo_status_t mnemo_generator_create(mnemo_model_t *model,
                                      const mnemo_device_t *device,
                                      size_t num_pages,
                                      mnemo_generator_t **out_generator) {
  if (!model || !out_generator)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_create: NULL %s",
                      model ? "out_generator" : "model");
  *out_generator = nullptr;
  if (num_pages < 1 || num_pages > INT32_MAX)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_create: %zu pages (expected 1 to %d)",
                      num_pages, INT32_MAX);
  mnemo_generator_s *g = nullptr;
  MNEMO_RETURN_IF_ERROR(probe(model, &g));
  mnemo_status_t status =
      mnemo_session_create_on(model, "prefill", device, &g->prefill);
  if (!status)
    status = mnemo_session_create_on(model, "decode", device, &g->decode);
  if (!status && g->hasAppend)
    status = mnemo_session_create_on(model, "append", device, &g->append);
  for (size_t k = 0; !status && k < g->pools.size(); ++k) {
    Pool &p = g->pools[k];
    p.shape[0] = static_cast<int64_t>(num_pages);
    uint64_t bytes = mnemo_dtype_size(p.dtype);
    for (int64_t d : p.shape)
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
        bytes = UINT64_MAX;
    // Zeroed: a padding row of a page is read (and masked) as a number.
    // On a CUDA device the pool lives in device memory, kInitialDevicePages
    // at first, grown as sequences take pages (growClass); on the host it
    // is mapped whole, so that its pages take memory when first written.
    if (runsOnCuda(g->prefill)) {
      String what = formatString("%s: %zu pages of '%s'", model->name.c_str(),
                                 num_pages, p.name);
      int64_t first = std::min<int64_t>(static_cast<int64_t>(num_pages),
                                        kInitialDevicePages);
      status = bytes < UINT64_MAX
                   ? cuda::DeviceMemory::create(bytes / num_pages * first,
                                                what.c_str(), p.device)
                   : makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED,
                                "%s: too large", what.c_str());
      p.shape[0] = first;
      continue;
    }
    void *data = bytes < SIZE_MAX / 2
                     ? mmap(nullptr, static_cast<size_t>(bytes),
                            PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                     : MAP_FAILED;
    if (data == MAP_FAILED)
      status = makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED,
                          "%s: cannot allocate %zu pages of '%s'",
                          model->name.c_str(), num_pages, p.name);
    else {
      p.data = data;
      p.mapped = static_cast<size_t>(bytes);
    }
  }
  if (status) {
    destroy(g);
    return status;
  }
  // Every class has num_pages pages, the lowest handed out first (a host
  // pool's memory is then the pages its sequences hold at most at once,
  // and a device pool grows as far as they need).
  g->pageLimit = static_cast<int64_t>(num_pages);
  for (PageClass &pc : g->classes) {
    pc.capacity = g->pools.empty() ? 0 : g->pools[0].shape[0];
    pc.freePages.reserve(num_pages);
    for (size_t k = num_pages; k > 0; --k)
      pc.freePages.push_back(static_cast<int32_t>(k - 1));
  }
  *out_generator = g;
  return nullptr;
}

void mnemo_generator_free(mnemo_generator_t *generator) { destroy(generator); }

mnemo_status_t mnemo_generator_set_threads(mnemo_generator_t *generator,
                                           size_t threads) {
  if (!generator)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_set_threads: NULL generator");
  MNEMO_RETURN_IF_ERROR(mnemo_session_set_threads(generator->prefill, threads));
  if (generator->append)
    MNEMO_RETURN_IF_ERROR(mnemo_session_set_threads(generator->append, threads));
  return mnemo_session_set_threads(generator->decode, threads);
}

size_t mnemo_generator_page_size(const mnemo_generator_t *generator) {
  return generator ? static_cast<size_t>(generator->pageSize) : 0;
}

size_t mnemo_generator_free_pages(const mnemo_generator_t *generator) {
  return generator ? generator->classes[0].freePages.size() : 0;
}

uint64_t mnemo_generator_cache_bytes(const mnemo_generator_t *generator) {
  if (!generator)
    return 0;
  uint64_t bytes = 0;
  for (const auto &[id, q] : generator->sequences)
    for (size_t c = 0; c < q.pages.size(); ++c)
      for (int32_t page : q.pages[c])
        if (page != kFreedPage)
          bytes += generator->classes[c].pageBytes;
  return bytes;
}

size_t mnemo_generator_vocab_size(const mnemo_generator_t *generator) {
  return generator ? static_cast<size_t>(generator->vocab) : 0;
}

size_t mnemo_generator_max_length(const mnemo_generator_t *generator) {
  return generator ? static_cast<size_t>(generator->maxLength) : 0;
}

mnemo_status_t mnemo_generator_add(mnemo_generator_t *generator, size_t count,
                                   const int64_t *const *prompts,
                                   const size_t *lengths, uint64_t *out_ids) {
  if (!generator || (count && (!prompts || !lengths || !out_ids)))
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_add: NULL %s",
                      generator ? "prompts, lengths or out_ids"
                                : "generator");
  mnemo_generator_s &g = *generator;
  Vector<Sequence> fresh(count);
  Vector<Feed> feeds;
  for (size_t i = 0; i < count; ++i) {
    if (lengths[i] < 1 || !prompts[i])
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "mnemo_generator_add: prompt %zu is %s", i,
                        prompts[i] ? "empty" : "NULL");
    feeds.push_back({"prompt", i, &fresh[i], prompts[i],
                     static_cast<int64_t>(
                         std::min<size_t>(lengths[i], INT64_MAX))});
  }
  if (mnemo_status_t status = g.feed(g.prefill, feeds)) {
    // No sequence is added; feed returned the pages of the prompts that
    // did not run, these are the others'.
    for (Sequence &q : fresh)
      g.releasePages(q);
    return status;
  }
  for (size_t i = 0; i < count; ++i) {
    out_ids[i] = g.nextId++;
    g.sequences.emplace(out_ids[i], std::move(fresh[i]));
  }
  return nullptr;
}

mnemo_status_t mnemo_generator_step(mnemo_generator_t *generator, size_t count,
                                    const uint64_t *ids,
                                    const int64_t *tokens) {
  if (!generator || (count && (!ids || !tokens)))
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_step: NULL %s",
                      generator ? "ids or tokens" : "generator");
  mnemo_generator_s &g = *generator;
  Vector<Feed> feeds;
  for (size_t i = 0; i < count; ++i)
    MNEMO_RETURN_IF_ERROR(
        addLiveFeed(g, ids[i], &tokens[i], 1, "stepped", feeds));
  return g.feed(g.decode, feeds);
}

mnemo_status_t mnemo_generator_append(mnemo_generator_t *generator,
                                      size_t count, const uint64_t *ids,
                                      const int64_t *const *tokens,
                                      const size_t *lengths) {
  if (!generator || (count && (!ids || !tokens || !lengths)))
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_append: NULL %s",
                      generator ? "ids, tokens or lengths" : "generator");
  mnemo_generator_s &g = *generator;
  if (!g.append)
    return makeStatus(MNEMO_STATUS_NOT_FOUND,
                      "%s: no 'append' step (mnemoc --append-step compiles "
                      "it); mnemo_generator_step feeds one token at a time",
                      g.model->name.c_str());
  Vector<Feed> feeds;
  for (size_t i = 0; i < count; ++i) {
    if (lengths[i] < 1 || !tokens[i])
      return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                        "mnemo_generator_append: the tokens of sequence %llu "
                        "are %s",
                        static_cast<unsigned long long>(ids[i]),
                        tokens[i] ? "empty" : "NULL");
    MNEMO_RETURN_IF_ERROR(addLiveFeed(
        g, ids[i], tokens[i],
        static_cast<int64_t>(std::min<size_t>(lengths[i], INT64_MAX)),
        "appended to", feeds));
  }
  return g.feed(g.append, feeds);
}

int mnemo_generator_can_append(const mnemo_generator_t *generator) {
  return generator && generator->append ? 1 : 0;
}

mnemo_status_t mnemo_generator_logits(const mnemo_generator_t *generator,
                                      uint64_t id, const float **out_logits) {
  if (!generator || !out_logits)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_logits: NULL %s",
                      generator ? "out_logits" : "generator");
  SortedMap<uint64_t, Sequence>::const_iterator it;
  MNEMO_RETURN_IF_ERROR(findLive(generator->sequences, id, &it));
  *out_logits = it->second.logits.data();
  return nullptr;
}

mnemo_status_t mnemo_generator_sequence_length(
    const mnemo_generator_t *generator, uint64_t id, size_t *out_length) {
  if (!generator || !out_length)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_sequence_length: NULL %s",
                      generator ? "out_length" : "generator");
  SortedMap<uint64_t, Sequence>::const_iterator it;
  MNEMO_RETURN_IF_ERROR(findLive(generator->sequences, id, &it));
  *out_length = static_cast<size_t>(it->second.length);
  return nullptr;
}

mnemo_status_t mnemo_generator_release(mnemo_generator_t *generator,
                                       uint64_t id) {
  if (!generator)
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "mnemo_generator_release: NULL generator");
  SortedMap<uint64_t, Sequence>::iterator it;
  MNEMO_RETURN_IF_ERROR(findLive(generator->sequences, id, &it));
  generator->releasePages(it->second);
  generator->sequences.erase(it);
  return nullptr;
}

} // extern "C"
