func.func @packed(%x: tensor<37x45xf32>) -> tensor<37x71xf32> {
  %w = arith.constant dense<0.5> : tensor<71x45xf32>
  %y = mnemo.linear %x, %w layout(out_in) : tensor<37x45xf32>, tensor<71x45xf32> -> tensor<37x71xf32>
  return %y : tensor<37x71xf32>
}
