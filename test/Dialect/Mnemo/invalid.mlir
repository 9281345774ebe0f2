// RUN: mnemo-opt %s --split-input-file --verify-diagnostics

// One case per diagnostic of the mnemo verifiers and attribute parser.
// Generated cases are kept flat on purpose: each is read on its own.

// Checks that query rank is checked.
func.func @query_rank_is_checked(%q: tensor<4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{expects query of rank 4 [B, Hq, Sq, D], got rank 3}}
  %o = mnemo.attention %q, %k, %v : tensor<4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that key rank is checked.
func.func @key_rank_is_checked(%q: tensor<1x4x8x32xf32>, %k: tensor<2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{expects key of rank 4 [B, Hkv, Skv, D], got rank 3}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that value rank is checked.
func.func @value_rank_is_checked(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{expects value of rank 4 [B, Hkv, Skv, Dv], got rank 3}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that result rank is checked.
func.func @result_rank_is_checked(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<4x8x32xf32> {
  // expected-error @+1 {{expects result of rank 4 [B, Hq, Sq, Dv], got rank 3}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<4x8x32xf32>
  return %o : tensor<4x8x32xf32>
}

// -----

// Checks that query heads are static.
func.func @query_heads_are_static(%q: tensor<1x?x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x?x8x32xf32> {
  // expected-error @+1 {{query head count must be static}}
  %o = mnemo.attention %q, %k, %v : tensor<1x?x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x?x8x32xf32>
  return %o : tensor<1x?x8x32xf32>
}

// -----

// Checks that kv heads are static.
func.func @kv_heads_are_static(%q: tensor<1x4x8x32xf32>, %k: tensor<1x?x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{key/value head count must be static}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x?x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that query head dim is static.
func.func @query_head_dim_is_static(%q: tensor<1x4x8x?xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{query head dim must be static}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x?xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that value head dim is static.
func.func @value_head_dim_is_static(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x?xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{value head dim must be static}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x?xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that heads divide.
func.func @heads_divide(%q: tensor<1x6x8x32xf32>, %k: tensor<1x4x8x32xf32>, %v: tensor<1x4x8x32xf32>) -> tensor<1x6x8x32xf32> {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x6x8x32xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8x32xf32> -> tensor<1x6x8x32xf32>
  return %o : tensor<1x6x8x32xf32>
}

// -----

// Checks that key batch matches.
func.func @key_batch_matches(%q: tensor<1x4x8x32xf32>, %k: tensor<2x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{key batch (2) must match query batch (1)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<2x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that value batch matches.
func.func @value_batch_matches(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<3x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{value batch (3) must match query batch (1)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<3x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that value heads match key heads.
func.func @value_heads_match_key_heads(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x1x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{value heads (1) must match key heads (2)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x1x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that head dims match.
func.func @head_dims_match(%q: tensor<1x4x8x64xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{key head dim (32) must match query head dim (64)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that kv lengths match.
func.func @kv_lengths_match(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x7x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{value length (7) must match key length (8)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x7x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that result element type matches.
func.func @result_element_type_matches(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf16> {
  // expected-error @+1 {{result element type 'f16' must match the query's 'f32'}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf16>
  return %o : tensor<1x4x8x32xf16>
}

// -----

// Checks that result batch matches.
func.func @result_batch_matches(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<2x4x8x32xf32> {
  // expected-error @+1 {{result batch (2) must match query batch (1)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<2x4x8x32xf32>
  return %o : tensor<2x4x8x32xf32>
}

// -----

// Checks that result heads match.
func.func @result_heads_match(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32> {
  // expected-error @+1 {{result heads (2) must match query heads (4)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x2x8x32xf32>
  return %o : tensor<1x2x8x32xf32>
}

// -----

// Checks that result length matches.
func.func @result_length_matches(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x9x32xf32> {
  // expected-error @+1 {{result length (9) must match query length (8)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x9x32xf32>
  return %o : tensor<1x4x9x32xf32>
}

// -----

// Checks that result head dim is value head dim.
func.func @result_head_dim_is_value_head_dim(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{result head dim (32) must match value head dim (16)}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that scale is non-zero.
func.func @scale_is_non_zero(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{scale must be finite and non-zero, got 0}}
  %o = mnemo.attention %q, %k, %v scale(0.0) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that softcap is positive.
func.func @softcap_is_positive(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{softcap must be positive, got -1}}
  %o = mnemo.attention %q, %k, %v softcap(-1.0) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that window is positive.
func.func @window_is_positive(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{window must be positive, got 0}}
  %o = mnemo.attention %q, %k, %v window(0) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that mask rank is checked.
func.func @mask_rank_is_checked(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>, %m: tensor<8xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{expects a mask of rank 2 to 4 broadcastable to [B, Hq, Sq, Skv], got rank 1}}
  %o = mnemo.attention %q, %k, %v mask(%m : tensor<8xf32>) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that mask broadcasts.
func.func @mask_broadcasts(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>, %m: tensor<1x3x8x8xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{mask dimension 1 (3) must be 1 or match 4 of [B, Hq, Sq, Skv]}}
  %o = mnemo.attention %q, %k, %v mask(%m : tensor<1x3x8x8xf32>) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that mask length matches.
func.func @mask_length_matches(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>, %m: tensor<8x5xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{mask dimension 1 (5) must be 1 or match 8 of [B, Hq, Sq, Skv]}}
  %o = mnemo.attention %q, %k, %v mask(%m : tensor<8x5xf32>) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that sink has one logit per head.
func.func @sink_has_one_logit_per_head(%q: tensor<1x4x8x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>, %s: tensor<2xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{expects sink logits of shape [4] (one per query head), got 'tensor<2xf32>'}}
  %o = mnemo.attention %q, %k, %v sink(%s : tensor<2xf32>) : tensor<1x4x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that operands are float tensors.
func.func @operands_are_float_tensors(%q: tensor<1x4x8x32xi32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> tensor<1x4x8x32xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of floating-point values}}
  %o = mnemo.attention %q, %k, %v : tensor<1x4x8x32xi32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32> -> tensor<1x4x8x32xf32>
  return %o : tensor<1x4x8x32xf32>
}

// -----

// Checks that rope input rank is checked.
func.func @rope_input_rank_is_checked(%x: tensor<4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<4x6x64xf32> {
  // expected-error @+1 {{expects input of rank 4 [B, H, S, D], got rank 3}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<4x6x64xf32>, tensor<2x6xi64> -> tensor<4x6x64xf32>
  return %y : tensor<4x6x64xf32>
}

// -----

// Checks that rope head dim is static.
func.func @rope_head_dim_is_static(%x: tensor<2x4x6x?xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x?xf32> {
  // expected-error @+1 {{head dim must be static}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<2x4x6x?xf32>, tensor<2x6xi64> -> tensor<2x4x6x?xf32>
  return %y : tensor<2x4x6x?xf32>
}

// -----

// Checks that rope result type matches.
func.func @rope_result_type_matches(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf16> {
  // expected-error @+1 {{result type 'tensor<2x4x6x64xf16>' must match the input type 'tensor<2x4x6x64xf32>'}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf16>
  return %y : tensor<2x4x6x64xf16>
}

// -----

// Checks that rope positions rank is checked.
func.func @rope_positions_rank_is_checked(%x: tensor<2x4x6x64xf32>, %p: tensor<2x1x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{expects positions of shape [B, S], [1, S] or [S], got rank 3}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<2x4x6x64xf32>, tensor<2x1x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope positions length matches.
func.func @rope_positions_length_matches(%x: tensor<2x4x6x64xf32>, %p: tensor<2x5xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{positions length (5) must match input length (6)}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<2x4x6x64xf32>, tensor<2x5xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope positions batch matches.
func.func @rope_positions_batch_matches(%x: tensor<2x4x6x64xf32>, %p: tensor<3x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{positions batch (3) must match input batch (2)}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<2x4x6x64xf32>, tensor<3x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope positions are integers.
func.func @rope_positions_are_integers(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xf32>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{operand #1 must be ranked tensor of signless integer values}}
  %y = mnemo.rope %x, %p theta(10000.0) : tensor<2x4x6x64xf32>, tensor<2x6xf32> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope theta is positive.
func.func @rope_theta_is_positive(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{theta must be positive, got 0}}
  %y = mnemo.rope %x, %p theta(0.0) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope rotary dim fits.
func.func @rope_rotary_dim_fits(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{rotary dim (80) must be in [2, 64]}}
  %y = mnemo.rope %x, %p theta(10000.0) rotary_dim(80) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope rotary dim is even.
func.func @rope_rotary_dim_is_even(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{rotary dim must be even, got 15}}
  %y = mnemo.rope %x, %p theta(10000.0) rotary_dim(15) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope dynamic needs rotary dim above 2.
func.func @rope_dynamic_needs_rotary_dim_above_2(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{dynamic rope scaling needs a rotary dim above 2, got 2}}
  %y = mnemo.rope %x, %p theta(10000.0) rotary_dim(2) scaling(<dynamic, factor = 2.0, original_max_position = 64>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that scaling kind is known.
func.func @scaling_kind_is_known(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{unknown rope scaling kind 'ntk' (expected none, linear, dynamic, yarn or llama3)}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<ntk, factor = 2.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that scaling parameters belong to the kind.
func.func @scaling_parameters_belong_to_the_kind(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{rope scaling parameter 'beta_fast' does not apply to 'linear' scaling}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<linear, factor = 2.0, beta_fast = 4.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that scaling parameters are not repeated.
func.func @scaling_parameters_are_not_repeated(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{duplicate rope scaling parameter 'factor'}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<linear, factor = 2.0, factor = 3.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that scaling factor is positive.
func.func @scaling_factor_is_positive(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{rope scaling factor must be positive, got 0}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<linear, factor = 0.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that dynamic needs the original context.
func.func @dynamic_needs_the_original_context(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{'dynamic' rope scaling needs a positive original_max_position}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<dynamic, factor = 2.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that llama3 frequency factors are ordered.
func.func @llama3_frequency_factors_are_ordered(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{llama3 rope scaling needs 0 < low_freq_factor < high_freq_factor, got 4 and 1}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<llama3, factor = 8.0, original_max_position = 8192, low_freq_factor = 4.0, high_freq_factor = 1.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that yarn betas are ordered.
func.func @yarn_betas_are_ordered(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{yarn rope scaling needs 0 < beta_slow < beta_fast, got 2 and 1}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<yarn, factor = 4.0, original_max_position = 4096, beta_fast = 1.0, beta_slow = 2.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that yarn attention factor is positive.
func.func @yarn_attention_factor_is_positive(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{yarn attention_factor must be positive, got 0}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<yarn, factor = 4.0, original_max_position = 4096, attention_factor = 0.0>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that yarn truncate is boolean.
func.func @yarn_truncate_is_boolean(%x: tensor<2x4x6x64xf32>, %p: tensor<2x6xi64>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{'truncate' must be true or false}}
  %y = mnemo.rope %x, %p theta(10000.0) scaling(<yarn, factor = 4.0, original_max_position = 4096, truncate = maybe>) : tensor<2x4x6x64xf32>, tensor<2x6xi64> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope_tables input rank is checked.
func.func @rope_tables_input_rank_is_checked(%x: tensor<4x6x64xf32>, %c: tensor<6x64xf32>) -> tensor<4x6x64xf32> {
  // expected-error @+1 {{expects input of rank 4 [B, H, S, D], got rank 3}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<4x6x64xf32>, tensor<6x64xf32> -> tensor<4x6x64xf32>
  return %y : tensor<4x6x64xf32>
}

// -----

// Checks that rope_tables table rank is checked.
func.func @rope_tables_table_rank_is_checked(%x: tensor<2x4x6x64xf32>, %c: tensor<2x1x6x64xf32>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{expects cos/sin tables of shape [B, S, r], [1, S, r] or [S, r], got rank 4}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<2x4x6x64xf32>, tensor<2x1x6x64xf32> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope_tables table length matches.
func.func @rope_tables_table_length_matches(%x: tensor<2x4x6x64xf32>, %c: tensor<1x7x64xf32>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{table length (7) must match input length (6)}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<2x4x6x64xf32>, tensor<1x7x64xf32> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope_tables table batch matches.
func.func @rope_tables_table_batch_matches(%x: tensor<2x4x6x64xf32>, %c: tensor<3x6x64xf32>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{table batch (3) must match input batch (2)}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<2x4x6x64xf32>, tensor<3x6x64xf32> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope_tables width is even.
func.func @rope_tables_width_is_even(%x: tensor<2x4x6x64xf32>, %c: tensor<6x15xf32>) -> tensor<2x4x6x64xf32> {
  // expected-error @+1 {{rotary width (15) must be even and in [2, 64]}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<2x4x6x64xf32>, tensor<6x15xf32> -> tensor<2x4x6x64xf32>
  return %y : tensor<2x4x6x64xf32>
}

// -----

// Checks that rope_tables width fits the head.
func.func @rope_tables_width_fits_the_head(%x: tensor<2x4x6x16xf32>, %c: tensor<6x32xf32>) -> tensor<2x4x6x16xf32> {
  // expected-error @+1 {{rotary width (32) must be even and in [2, 16]}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<2x4x6x16xf32>, tensor<6x32xf32> -> tensor<2x4x6x16xf32>
  return %y : tensor<2x4x6x16xf32>
}

// -----

// Checks that rope_tables width is static.
func.func @rope_tables_width_is_static(%x: tensor<2x4x6x16xf32>, %c: tensor<6x?xf32>) -> tensor<2x4x6x16xf32> {
  // expected-error @+1 {{rotary width must be static}}
  %y = mnemo.rope_tables %x, %c, %c : tensor<2x4x6x16xf32>, tensor<6x?xf32> -> tensor<2x4x6x16xf32>
  return %y : tensor<2x4x6x16xf32>
}

// -----

// Checks that rms_norm input has a rank.
func.func @rms_norm_input_has_a_rank(%x: tensor<f32>, %w: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{expects an input of rank >= 1}}
  %y = mnemo.rms_norm %x, %w eps(1.0e-5) : tensor<f32>, tensor<4xf32> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// Checks that rms_norm result type matches.
func.func @rms_norm_result_type_matches(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{result type 'tensor<4x2xf32>' must match the input type 'tensor<2x4xf32>'}}
  %y = mnemo.rms_norm %x, %w eps(1.0e-5) : tensor<2x4xf32>, tensor<4xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Checks that rms_norm weight is a vector.
func.func @rms_norm_weight_is_a_vector(%x: tensor<2x4xf32>, %w: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expects a weight of rank 1, got rank 2}}
  %y = mnemo.rms_norm %x, %w eps(1.0e-5) : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that rms_norm weight covers the last dim.
func.func @rms_norm_weight_covers_the_last_dim(%x: tensor<2x128xf32>, %w: tensor<64xf32>) -> tensor<2x128xf32> {
  // expected-error @+1 {{weight size (64) must match the normalized (last) dimension (128)}}
  %y = mnemo.rms_norm %x, %w eps(1.0e-5) : tensor<2x128xf32>, tensor<64xf32> -> tensor<2x128xf32>
  return %y : tensor<2x128xf32>
}

// -----

// Checks that rms_norm eps is non-negative.
func.func @rms_norm_eps_is_non_negative(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{eps must be finite and non-negative, got -1}}
  %y = mnemo.rms_norm %x, %w eps(-1.0) : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that swiglu types match (only the generic form can express it).
func.func @swiglu_types_match(%g: tensor<2x4xf32>, %u: tensor<2x5xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %y = "mnemo.swiglu"(%g, %u) : (tensor<2x4xf32>, tensor<2x5xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that linear input has a rank.
func.func @linear_input_has_a_rank(%x: tensor<f32>, %w: tensor<4x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{expects an input of rank >= 1}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<f32>, tensor<4x4xf32> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// Checks that linear weight is a matrix.
func.func @linear_weight_is_a_matrix(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expects a weight of rank 2, got rank 1}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that linear weight is static.
func.func @linear_weight_is_static(%x: tensor<2x4xf32>, %w: tensor<?x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight shape must be static}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<?x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that linear features match out_in.
func.func @linear_features_match_out_in(%x: tensor<2x4xf32>, %w: tensor<8x5xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{input features (4) must match the weight's in_features (5) for layout out_in}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<8x5xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Checks that linear features match in_out.
func.func @linear_features_match_in_out(%x: tensor<2x4xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input features (4) must match the weight's in_features (8) for layout out_in}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that linear result rank matches.
func.func @linear_result_rank_matches(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) -> tensor<1x2x8xf32> {
  // expected-error @+1 {{result rank (3) must match the input rank (2)}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<1x2x8xf32>
  return %y : tensor<1x2x8xf32>
}

// -----

// Checks that linear leading dims match.
func.func @linear_leading_dims_match(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{result dimension 0 (3) must match the input's (2)}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// Checks that linear result features.
func.func @linear_result_features(%x: tensor<2x4xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{result features (4) must match the weight's out_features (8)}}
  %y = mnemo.linear %x, %w layout(in_out) : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Checks that linear element type matches.
func.func @linear_element_type_matches(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{result element type 'f16' must match the input's 'f32'}}
  %y = mnemo.linear %x, %w layout(out_in) : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf16>
  return %y : tensor<2x8xf16>
}

// -----

// Checks that linear bias shape.
func.func @linear_bias_shape(%x: tensor<2x4xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{expects a bias of shape [8], got 'tensor<4xf32>'}}
  %y = mnemo.linear %x, %w layout(out_in) bias(%b : tensor<4xf32>) : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Checks that embedding table is a matrix.
func.func @embedding_table_is_a_matrix(%t: tensor<4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error @+1 {{expects a table of rank 2 [V, H], got rank 1}}
  %y = mnemo.embedding %t[%i] : tensor<4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----


// Checks that embedding result rank.
func.func @embedding_result_rank(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{result rank (1) must be the ids rank plus one (2)}}
  %y = mnemo.embedding %t[%i] : tensor<10x4xf32>, tensor<3xi64> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Checks that embedding result follows the ids.
func.func @embedding_result_follows_the_ids(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<5x4xf32> {
  // expected-error @+1 {{result dimension 0 (5) must match the ids' (3)}}
  %y = mnemo.embedding %t[%i] : tensor<10x4xf32>, tensor<3xi64> -> tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}

// -----

// Checks that embedding hidden size.
func.func @embedding_hidden_size(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x6xf32> {
  // expected-error @+1 {{result hidden size (6) must match the table's (4)}}
  %y = mnemo.embedding %t[%i] : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}
