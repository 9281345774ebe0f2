// RUN: mnemo-opt %s --split-input-file --verify-diagnostics

// One case per diagnostic of the mnemo.mla_attention verifier and its
// form parser.

// Checks the q nope rank rule.
func.func @q_nope_rank(%qn: tensor<4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expects q_nope of rank 4 [B, H, Sq, dn], got rank 3}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the q pe rank rule.
func.func @q_pe_rank(%qn: tensor<1x4x8x16xf32>, %qp: tensor<4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expects q_pe of rank 4 [B, H, Sq, dr], got rank 3}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the c kv rank rule.
func.func @c_kv_rank(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expects c_kv of rank 3 [B, Skv, r], got rank 4}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the k pe rank rule.
func.func @k_pe_rank(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expects k_pe of rank 3 [B, Skv, dr], got rank 4}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uk rank rule.
func.func @w_uk_rank(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<64x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expects w_uk of rank 3 [H, dn, r], got rank 2}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<64x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uv rank rule.
func.func @w_uv_rank(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<40x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expects w_uv of rank 3 [H, dv, r], got rank 2}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<40x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the result rank rule.
func.func @result_rank(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<4x8x10xf32> {
  // expected-error @+1 {{expects result of rank 4 [B, H, Sq, dv], got rank 3}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<4x8x10xf32>
  return %o : tensor<4x8x10xf32>
}

// -----

// Checks the head count static rule.
func.func @head_count_static(%qn: tensor<1x?x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{head count must be static}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x?x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the nope dim static rule.
func.func @nope_dim_static(%qn: tensor<1x4x8x?xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{nope head dim must be static}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x?xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the rope dim static rule.
func.func @rope_dim_static(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x?xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{rope head dim must be static}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x?xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the latent rank static rule.
func.func @latent_rank_static(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x?xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{latent rank must be static}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x?xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uk static rule.
func.func @w_uk_static(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<?x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uk shape must be static}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<?x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uv static rule.
func.func @w_uv_static(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x?x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uv shape must be static}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x?x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the q pe batch rule.
func.func @q_pe_batch(%qn: tensor<1x4x8x16xf32>, %qp: tensor<2x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{q_pe batch (2) must match q_nope batch (1)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the q pe heads rule.
func.func @q_pe_heads(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x2x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{q_pe heads (2) must match q_nope heads (4)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the q pe length rule.
func.func @q_pe_length(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x7x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{q_pe length (7) must match q_nope length (8)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x7x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the c kv batch rule.
func.func @c_kv_batch(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<2x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{c_kv batch (2) must match q_nope batch (1)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<2x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the k pe batch rule.
func.func @k_pe_batch(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<2x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{k_pe batch (2) must match q_nope batch (1)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<2x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the k pe length rule.
func.func @k_pe_length(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x9x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{k_pe length (9) must match c_kv length (8)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x9x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the k pe head dim rule.
func.func @k_pe_head_dim(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x6xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{k_pe head dim (6) must match q_pe head dim (8)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x6xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uk heads rule.
func.func @w_uk_heads(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<2x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uk heads (2) must match q_nope heads (4)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<2x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uk rows rule.
func.func @w_uk_rows(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x15x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uk rows (15) must match q_nope head dim (16)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x15x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uk columns rule.
func.func @w_uk_columns(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x11xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uk columns (11) must match c_kv rank (12)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x11xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uv heads rule.
func.func @w_uv_heads(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<3x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uv heads (3) must match q_nope heads (4)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<3x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the w uv columns rule.
func.func @w_uv_columns(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x13xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{w_uv columns (13) must match c_kv rank (12)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x13xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks the result element type rule.
func.func @result_element_type(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf16> {
  // expected-error @+1 {{result element type 'f16' must match q_nope's 'f32'}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf16>
  return %o : tensor<1x4x8x10xf16>
}

// -----

// Checks the result batch rule.
func.func @result_batch(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<2x4x8x10xf32> {
  // expected-error @+1 {{result batch (2) must match q_nope batch (1)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<2x4x8x10xf32>
  return %o : tensor<2x4x8x10xf32>
}

// -----

// Checks the result heads rule.
func.func @result_heads(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x2x8x10xf32> {
  // expected-error @+1 {{result heads (2) must match q_nope heads (4)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x2x8x10xf32>
  return %o : tensor<1x2x8x10xf32>
}

// -----

// Checks the result length rule.
func.func @result_length(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x9x10xf32> {
  // expected-error @+1 {{result length (9) must match q_nope length (8)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x9x10xf32>
  return %o : tensor<1x4x9x10xf32>
}

// -----

// Checks the result head dim rule.
func.func @result_head_dim(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x11xf32> {
  // expected-error @+1 {{result head dim (11) must match w_uv rows (10)}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv causal : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x11xf32>
  return %o : tensor<1x4x8x11xf32>
}

// -----

// Checks the scale rule.
func.func @scale(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{scale must be finite and non-zero, got 0.000000e+00}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv scale(0.0) : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}

// -----

// Checks that an unknown form is rejected by name.
func.func @unknown_form(%qn: tensor<1x4x8x16xf32>, %qp: tensor<1x4x8x8xf32>, %c: tensor<1x8x12xf32>, %kp: tensor<1x8x8xf32>, %wk: tensor<4x16x12xf32>, %wv: tensor<4x10x12xf32>) -> tensor<1x4x8x10xf32> {
  // expected-error @+1 {{expected MLA form expanded or absorbed, got 'latent'}}
  %o = mnemo.mla_attention %qn, %qp, %c, %kp, %wk, %wv form(latent) : tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x8x12xf32>, tensor<1x8x8xf32>, tensor<4x16x12xf32>, tensor<4x10x12xf32> -> tensor<1x4x8x10xf32>
  return %o : tensor<1x4x8x10xf32>
}
