// RUN: mnemo-opt %s --split-input-file --verify-diagnostics

// Diagnostics of the DeepSeek ops' verifiers and parsers: mismatched
// indexer dims, a bad k, indices that do not fit the queries, experts whose
// weights do not fit each other or the tokens.

func.func @indexer_table_capacity(%q: tensor<2x1x4x32xf32>, %k: tensor<9x1x16x32xbf16>, %w: tensor<2x1x4xf32>, %t: tensor<2x3xi32>) -> tensor<2x1x40xf32> {
  // expected-error @+1 {{result keys (40) must match table capacity (48)}}
  %s = mnemo.lightning_indexer %q, %k, %w table(%t : tensor<2x3xi32>) : tensor<2x1x4x32xf32>, tensor<9x1x16x32xbf16>, tensor<2x1x4xf32> -> tensor<2x1x40xf32>
  return %s : tensor<2x1x40xf32>
}

// -----

func.func @indexer_table_keys(%q: tensor<2x1x4x32xf32>, %k: tensor<2x48x32xf32>, %w: tensor<2x1x4xf32>, %t: tensor<2x3xi32>) -> tensor<2x1x48xf32> {
  // expected-error @+1 {{expects k of rank 4 [Pages, 1, P, Di], got rank 3}}
  %s = mnemo.lightning_indexer %q, %k, %w table(%t : tensor<2x3xi32>) : tensor<2x1x4x32xf32>, tensor<2x48x32xf32>, tensor<2x1x4xf32> -> tensor<2x1x48xf32>
  return %s : tensor<2x1x48xf32>
}

// -----

func.func @indexer_table_heads(%q: tensor<2x1x4x32xf32>, %k: tensor<9x2x16x32xbf16>, %w: tensor<2x1x4xf32>, %t: tensor<2x3xi32>) -> tensor<2x1x48xf32> {
  // expected-error @+1 {{k heads (2) must match 1 (1)}}
  %s = mnemo.lightning_indexer %q, %k, %w table(%t : tensor<2x3xi32>) : tensor<2x1x4x32xf32>, tensor<9x2x16x32xbf16>, tensor<2x1x4xf32> -> tensor<2x1x48xf32>
  return %s : tensor<2x1x48xf32>
}

// -----

func.func @indexer_head_dim(%q: tensor<1x8x4x32xf32>, %k: tensor<1x8x16xf32>, %w: tensor<1x8x4xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{k head dim (16) must match q head dim (32)}}
  %s = mnemo.lightning_indexer %q, %k, %w causal : tensor<1x8x4x32xf32>, tensor<1x8x16xf32>, tensor<1x8x4xf32> -> tensor<1x8x8xf32>
  return %s : tensor<1x8x8xf32>
}

// -----

func.func @indexer_weights(%q: tensor<1x8x4x32xf32>, %k: tensor<1x8x32xf32>, %w: tensor<1x8x3xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{weights heads (3) must match q heads (4)}}
  %s = mnemo.lightning_indexer %q, %k, %w causal : tensor<1x8x4x32xf32>, tensor<1x8x32xf32>, tensor<1x8x3xf32> -> tensor<1x8x8xf32>
  return %s : tensor<1x8x8xf32>
}

// -----

func.func @indexer_keys(%q: tensor<1x8x4x32xf32>, %k: tensor<1x9x32xf32>, %w: tensor<1x8x4xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{result keys (8) must match k length (9)}}
  %s = mnemo.lightning_indexer %q, %k, %w causal : tensor<1x8x4x32xf32>, tensor<1x9x32xf32>, tensor<1x8x4xf32> -> tensor<1x8x8xf32>
  return %s : tensor<1x8x8xf32>
}

// -----

func.func @indexer_positions(%q: tensor<1x8x4x32xf32>, %k: tensor<1x8x32xf32>, %w: tensor<1x8x4xf32>, %p: tensor<1x7xi64>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{positions length (7) must match q length (8)}}
  %s = mnemo.lightning_indexer %q, %k, %w positions(%p : tensor<1x7xi64>) causal : tensor<1x8x4x32xf32>, tensor<1x8x32xf32>, tensor<1x8x4xf32> -> tensor<1x8x8xf32>
  return %s : tensor<1x8x8xf32>
}

// -----

func.func @topk_zero(%s: tensor<1x8x8xf32>) -> tensor<1x8x0xi64> {
  // expected-error @+1 {{k must be positive, got 0}}
  %i = mnemo.top_k %s k(0) : tensor<1x8x8xf32> -> tensor<1x8x0xi64>
  return %i : tensor<1x8x0xi64>
}

// -----

func.func @topk_result(%s: tensor<1x8x8xf32>) -> tensor<1x8x4xi64> {
  // expected-error @+1 {{result k (4) must equal k (2)}}
  %i = mnemo.top_k %s k(2) : tensor<1x8x8xf32> -> tensor<1x8x4xi64>
  return %i : tensor<1x8x4xi64>
}

// -----

func.func @topk_ties(%s: tensor<1x8x8xf32>) -> tensor<1x8x2xi64> {
  // expected-error @+1 {{expected top-k ties lowest_index or introselect, got 'random'}}
  %i = mnemo.top_k %s k(2) ties(random) : tensor<1x8x8xf32> -> tensor<1x8x2xi64>
  return %i : tensor<1x8x2xi64>
}

// -----

func.func @topk_lengths(%s: tensor<2x8x8xf32>, %l: tensor<3xi64>) -> tensor<2x8x2xi64> {
  // expected-error @+1 {{lengths batch (3) must match scores batch (2)}}
  %i = mnemo.top_k %s lengths(%l : tensor<3xi64>) k(2) : tensor<2x8x8xf32> -> tensor<2x8x2xi64>
  return %i : tensor<2x8x2xi64>
}

// -----

// A k larger than the row is valid: the result is padded with -1.
func.func @topk_past_the_row(%s: tensor<1x8x8xf32>) -> tensor<1x8x16xi64> {
  %i = mnemo.top_k %s k(16) : tensor<1x8x8xf32> -> tensor<1x8x16xi64>
  return %i : tensor<1x8x16xi64>
}

// -----

func.func @sparse_indices_length(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %i: tensor<1x7x4xi64>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{indices length (7) must match query length (8)}}
  %o = mnemo.sparse_attention %q, %k, %v, %i : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x7x4xi64> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @sparse_groups(%q: tensor<1x4x8x16xf32>, %k: tensor<1x3x8x16xf32>, %v: tensor<1x3x8x16xf32>, %i: tensor<1x8x4xi64>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{query heads (4) must be a multiple of key heads (3)}}
  %o = mnemo.sparse_attention %q, %k, %v, %i : tensor<1x4x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x8x4xi64> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @sparse_indices_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %i: tensor<8x4xi64>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expects indices of rank 3 [B, Sq, K], got rank 2}}
  %o = mnemo.sparse_attention %q, %k, %v, %i : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x4xi64> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @mla_indices_causal(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>, %i: tensor<1x8x4xi64>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{with indices takes neither causal nor q_offset: the indices select the keys}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal indices(%i : tensor<1x8x4xi64>) : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

func.func @mla_indices_batch(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>, %i: tensor<2x8x4xi64>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{indices batch (2) must match q_nope batch (1)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv indices(%i : tensor<2x8x4xi64>) : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

func.func @experts_down(%x: tensor<1x8x16xf32>, %g: tensor<4x8x16xf32>, %u: tensor<4x8x16xf32>, %d: tensor<4x16x6xf32>, %i: tensor<1x8x2xi64>, %w: tensor<1x8x2xf32>) -> tensor<1x8x16xf32> {
  // expected-error @+1 {{down columns (6) must match gate rows (8)}}
  %y = mnemo.experts %x, %g, %u, %d, %i, %w : tensor<1x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x16x6xf32>, tensor<1x8x2xi64>, tensor<1x8x2xf32> -> tensor<1x8x16xf32>
  return %y : tensor<1x8x16xf32>
}

// -----

func.func @experts_weights(%x: tensor<1x8x16xf32>, %g: tensor<4x8x16xf32>, %u: tensor<4x8x16xf32>, %d: tensor<4x16x8xf32>, %i: tensor<1x8x2xi64>, %w: tensor<1x8x3xf32>) -> tensor<1x8x16xf32> {
  // expected-error @+1 {{weights per token (3) must match indices per token (2)}}
  %y = mnemo.experts %x, %g, %u, %d, %i, %w : tensor<1x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x16x8xf32>, tensor<1x8x2xi64>, tensor<1x8x3xf32> -> tensor<1x8x16xf32>
  return %y : tensor<1x8x16xf32>
}

// -----

func.func @experts_hidden(%x: tensor<1x8x12xf32>, %g: tensor<4x8x16xf32>, %u: tensor<4x8x16xf32>, %d: tensor<4x16x8xf32>, %i: tensor<1x8x2xi64>, %w: tensor<1x8x2xf32>) -> tensor<1x8x12xf32> {
  // expected-error @+1 {{gate columns (16) must match hidden size (12)}}
  %y = mnemo.experts %x, %g, %u, %d, %i, %w : tensor<1x8x12xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x16x8xf32>, tensor<1x8x2xi64>, tensor<1x8x2xf32> -> tensor<1x8x12xf32>
  return %y : tensor<1x8x12xf32>
}

// -----

func.func @experts_limit(%x: tensor<1x8x16xf32>, %g: tensor<4x8x16xf32>, %u: tensor<4x8x16xf32>, %d: tensor<4x16x8xf32>, %i: tensor<1x8x2xi64>, %w: tensor<1x8x2xf32>) -> tensor<1x8x16xf32> {
  // expected-error @+1 {{limit must be finite and positive, got 0}}
  %y = mnemo.experts %x, %g, %u, %d, %i, %w limit(0.0) : tensor<1x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x16x8xf32>, tensor<1x8x2xi64>, tensor<1x8x2xf32> -> tensor<1x8x16xf32>
  return %y : tensor<1x8x16xf32>
}

// -----

func.func @swiglu_limit(%g: tensor<4x7xf32>, %u: tensor<4x7xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{limit must be finite and positive, got -1}}
  %s = mnemo.swiglu %g, %u limit(-1.0) : tensor<4x7xf32>
  return %s : tensor<4x7xf32>
}

// -----

func.func @compressed_heads(%q: tensor<1x3x5x16xf32>, %r: tensor<1x2x7x16xf32>, %e: tensor<1x2x2x16xf32>, %p: tensor<1x5xi64>) -> tensor<1x3x5x16xf32> {
  // expected-error @+1 {{query heads (3) must be a multiple of key heads (2)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) window(4) rate(2) : tensor<1x3x5x16xf32>, tensor<1x2x7x16xf32>, tensor<1x2x2x16xf32>, tensor<1x5xi64> -> tensor<1x3x5x16xf32>
  return %o : tensor<1x3x5x16xf32>
}

// -----

func.func @compressed_entries_dim(%q: tensor<1x2x5x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<1x1x2x8xf32>, %p: tensor<1x5xi64>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{entries head dim (8) must match query head dim (16)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) window(4) rate(2) : tensor<1x2x5x16xf32>, tensor<1x1x7x16xf32>, tensor<1x1x2x8xf32>, tensor<1x5xi64> -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

func.func @compressed_positions(%q: tensor<1x2x5x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<1x1x2x16xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{positions length (4) must match query length (5)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) window(4) rate(2) : tensor<1x2x5x16xf32>, tensor<1x1x7x16xf32>, tensor<1x1x2x16xf32>, tensor<1x4xi64> -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

func.func @compressed_indices(%q: tensor<1x2x5x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<1x1x2x16xf32>, %p: tensor<1x5xi64>, %i: tensor<1x6x3xi64>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{indices length (6) must match query length (5)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) indices(%i : tensor<1x6x3xi64>) window(4) rate(2) : tensor<1x2x5x16xf32>, tensor<1x1x7x16xf32>, tensor<1x1x2x16xf32>, tensor<1x5xi64> -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

func.func @compressed_rate(%q: tensor<1x2x5x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<1x1x2x16xf32>, %p: tensor<1x5xi64>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{rate must be positive, got 0}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) window(4) rate(0) : tensor<1x2x5x16xf32>, tensor<1x1x7x16xf32>, tensor<1x1x2x16xf32>, tensor<1x5xi64> -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

func.func @compressed_window(%q: tensor<1x2x5x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<1x1x2x16xf32>, %p: tensor<1x5xi64>, %s: tensor<3xf32>) -> tensor<1x2x5x16xf32> {
  // expected-error @+1 {{expects sink logits of shape [2] (one per query head)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) sink(%s : tensor<3xf32>) window(4) rate(2) : tensor<1x2x5x16xf32>, tensor<1x1x7x16xf32>, tensor<1x1x2x16xf32>, tensor<1x5xi64> -> tensor<1x2x5x16xf32>
  return %o : tensor<1x2x5x16xf32>
}

// -----

func.func @pool_channels(%kv: tensor<1x9x8xf32>, %b: tensor<8x8xf32>, %e: tensor<1x2xi64>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{kv channels (8) must match 2 * bias channels (16)}}
  %p = mnemo.gated_pool %kv, %kv, %b, %e rate(4) overlapping : tensor<1x9x8xf32>, tensor<1x9x8xf32>, tensor<8x8xf32>, tensor<1x2xi64> -> tensor<1x2x8xf32>
  return %p : tensor<1x2x8xf32>
}

// -----

func.func @pool_slots(%kv: tensor<1x9x8xf32>, %b: tensor<3x8xf32>, %e: tensor<1x2xi64>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{bias slots (3) must match rate (4)}}
  %p = mnemo.gated_pool %kv, %kv, %b, %e rate(4) : tensor<1x9x8xf32>, tensor<1x9x8xf32>, tensor<3x8xf32>, tensor<1x2xi64> -> tensor<1x2x8xf32>
  return %p : tensor<1x2x8xf32>
}

// -----

func.func @pool_gate(%kv: tensor<1x9x8xf32>, %g: tensor<1x7x8xf32>, %b: tensor<4x8xf32>, %e: tensor<1x2xi64>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{gate length (7) must match kv length (9)}}
  %p = mnemo.gated_pool %kv, %g, %b, %e rate(4) : tensor<1x9x8xf32>, tensor<1x7x8xf32>, tensor<4x8xf32>, tensor<1x2xi64> -> tensor<1x2x8xf32>
  return %p : tensor<1x2x8xf32>
}

// -----

func.func @compressed_raw_start(%q: tensor<2x2x5x16xf32>, %r: tensor<2x1x7x16xf32>, %e: tensor<2x1x2x16xf32>, %p: tensor<2x5xi64>, %s: tensor<3xi64>) -> tensor<2x2x5x16xf32> {
  // expected-error @+1 {{raw_start batch (3) must match query batch (2)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) raw_start(%s : tensor<3xi64>) window(4) rate(2) : tensor<2x2x5x16xf32>, tensor<2x1x7x16xf32>, tensor<2x1x2x16xf32>, tensor<2x5xi64> -> tensor<2x2x5x16xf32>
  return %o : tensor<2x2x5x16xf32>
}

// -----

func.func @compressed_entry_table_rank(%q: tensor<1x2x1x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<5x1x4x16xbf16>, %p: tensor<1x1xi64>, %t: tensor<4xi32>) -> tensor<1x2x1x16xf32> {
  // expected-error @+1 {{expects entry_table of rank 2 [B, W], got rank 1}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) entry_table(%t : tensor<4xi32>) window(4) rate(2) : tensor<1x2x1x16xf32>, tensor<1x1x7x16xf32>, tensor<5x1x4x16xbf16>, tensor<1x1xi64> -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// -----

func.func @compressed_entry_page(%q: tensor<1x2x1x16xf32>, %r: tensor<1x1x7x16xf32>, %e: tensor<5x1x?x16xbf16>, %p: tensor<1x1xi64>, %t: tensor<1x3xi32>) -> tensor<1x2x1x16xf32> {
  // expected-error @+1 {{entries page size must be static}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) entry_table(%t : tensor<1x3xi32>) window(4) rate(2) : tensor<1x2x1x16xf32>, tensor<1x1x7x16xf32>, tensor<5x1x?x16xbf16>, tensor<1x1xi64> -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}

// -----

func.func @compressed_entry_table_batch(%q: tensor<2x2x1x16xf32>, %r: tensor<2x1x7x16xf32>, %e: tensor<5x1x4x16xbf16>, %p: tensor<2x1xi64>, %t: tensor<3x3xi32>) -> tensor<2x2x1x16xf32> {
  // expected-error @+1 {{entry_table batch (3) must match query batch (2)}}
  %o = mnemo.compressed_attention %q, %r, %e positions(%p) entry_table(%t : tensor<3x3xi32>) window(4) rate(2) : tensor<2x2x1x16xf32>, tensor<2x1x7x16xf32>, tensor<5x1x4x16xbf16>, tensor<2x1xi64> -> tensor<2x2x1x16xf32>
  return %o : tensor<2x2x1x16xf32>
}

// -----

func.func @sparse_sink(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %i: tensor<1x8x4xi64>, %s: tensor<2xf32>) -> tensor<1x4x8x16xf32> {
  // expected-error @+1 {{expects sink logits of shape [4] (one per query head)}}
  %o = mnemo.sparse_attention %q, %k, %v, %i sink(%s : tensor<2xf32>) : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x8x4xi64> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

func.func @grouped_linear_groups(%x: tensor<130x16xf32>, %w: tensor<4x8x16xbf16>, %g: tensor<2xi32>) -> tensor<130x8xf32> {
  // expected-error @+1 {{groups (2) must match ceil(input rows / group rows) (3)}}
  %y = mnemo.grouped_linear %x, %w groups(%g) rows(64) : tensor<130x16xf32>, tensor<4x8x16xbf16>, tensor<2xi32> -> tensor<130x8xf32>
  return %y : tensor<130x8xf32>
}

// -----

func.func @grouped_linear_columns(%x: tensor<?x16xf32>, %w: tensor<4x8x12xbf16>, %g: tensor<?xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{weight columns (12) must match input features (16)}}
  %y = mnemo.grouped_linear %x, %w groups(%g) rows(64) : tensor<?x16xf32>, tensor<4x8x12xbf16>, tensor<?xi32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @grouped_linear_weight(%x: tensor<?x16xf32>, %w: tensor<8x16xbf16>, %g: tensor<?xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{expects weight of rank 3 [E, N, K], got rank 2}}
  %y = mnemo.grouped_linear %x, %w groups(%g) rows(64) : tensor<?x16xf32>, tensor<8x16xbf16>, tensor<?xi32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @grouped_linear_rows(%x: tensor<?x16xf32>, %w: tensor<4x8x16xbf16>, %g: tensor<?xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{attribute 'group_rows' failed to satisfy constraint}}
  %y = mnemo.grouped_linear %x, %w groups(%g) rows(0) : tensor<?x16xf32>, tensor<4x8x16xbf16>, tensor<?xi32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @grouped_linear_no_groups(%x: tensor<?x16xf32>, %w: tensor<0x8x16xbf16>, %g: tensor<?xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{weight has no groups}}
  %y = mnemo.grouped_linear %x, %w groups(%g) rows(64) : tensor<?x16xf32>, tensor<0x8x16xbf16>, tensor<?xi32> -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
