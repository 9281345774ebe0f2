// One step of an FP8 paged KV cache: the new tokens' keys and values
// quantized into E4M3 pools of 4-token pages with a scale per token and
// head, then causal attention over them. The pools travel as bytes (i8),
// which the step bit-casts to f8E4M3FN and back; they and their scales are
// returned for the next step and for the check of every byte.
func.func @step(%q: tensor<?x4x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>,
                %kbytes: tensor<10x2x4x32xi8>, %kscales: tensor<10x2x4xf32>,
                %vbytes: tensor<10x2x4x32xi8>, %vscales: tensor<10x2x4xf32>,
                %table: tensor<?x?xi32>, %pos: tensor<?x?xi64>, %lens: tensor<?xi64>)
    -> (tensor<?x4x?x32xf32>, tensor<10x2x4x32xi8>, tensor<10x2x4xf32>,
        tensor<10x2x4x32xi8>, tensor<10x2x4xf32>) {
  %kpool_init = tensor.empty() : tensor<10x2x4x32xf8E4M3FN>
  %kpool = linalg.map ins(%kbytes : tensor<10x2x4x32xi8>) outs(%kpool_init : tensor<10x2x4x32xf8E4M3FN>)
      (%x: i8, %unused: f8E4M3FN) {
        %y = arith.bitcast %x : i8 to f8E4M3FN
        linalg.yield %y : f8E4M3FN
      }
  %vpool_init = tensor.empty() : tensor<10x2x4x32xf8E4M3FN>
  %vpool = linalg.map ins(%vbytes : tensor<10x2x4x32xi8>) outs(%vpool_init : tensor<10x2x4x32xf8E4M3FN>)
      (%x: i8, %unused: f8E4M3FN) {
        %y = arith.bitcast %x : i8 to f8E4M3FN
        linalg.yield %y : f8E4M3FN
      }
  %kp, %ks = mnemo.kv_cache_write %k into %kpool scales %kscales at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xf8E4M3FN>, tensor<?x?xi64>, tensor<?x?xi32>, tensor<10x2x4xf32>
      -> tensor<10x2x4x32xf8E4M3FN>, tensor<10x2x4xf32>
  %vp, %vs = mnemo.kv_cache_write %v into %vpool scales %vscales at %pos table %table
      : tensor<?x2x?x32xf32>, tensor<10x2x4x32xf8E4M3FN>, tensor<?x?xi64>, tensor<?x?xi32>, tensor<10x2x4xf32>
      -> tensor<10x2x4x32xf8E4M3FN>, tensor<10x2x4xf32>
  %o = mnemo.paged_attention %q, %kp, %vp scales(%ks, %vs : tensor<10x2x4xf32>, tensor<10x2x4xf32>)
      table %table lengths %lens positions %pos causal
      : tensor<?x4x?x32xf32>, tensor<10x2x4x32xf8E4M3FN>, tensor<10x2x4x32xf8E4M3FN>, tensor<?x?xi32>, tensor<?xi64>, tensor<?x?xi64> -> tensor<?x4x?x32xf32>
  %kout_init = tensor.empty() : tensor<10x2x4x32xi8>
  %kout = linalg.map ins(%kp : tensor<10x2x4x32xf8E4M3FN>) outs(%kout_init : tensor<10x2x4x32xi8>)
      (%x: f8E4M3FN, %unused: i8) {
        %y = arith.bitcast %x : f8E4M3FN to i8
        linalg.yield %y : i8
      }
  %vout_init = tensor.empty() : tensor<10x2x4x32xi8>
  %vout = linalg.map ins(%vp : tensor<10x2x4x32xf8E4M3FN>) outs(%vout_init : tensor<10x2x4x32xi8>)
      (%x: f8E4M3FN, %unused: i8) {
        %y = arith.bitcast %x : f8E4M3FN to i8
        linalg.yield %y : i8
      }
  return %o, %kout, %ks, %vout, %vs : tensor<?x4x?x32xf32>, tensor<10x2x4x32xi8>, tensor<10x2x4xf32>, tensor<10x2x4x32xi8>, tensor<10x2x4xf32>
}
