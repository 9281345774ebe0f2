"""A chain of linear layers whose GEMM kernels differ only in their sizes.

  similar_linears.py model DIR [SIZES]   writes DIR/model.mlir and DIR/x.npy
  similar_linears.py check Y DIR [SIZES] compares Y with numpy, row by row

SIZES (comma-separated) replaces the default chain.

x [?, 45] -> 71 -> 37 -> 71 -> 53 columns, each a linear layer with a
constant weight (no size a multiple of any micro-tile), then a ReLU between
them, so that every layer's GEMM is a kernel of its own shapes.
"""
import sys

import numpy as np

SIZES = [45, 71, 37, 71, 53]
ROWS = 29


def weights():
    rng = np.random.default_rng(7)
    return [rng.uniform(-0.5, 0.5, (n, k)).astype(np.float32)
            for k, n in zip(SIZES, SIZES[1:])]


def dense(w):
    rows = ", ".join("[" + ", ".join(f"{v:.9e}" for v in r) + "]" for r in w)
    return f"dense<[{rows}]> : tensor<{w.shape[0]}x{w.shape[1]}xf32>"


def model(out):
    lines = [f"func.func @chain(%x: tensor<?x{SIZES[0]}xf32> {{mnemo.name = \"x\"}})"
             f" -> (tensor<?x{SIZES[-1]}xf32> {{mnemo.name = \"y\"}}) {{",
             "  %c0 = arith.constant 0 : index",
             f"  %m = tensor.dim %x, %c0 : tensor<?x{SIZES[0]}xf32>",
             "  %zero = arith.constant 0.0 : f32"]
    value = "%x"
    for i, w in enumerate(weights()):
        n, k = w.shape
        lines.append(f"  %w{i} = arith.constant {dense(w)}")
        lines.append(f"  %l{i} = mnemo.linear {value}, %w{i} layout(out_in) : "
                     f"tensor<?x{k}xf32>, tensor<{n}x{k}xf32> -> tensor<?x{n}xf32>")
        value = f"%l{i}"
        if i + 1 < len(SIZES) - 1:
            lines.append(f"  %e{i} = tensor.empty(%m) : tensor<?x{n}xf32>")
            lines.append(
                f"  %r{i} = linalg.generic {{indexing_maps = "
                f"[affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], "
                f"iterator_types = [\"parallel\", \"parallel\"]}} ins({value} : tensor<?x{n}xf32>) "
                f"outs(%e{i} : tensor<?x{n}xf32>) {{\n"
                f"  ^bb0(%a: f32, %b: f32):\n"
                f"    %v = arith.maximumf %a, %zero : f32\n"
                f"    linalg.yield %v : f32\n"
                f"  }} -> tensor<?x{n}xf32>")
            value = f"%r{i}"
    lines.append(f"  return {value} : tensor<?x{SIZES[-1]}xf32>")
    lines.append("}")
    with open(f"{out}/model.mlir", "w") as f:
        f.write("\n".join(lines) + "\n")
    x = np.random.default_rng(3).uniform(-1, 1, (ROWS, SIZES[0]))
    np.save(f"{out}/x.npy", x.astype(np.float32))


def check(y_path, out):
    x = np.load(f"{out}/x.npy").astype(np.float64)
    ws = weights()
    for i, w in enumerate(ws):
        x = x @ w.astype(np.float64).T
        if i + 1 < len(ws):
            x = np.maximum(x, 0)
    y = np.load(y_path)
    if y.shape != x.shape:
        print(f"shape {y.shape}, expected {x.shape}")
        return 1
    rows = np.abs(y - x).max(axis=1) / (np.abs(x).max(axis=1) + 1e-6)
    worst = int(rows.argmax())
    print(f"rows {len(rows)}, worst row {worst}: relative error {rows[worst]:.2e}:",
          "match" if rows[worst] < 1e-5 else "MISMATCH")
    return 0


if __name__ == "__main__":
    size_arg = sys.argv[3 if sys.argv[1] == "model" else 4:]
    if size_arg:
        SIZES[:] = [int(v) for v in size_arg[0].split(",")]
    if sys.argv[1] == "model":
        model(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
