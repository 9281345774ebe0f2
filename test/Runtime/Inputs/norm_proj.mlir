// Multi-output models of the runtime tests (compiled_models.py has their
// numpy references). @norm_proj takes x of shape [?, ?, 8] (batch and
// sequence dynamic) and a per-feature scale, and returns two outputs of
// different ranks:
//   proj   [?, ?, 32] = linear(rms_norm(x, scale)) with a 32x8 weight
//                       (1 KiB: outlined into the weights segment) holding
//                       w[o][i] = ((7 (8 o + i)) mod 17 - 8) / 16;
//   scaled [?, 8]     = x * scale, flattened over batch and sequence
//                       (elementwise, no reduction).
func.func @norm_proj(%x: tensor<?x?x8xf32> {mnemo.name = "x"},
                     %scale: tensor<8xf32> {mnemo.name = "scale"})
    -> (tensor<?x?x32xf32> {mnemo.name = "proj"},
        tensor<?x8xf32> {mnemo.name = "scaled"}) {
  %w = arith.constant dense<
    [[-0.5, -0.0625, 0.375, -0.25, 0.1875, -0.4375, 0.0, 0.4375],
     [-0.1875, 0.25, -0.375, 0.0625, 0.5, -0.125, 0.3125, -0.3125],
     [0.125, -0.5, -0.0625, 0.375, -0.25, 0.1875, -0.4375, 0.0],
     [0.4375, -0.1875, 0.25, -0.375, 0.0625, 0.5, -0.125, 0.3125],
     [-0.3125, 0.125, -0.5, -0.0625, 0.375, -0.25, 0.1875, -0.4375],
     [0.0, 0.4375, -0.1875, 0.25, -0.375, 0.0625, 0.5, -0.125],
     [0.3125, -0.3125, 0.125, -0.5, -0.0625, 0.375, -0.25, 0.1875],
     [-0.4375, 0.0, 0.4375, -0.1875, 0.25, -0.375, 0.0625, 0.5],
     [-0.125, 0.3125, -0.3125, 0.125, -0.5, -0.0625, 0.375, -0.25],
     [0.1875, -0.4375, 0.0, 0.4375, -0.1875, 0.25, -0.375, 0.0625],
     [0.5, -0.125, 0.3125, -0.3125, 0.125, -0.5, -0.0625, 0.375],
     [-0.25, 0.1875, -0.4375, 0.0, 0.4375, -0.1875, 0.25, -0.375],
     [0.0625, 0.5, -0.125, 0.3125, -0.3125, 0.125, -0.5, -0.0625],
     [0.375, -0.25, 0.1875, -0.4375, 0.0, 0.4375, -0.1875, 0.25],
     [-0.375, 0.0625, 0.5, -0.125, 0.3125, -0.3125, 0.125, -0.5],
     [-0.0625, 0.375, -0.25, 0.1875, -0.4375, 0.0, 0.4375, -0.1875],
     [0.25, -0.375, 0.0625, 0.5, -0.125, 0.3125, -0.3125, 0.125],
     [-0.5, -0.0625, 0.375, -0.25, 0.1875, -0.4375, 0.0, 0.4375],
     [-0.1875, 0.25, -0.375, 0.0625, 0.5, -0.125, 0.3125, -0.3125],
     [0.125, -0.5, -0.0625, 0.375, -0.25, 0.1875, -0.4375, 0.0],
     [0.4375, -0.1875, 0.25, -0.375, 0.0625, 0.5, -0.125, 0.3125],
     [-0.3125, 0.125, -0.5, -0.0625, 0.375, -0.25, 0.1875, -0.4375],
     [0.0, 0.4375, -0.1875, 0.25, -0.375, 0.0625, 0.5, -0.125],
     [0.3125, -0.3125, 0.125, -0.5, -0.0625, 0.375, -0.25, 0.1875],
     [-0.4375, 0.0, 0.4375, -0.1875, 0.25, -0.375, 0.0625, 0.5],
     [-0.125, 0.3125, -0.3125, 0.125, -0.5, -0.0625, 0.375, -0.25],
     [0.1875, -0.4375, 0.0, 0.4375, -0.1875, 0.25, -0.375, 0.0625],
     [0.5, -0.125, 0.3125, -0.3125, 0.125, -0.5, -0.0625, 0.375],
     [-0.25, 0.1875, -0.4375, 0.0, 0.4375, -0.1875, 0.25, -0.375],
     [0.0625, 0.5, -0.125, 0.3125, -0.3125, 0.125, -0.5, -0.0625],
     [0.375, -0.25, 0.1875, -0.4375, 0.0, 0.4375, -0.1875, 0.25],
     [-0.375, 0.0625, 0.5, -0.125, 0.3125, -0.3125, 0.125, -0.5]]> : tensor<32x8xf32>
  %n = mnemo.rms_norm %x, %scale eps(1.000000e-05) : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %proj = mnemo.linear %n, %w layout(out_in) : tensor<?x?x8xf32>, tensor<32x8xf32> -> tensor<?x?x32xf32>
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %flat, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%rows) : tensor<?x8xf32>
  %scaled = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%flat, %scale : tensor<?x8xf32>, tensor<8xf32>)
      outs(%init : tensor<?x8xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  return %proj, %scaled : tensor<?x?x32xf32>, tensor<?x8xf32>
}

// @twice: y = x + x returned as both outputs, which share one buffer.
func.func @twice(%x: tensor<?x8xf32> {mnemo.name = "x"})
    -> (tensor<?x8xf32> {mnemo.name = "a"}, tensor<?x8xf32> {mnemo.name = "b"}) {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x8xf32>
  %init = tensor.empty(%rows) : tensor<?x8xf32>
  %y = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y, %y : tensor<?x8xf32>, tensor<?x8xf32>
}
