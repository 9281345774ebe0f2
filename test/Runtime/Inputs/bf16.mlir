// y = x + x in bf16, for mnemo-run's bf16 handling (.npy has no bf16: the
// input is read from float32, the output written as float32).
func.func @twice(%x: tensor<2x3xbf16> {mnemo.name = "x"}) -> (tensor<2x3xbf16> {mnemo.name = "y"}) {
  %init = tensor.empty() : tensor<2x3xbf16>
  %y = linalg.add ins(%x, %x : tensor<2x3xbf16>, tensor<2x3xbf16>) outs(%init : tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}
