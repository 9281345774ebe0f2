//===- KVCacheReport.cpp - KV cache bytes per token -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mnemoc --report` on a model with generation steps: the KV cache of one
// sequence at a given context, counted from the step's pool arguments
// ([Pages, ..., P, ...] with the page size at dim 2; a row of a pool is one
// token's slice) and what their attributes say the steps use. Three
// columns: what the runtime keeps (on whole pages), the rows the steps use
// (to the row), and full attention (every token's key and value rows).
// Pools of one kind, row size and use are counted together, with the
// number of layers that have them.
//
//===----------------------------------------------------------------------===//

#include "mnemo/Compiler/KVCacheReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::mnemo;

namespace {

/// One pool of the step's signature.
struct Pool {
  std::string kind; // the name after "cache.L."
  int64_t rowBytes = 0, pageSize = 0;
  int64_t window = 0; // mnemo.kv_window: pages behind it freed
  int64_t last = 0;   // only the last `last` tokens' rows used
  int64_t every = 0;  // one row used per `every` tokens
};

/// Pools of one kind, row size and use, over the layers that have them.
struct Group {
  Pool pool;
  int64_t layers = 0;
};

int64_t i64Attr(func::FuncOp f, unsigned i, StringRef name) {
  auto a = f.getArgAttrOfType<IntegerAttr>(i, name);
  return a ? a.getInt() : 0;
}

/// The step's pools, or none.
SmallVector<Pool> poolsOf(func::FuncOp f) {
  SmallVector<Pool> pools;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    if (!f.getArgAttr(i, "mnemo.in_place"))
      continue;
    auto type = dyn_cast<RankedTensorType>(f.getArgument(i).getType());
    if (!type || type.getRank() < 3 ||
        llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
      continue;
    Pool p;
    auto name = f.getArgAttrOfType<StringAttr>(i, "mnemo.name");
    StringRef full = name ? name.getValue() : StringRef("pool");
    // cache.<layer>.<kind>
    StringRef kind = full.rsplit('.').second;
    p.kind = (kind.empty() ? full : kind).str();
    int64_t elements = 1;
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      if (d != 0 && d != 2)
        elements *= size;
    p.rowBytes =
        elements * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    p.pageSize = type.getDimSize(2);
    p.window = i64Attr(f, i, "mnemo.kv_window");
    p.last = i64Attr(f, i, "mnemo.kv_last");
    p.every = i64Attr(f, i, "mnemo.kv_every");
    pools.push_back(p);
  }
  return pools;
}

/// Rows the steps use at a context of `n` tokens.
int64_t usedRows(const Pool &p, int64_t n) {
  if (p.every)
    return n / p.every;
  int64_t w = p.window ? p.window : p.last;
  return w ? std::min(n, w) : n;
}

bool isKeyOrValue(StringRef kind) {
  return kind == "key" || kind == "value" || kind == "key_scale" ||
         kind == "value_scale";
}

/// `bytes` in B, KiB, MiB or GiB, three significant figures or so.
std::string human(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  if (u == 0)
    os << llvm::format("%.0f %s", bytes, units[u]);
  else
    os << llvm::format(bytes < 10    ? "%.2f %s"
                       : bytes < 100 ? "%.1f %s"
                                     : "%.0f %s",
                       bytes, units[u]);
  return s;
}

std::string useOf(const Pool &p) {
  if (p.every)
    return "1 per " + std::to_string(p.every) + " tokens";
  if (p.window)
    return "last " + std::to_string(p.window);
  if (p.last)
    return "last " + std::to_string(p.last);
  return "all";
}

} // namespace

bool mnemo::printKVCacheReport(ModuleOp module, int64_t context,
                               llvm::raw_ostream &os) {
  func::FuncOp step = module.lookupSymbol<func::FuncOp>("decode");
  SmallVector<Pool> pools = step ? poolsOf(step) : SmallVector<Pool>();
  if (pools.empty())
    for (auto f : module.getOps<func::FuncOp>())
      if (!(pools = poolsOf(f)).empty()) {
        step = f;
        break;
      }
  if (pools.empty() || context < 1)
    return false;

  // The runtime keeps whole pages: of P entries for a pool of one row per
  // R tokens; of P tokens for the others, less the pages wholly behind the
  // widest window their rows are read in when every one of them declares
  // one (the generator's rule, pagesFor and freeBehindWindow in
  // runtime/src/generator.cpp; the two change together).
  int64_t pageSize = pools.front().pageSize;
  int64_t widest = 0;
  bool allWindowed = true;
  for (const Pool &p : pools) {
    if (p.every)
      continue;
    int64_t read = p.window ? p.window : p.last;
    allWindowed &= read > 0;
    widest = std::max(widest, read);
  }
  auto pagesOf = [&](int64_t rows) { return (rows + pageSize - 1) / pageSize; };
  int64_t pages = pagesOf(context);
  if (allWindowed) {
    int64_t firstRead = context - widest + 1;
    pages -= std::max<int64_t>(0, firstRead) / pageSize;
  }
  auto keptRows = [&](const Pool &p) {
    return (p.every ? pagesOf(context / p.every) : pages) * pageSize;
  };

  SmallVector<Group> groups; // in the order of their first pool
  auto same = [](const Pool &a, const Pool &b) {
    return std::tie(a.kind, a.rowBytes, a.window, a.last, a.every) ==
           std::tie(b.kind, b.rowBytes, b.window, b.last, b.every);
  };
  for (const Pool &p : pools) {
    auto *g =
        llvm::find_if(groups, [&](const Group &g) { return same(g.pool, p); });
    if (g == groups.end())
      g = &groups.emplace_back(Group{p, 0});
    ++g->layers;
  }

  os << "KV cache of '" << step.getSymName() << "', one sequence at " << context
     << " tokens (pages of " << pageSize << " tokens";
  if (allWindowed)
    os << "; those wholly behind the last " << widest << " freed";
  os << "):\n";
  os << llvm::format("  %-18s %6s %9s  %-26s %11s %11s %11s\n", "pool",
                     "layers", "B/token", "rows used", "kept", "used",
                     "full attn");
  double kept = 0, used = 0, full = 0;
  for (const Group &g : groups) {
    const Pool &p = g.pool;
    double k = double(g.layers) * p.rowBytes * keptRows(p);
    double u = double(g.layers) * p.rowBytes * usedRows(p, context);
    double f =
        isKeyOrValue(p.kind) ? double(g.layers) * p.rowBytes * context : 0.0;
    kept += k;
    used += u;
    full += f;
    os << llvm::format("  %-18s %6lld %9lld  %-26s %11s %11s %11s\n",
                       p.kind.c_str(), static_cast<long long>(g.layers),
                       static_cast<long long>(p.rowBytes), useOf(p).c_str(),
                       human(k).c_str(), human(u).c_str(), human(f).c_str());
  }
  os << llvm::format("  %-18s %6s %9s  %-26s %11s %11s %11s\n", "total", "", "",
                     "", human(kept).c_str(), human(used).c_str(),
                     human(full).c_str());
  os << llvm::format("  %-18s %6s %9s  %-26s %11.1f %11.1f %11.1f\n",
                     "bytes per token", "", "", "", kept / context,
                     used / context, full / context);
  return true;
}
