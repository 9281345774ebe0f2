// One step of a paged KV cache: the new tokens' keys and values written
// into bf16 pools of 4-token pages, then causal attention of the new
// queries over each sequence's pages. Batch, new tokens and block-table
// width are dynamic; the pools are returned for the next step.
func.func @step(%q: tensor<?x4x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>,
                %kpool: tensor<10x2x4x32xbf16>, %vpool: tensor<10x2x4x32xbf16>,
                %table: tensor<?x?xi32>, %pos: tensor<?x?xi64>, %lens: tensor<?xi64>)
    -> (tensor<?x4x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>) {
  %kp = mnemo.kv_cache_write %k into %kpool at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xbf16>
  %vp = mnemo.kv_cache_write %v into %vpool at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<?x?xi64>, tensor<?x?xi32> -> tensor<10x2x4x32xbf16>
  %o = mnemo.paged_attention %q, %kp, %vp table %table lengths %lens positions %pos causal
      : tensor<?x4x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>, tensor<?x?xi32>, tensor<?xi64>, tensor<?x?xi64> -> tensor<?x4x?x32xf32>
  return %o, %kp, %vp : tensor<?x4x?x32xf32>, tensor<10x2x4x32xbf16>, tensor<10x2x4x32xbf16>
}
