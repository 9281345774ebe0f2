// Causal GQA attention with a softcap: softcap * tanh(s / softcap) on the
// scores and exp in the softmax. The CPU backend expands both into
// polynomials, so the code object needs nothing from libm.
func.func @attend(%q: tensor<1x4x?x16xf32> {mnemo.name = "q"},
                  %k: tensor<1x2x?x16xf32> {mnemo.name = "k"},
                  %v: tensor<1x2x?x16xf32> {mnemo.name = "v"})
    -> (tensor<1x4x?x16xf32> {mnemo.name = "out"}) {
  %o = mnemo.attention %q, %k, %v causal softcap(5.000000e+00) : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
