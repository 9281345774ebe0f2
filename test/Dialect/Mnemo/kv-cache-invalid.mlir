// RUN: mnemo-opt %s --split-input-file --verify-diagnostics

// One case per diagnostic of the paged KV cache ops' verifiers.

func.func @bad_pool_type(%k: tensor<1x2x3x32xf32>, %pool: tensor<10x2x4x32xi8>,
                         %pos: tensor<1x3xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x4x32xi8> {
  // expected-error @below {{'mnemo.kv_cache_write' op operand #1 must be ranked tensor of floating-point values}}
  %r = mnemo.kv_cache_write %k into %pool at %pos table %t
      : tensor<1x2x3x32xf32>, tensor<10x2x4x32xi8>, tensor<1x3xi64>, tensor<1x4xi32> -> tensor<10x2x4x32xi8>
  return %r : tensor<10x2x4x32xi8>
}

// -----

func.func @bad_heads(%k: tensor<1x3x3x32xf32>, %pool: tensor<10x2x4x32xbf16>,
                     %pos: tensor<1x3xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x4x32xbf16> {
  // expected-error @below {{new values heads (3) must match pool heads (2)}}
  %r = mnemo.kv_cache_write %k into %pool at %pos table %t
      : tensor<1x3x3x32xf32>, tensor<10x2x4x32xbf16>, tensor<1x3xi64>, tensor<1x4xi32> -> tensor<10x2x4x32xbf16>
  return %r : tensor<10x2x4x32xbf16>
}

// -----

func.func @bad_positions(%k: tensor<1x2x3x32xf32>, %pool: tensor<10x2x4x32xbf16>,
                         %pos: tensor<1x5xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x4x32xbf16> {
  // expected-error @below {{positions length (5) must match new values length (3)}}
  %r = mnemo.kv_cache_write %k into %pool at %pos table %t
      : tensor<1x2x3x32xf32>, tensor<10x2x4x32xbf16>, tensor<1x5xi64>, tensor<1x4xi32> -> tensor<10x2x4x32xbf16>
  return %r : tensor<10x2x4x32xbf16>
}

// -----

func.func @dynamic_page(%k: tensor<1x2x3x32xf32>, %pool: tensor<10x2x?x32xbf16>,
                        %pos: tensor<1x3xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x?x32xbf16> {
  // expected-error @below {{pool page size must be static}}
  %r = mnemo.kv_cache_write %k into %pool at %pos table %t
      : tensor<1x2x3x32xf32>, tensor<10x2x?x32xbf16>, tensor<1x3xi64>, tensor<1x4xi32> -> tensor<10x2x?x32xbf16>
  return %r : tensor<10x2x?x32xbf16>
}

// -----

func.func @bad_group(%q: tensor<1x3x1x32xf32>, %p: tensor<10x2x4x32xbf16>, %t: tensor<1x4xi32>,
                     %l: tensor<1xi64>, %pos: tensor<1x1xi64>) -> tensor<1x3x1x32xf32> {
  // expected-error @below {{query heads (3) must be a multiple of key/value heads (2)}}
  %o = mnemo.paged_attention %q, %p, %p table %t lengths %l positions %pos
      : tensor<1x3x1x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<1x4xi32>, tensor<1xi64>, tensor<1x1xi64> -> tensor<1x3x1x32xf32>
  return %o : tensor<1x3x1x32xf32>
}

// -----

func.func @bad_table_batch(%q: tensor<2x4x1x32xf32>, %p: tensor<10x2x4x32xbf16>, %t: tensor<3x4xi32>,
                           %l: tensor<2xi64>, %pos: tensor<2x1xi64>) -> tensor<2x4x1x32xf32> {
  // expected-error @below {{block table batch (3) must match query batch (2)}}
  %o = mnemo.paged_attention %q, %p, %p table %t lengths %l positions %pos
      : tensor<2x4x1x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<3x4xi32>, tensor<2xi64>, tensor<2x1xi64> -> tensor<2x4x1x32xf32>
  return %o : tensor<2x4x1x32xf32>
}

// -----

func.func @bad_window(%q: tensor<1x4x1x32xf32>, %p: tensor<10x2x4x32xbf16>, %t: tensor<1x4xi32>,
                      %l: tensor<1xi64>, %pos: tensor<1x1xi64>) -> tensor<1x4x1x32xf32> {
  // expected-error @below {{window must be positive, got 0}}
  %o = mnemo.paged_attention %q, %p, %p table %t lengths %l positions %pos window(0)
      : tensor<1x4x1x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<1x4xi32>, tensor<1xi64>, tensor<1x1xi64> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

func.func @fp8_without_scales(%k: tensor<1x2x3x32xf32>, %pool: tensor<10x2x4x32xf8E4M3FN>,
                              %pos: tensor<1x3xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x4x32xf8E4M3FN> {
  // expected-error @below {{pool holds f8E4M3FN and needs its scales}}
  %r = mnemo.kv_cache_write %k into %pool at %pos table %t
      : tensor<1x2x3x32xf32>, tensor<10x2x4x32xf8E4M3FN>, tensor<1x3xi64>, tensor<1x4xi32> -> tensor<10x2x4x32xf8E4M3FN>
  return %r : tensor<10x2x4x32xf8E4M3FN>
}

// -----

func.func @scales_of_bf16(%k: tensor<1x2x3x32xf32>, %pool: tensor<10x2x4x32xbf16>, %s: tensor<10x2x4xf32>,
                          %pos: tensor<1x3xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x4x32xbf16> {
  // expected-error @below {{pool is not FP8 and takes no scales}}
  %r, %rs = mnemo.kv_cache_write %k into %pool scales %s at %pos table %t
      : tensor<1x2x3x32xf32>, tensor<10x2x4x32xbf16>, tensor<1x3xi64>, tensor<1x4xi32>, tensor<10x2x4xf32>
      -> tensor<10x2x4x32xbf16>, tensor<10x2x4xf32>
  return %r : tensor<10x2x4x32xbf16>
}

// -----

func.func @bad_scales(%k: tensor<1x2x3x32xf32>, %pool: tensor<10x2x4x32xf8E4M3FN>, %s: tensor<10x2x8xf32>,
                      %pos: tensor<1x3xi64>, %t: tensor<1x4xi32>) -> tensor<10x2x4x32xf8E4M3FN> {
  // expected-error @below {{pool scales (8) must match pool [Pages, Hkv, P] (4)}}
  %r, %rs = mnemo.kv_cache_write %k into %pool scales %s at %pos table %t
      : tensor<1x2x3x32xf32>, tensor<10x2x4x32xf8E4M3FN>, tensor<1x3xi64>, tensor<1x4xi32>, tensor<10x2x8xf32>
      -> tensor<10x2x4x32xf8E4M3FN>, tensor<10x2x8xf32>
  return %r : tensor<10x2x4x32xf8E4M3FN>
}

// -----

func.func @paged_fp8_without_scales(%q: tensor<1x4x1x32xf32>, %k: tensor<10x2x4x32xf8E4M3FN>,
                                    %v: tensor<10x2x4x32xf8E4M3FN>, %t: tensor<1x4xi32>,
                                    %l: tensor<1xi64>, %p: tensor<1x1xi64>) -> tensor<1x4x1x32xf32> {
  // expected-error @below {{key pool holds f8E4M3FN and needs its scales}}
  %o = mnemo.paged_attention %q, %k, %v table %t lengths %l positions %p causal
      : tensor<1x4x1x32xf32>, tensor<10x2x4x32xf8E4M3FN>, tensor<10x2x4x32xf8E4M3FN>, tensor<1x4xi32>, tensor<1xi64>, tensor<1x1xi64> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

func.func @selected_causal(%q: tensor<1x4x1x32xf32>, %p: tensor<10x2x4x32xbf16>, %t: tensor<1x4xi32>,
                           %l: tensor<1xi64>, %pos: tensor<1x1xi64>, %i: tensor<1x1x8xi32>) -> tensor<1x4x1x32xf32> {
  // expected-error @below {{takes no causal, window, softcap, sink or mask with indices: the selection is the only mask}}
  %o = mnemo.paged_attention %q, %p, %p table %t lengths %l positions %pos causal indices(%i : tensor<1x1x8xi32>)
      : tensor<1x4x1x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<1x4xi32>, tensor<1xi64>, tensor<1x1xi64> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

func.func @selected_length(%q: tensor<1x4x2x32xf32>, %p: tensor<10x2x4x32xbf16>, %t: tensor<1x4xi32>,
                           %l: tensor<1xi64>, %pos: tensor<1x2xi64>, %i: tensor<1x3x8xi32>) -> tensor<1x4x2x32xf32> {
  // expected-error @below {{indices length}}
  %o = mnemo.paged_attention %q, %p, %p table %t lengths %l positions %pos indices(%i : tensor<1x3x8xi32>)
      : tensor<1x4x2x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<1x4xi32>, tensor<1xi64>, tensor<1x2xi64> -> tensor<1x4x2x32xf32>
  return %o : tensor<1x4x2x32xf32>
}

// -----

func.func @paged_mask_keys(%q: tensor<1x4x1x32xf32>, %p: tensor<10x2x4x32xbf16>, %t: tensor<1x4xi32>,
                           %l: tensor<1xi64>, %pos: tensor<1x1xi64>, %m: tensor<1x1x1x17xf32>) -> tensor<1x4x1x32xf32> {
  // expected-error @below {{mask dimension 3 (17) must be 1 or match 16 of [B, Hq, Sq, MaxPages * P]}}
  %o = mnemo.paged_attention %q, %p, %p table %t lengths %l positions %pos mask(%m : tensor<1x1x1x17xf32>)
      : tensor<1x4x1x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<1x4xi32>, tensor<1xi64>, tensor<1x1xi64> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

func.func @gather_heads(%p: tensor<10x2x4x32xbf16>, %t: tensor<3x4xi32>, %l: tensor<3xi64>,
                        %n: index) -> tensor<3x4x?x32xf32> {
  // expected-error @below {{result heads (4) must match pool heads (2)}}
  %g = mnemo.kv_cache_gather %p table %t lengths %l tokens %n
      : tensor<10x2x4x32xbf16>, tensor<3x4xi32>, tensor<3xi64> -> tensor<3x4x?x32xf32>
  return %g : tensor<3x4x?x32xf32>
}

// -----

func.func @gather_lengths(%p: tensor<10x2x4x32xbf16>, %t: tensor<3x4xi32>, %l: tensor<2xi64>,
                          %n: index) -> tensor<3x2x?x32xf32> {
  // expected-error @below {{lengths batch (2) must match result batch (3)}}
  %g = mnemo.kv_cache_gather %p table %t lengths %l tokens %n
      : tensor<10x2x4x32xbf16>, tensor<3x4xi32>, tensor<2xi64> -> tensor<3x2x?x32xf32>
  return %g : tensor<3x2x?x32xf32>
}

// -----

func.func @gather_fp8_without_scales(%p: tensor<10x2x4x32xf8E4M3FN>, %t: tensor<3x4xi32>,
                                     %l: tensor<3xi64>, %n: index) -> tensor<3x2x?x32xf32> {
  // expected-error @below {{pool holds f8E4M3FN and needs its scales}}
  %g = mnemo.kv_cache_gather %p table %t lengths %l tokens %n
      : tensor<10x2x4x32xf8E4M3FN>, tensor<3x4xi32>, tensor<3xi64> -> tensor<3x2x?x32xf32>
  return %g : tensor<3x2x?x32xf32>
}
