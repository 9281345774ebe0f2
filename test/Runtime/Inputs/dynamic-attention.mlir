// A bf16 GQA attention (8 query heads over 2 KV heads, D 64) whose batch
// and sequence lengths are dynamic.
func.func @attend(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                  %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = mnemo.attention %q, %k, %v causal : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}
