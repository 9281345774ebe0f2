// A function named after a libc symbol (see entry-symbol-names.test).
func.func @step(%x: tensor<4xf32> {mnemo.name = "x"}) -> (tensor<4xf32> {mnemo.name = "y"}) {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
