# REQUIRES: aarch64-runtime
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t mnemoc %aarch64_bin/mnemo-run %aarch64_run | FileCheck %s
# CHECK-NOT: FAIL
# CHECK: asm: ld1rw found
# CHECK: asm: fmla found
# CHECK: asm: cntw found
# CHECK: asm: cmpgt found
# CHECK: asm: ld1b found
# CHECK: asm: lsr found
# CHECK: sve gemm: 9 of 9 runs passed
"""The register-tiled GEMM in scalable vectors (--target=aarch64-sve), one
artifact run under qemu at 128, 256 and 512 bits, against numpy row by row:
a constant weight with a bias, a constant bf16 weight 300 columns wide
(several column tiles, the last panel partial at every vector length),
int8 weights decoded in the loop (signed, and unsigned with zero points;
groups of 8 along K), 4-bit codes two a byte along K (int4 signed, int4
with zero points, nf4; K odd, so the last byte holds one code), and weights
given at run time in both layouts; 1, 26 and 77 rows (no multiple
of the micro-tile's 12), K = 29 and N = 37 (no multiple of any vector)."""

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "Numerics"))
from quant_reference import NF4  # noqa: E402

out_dir, mnemoc, runner = sys.argv[1:4]
qemu = sys.argv[4:]
rng = np.random.default_rng(7)
K, N, WIDE = 29, 37, 300


def bf16(a):
    """`a` rounded down to bf16's precision (exactly representable)."""
    bits = a.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def dense(a, element):
    """A dense attribute of `a`'s bits (bf16: the high halves)."""
    a = np.ascontiguousarray(a, np.float32)
    if element == "bf16":
        a = (a.view(np.uint32) >> 16).astype("<u2")
    shape = "x".join(str(d) for d in a.shape)
    return f'dense<"0x{a.tobytes().hex().upper()}"> : tensor<{shape}x{element}>'


c1 = rng.standard_normal((N, K)).astype(np.float32)
b1 = rng.standard_normal(N).astype(np.float32)
c2 = bf16(rng.standard_normal((WIDE, K)))
GROUP = 8
GROUPS = -(-K // GROUP)
codes_s = rng.integers(-128, 128, (N, K)).astype(np.int8)
scales_s = (0.01 * rng.random((N, GROUPS)) + 0.001).astype(np.float32)
codes_u = rng.integers(0, 256, (N, K)).astype(np.uint8)
scales_u = (0.01 * rng.random((N, GROUPS)) + 0.001).astype(np.float32)
zeros_u = rng.integers(100, 156, (N, GROUPS)).astype(np.uint8)


HALF = -(-K // 2)
nib_s = rng.integers(0, 256, (N, HALF)).astype(np.uint8)
nib_u = rng.integers(0, 256, (N, HALF)).astype(np.uint8)
nib_n = rng.integers(0, 256, (N, HALF)).astype(np.uint8)
zeros_4 = rng.integers(5, 11, (N, GROUPS)).astype(np.uint8)


def nibbles(packed, signed):
    """The 4-bit codes [N, K] of bytes holding columns 2j (low) and 2j + 1."""
    both = np.stack([packed & 15, packed >> 4], axis=-1).reshape(N, -1)[:, :K]
    both = both.astype(np.int64)
    return np.where(both > 7, both - 16, both) if signed else both


def dequantized(codes, scales, zeros=None):
    group = np.arange(K) // GROUP
    q = codes.astype(np.float64)
    if zeros is not None:
        q = q - zeros[:, group].astype(np.float64)
    return q * scales[:, group].astype(np.float64)


def dense_bytes(a, shape_type):
    return f'dense<"0x{np.ascontiguousarray(a).tobytes().hex().upper()}"> : {shape_type}'


def quantized_linear(i, codes, fmt, scales, zeros=None):
    """`%y<i>` = x times the weight `mnemo.dequantize` makes of `codes`
    ([N, K] bytes, or [N, K / 2] for 4-bit formats), the scales named
    `scales` and the zero points `zeros` (if any)."""
    cols = codes.shape[1]
    codes_type = f"tensor<{N}x{cols}xi8>"
    lines = [f"  %q{i} = arith.constant {dense_bytes(codes, codes_type)}"]
    points = ""
    if zeros is not None:
        zeros_type = f"tensor<{N}x{GROUPS}xi8>"
        lines.append(f"  %z{i} = arith.constant {dense_bytes(zeros, zeros_type)}")
        points = f" zero_points(%z{i} : {zeros_type})"
    lines += [
        f"  %w{i} = mnemo.dequantize %q{i}, {scales}{points} format({fmt}) "
        f"group({GROUP})",
        f"      : {codes_type}, tensor<{N}x{GROUPS}xf32> -> tensor<{N}x{K}xf32>",
        f"  %y{i} = mnemo.linear %x, %w{i} layout(out_in)",
        f"      : tensor<?x{K}xf32>, tensor<{N}x{K}xf32> -> tensor<?x{N}xf32>"]
    return "\n".join(lines)


model = f"""
func.func @gemms(%x: tensor<?x{K}xf32> {{mnemo.name = "x"}},
                 %w: tensor<{K}x{N}xf32> {{mnemo.name = "w"}},
                 %wt: tensor<{N}x{K}xf32> {{mnemo.name = "wt"}})
    -> (tensor<?x{N}xf32> {{mnemo.name = "constant_bias"}},
        tensor<?x{WIDE}xf32> {{mnemo.name = "wide_bf16"}},
        tensor<?x{N}xf32> {{mnemo.name = "in_out"}},
        tensor<?x{N}xf32> {{mnemo.name = "out_in"}},
        tensor<?x{N}xf32> {{mnemo.name = "int8"}},
        tensor<?x{N}xf32> {{mnemo.name = "int8_zero_points"}},
        tensor<?x{N}xf32> {{mnemo.name = "int4"}},
        tensor<?x{N}xf32> {{mnemo.name = "int4_zero_points"}},
        tensor<?x{N}xf32> {{mnemo.name = "nf4"}}) {{
  %c1 = arith.constant {dense(c1, "f32")}
  %b1 = arith.constant {dense(b1, "f32")}
  %c2 = arith.constant {dense(c2, "bf16")}
  %y1 = mnemo.linear %x, %c1 layout(out_in) bias(%b1 : tensor<{N}xf32>)
      : tensor<?x{K}xf32>, tensor<{N}x{K}xf32> -> tensor<?x{N}xf32>
  %y2 = mnemo.linear %x, %c2 layout(out_in)
      : tensor<?x{K}xf32>, tensor<{WIDE}x{K}xbf16> -> tensor<?x{WIDE}xf32>
  %y3 = mnemo.linear %x, %w layout(in_out)
      : tensor<?x{K}xf32>, tensor<{K}x{N}xf32> -> tensor<?x{N}xf32>
  %y4 = mnemo.linear %x, %wt layout(out_in)
      : tensor<?x{K}xf32>, tensor<{N}x{K}xf32> -> tensor<?x{N}xf32>
  %ss = arith.constant {dense(scales_s, "f32")}
  %su = arith.constant {dense(scales_u, "f32")}
{quantized_linear(5, codes_s, "int8", "%ss")}
{quantized_linear(6, codes_u, "int8", "%su", zeros_u)}
{quantized_linear(7, nib_s, "int4", "%ss")}
{quantized_linear(8, nib_u, "int4", "%su", zeros_4)}
{quantized_linear(9, nib_n, "nf4", "%ss")}
  return %y1, %y2, %y3, %y4, %y5, %y6, %y7, %y8, %y9
      : tensor<?x{N}xf32>, tensor<?x{WIDE}xf32>, tensor<?x{N}xf32>,
        tensor<?x{N}xf32>, tensor<?x{N}xf32>, tensor<?x{N}xf32>,
        tensor<?x{N}xf32>, tensor<?x{N}xf32>, tensor<?x{N}xf32>
}}
"""
source = os.path.join(out_dir, "gemms.mlir")
artifact = os.path.join(out_dir, "gemms.mnemo")
with open(source, "w") as f:
    f.write(model)
subprocess.run([mnemoc, source, "--target=aarch64-sve", "--max-batch=80",
                "-o", artifact],
               check=True)

# The micro-tiles are SVE code: broadcast loads of x, FMAs on z registers,
# the panel's step read from the vector length (cntw), the columns past N
# masked by a predicate from a compare, int8 codes loaded as bytes (ld1b).
asm = subprocess.run([mnemoc, source, "--target=aarch64-sve",
                      "--max-batch=80", "--emit=asm", "-o", "-"],
                     check=True, capture_output=True, text=True).stdout
for pattern in ("ld1rw\t{ z", "fmla\tz", "cntw\tx", "cmpgt\tp", "ld1b\t{ z",
                "lsr\tz"):
    print(f"asm: {pattern.split(chr(9))[0]} {'found' if pattern in asm else 'missing FAIL'}")
w = rng.standard_normal((K, N)).astype(np.float32)
wt = rng.standard_normal((N, K)).astype(np.float32)
np.save(os.path.join(out_dir, "w.npy"), w)
np.save(os.path.join(out_dir, "wt.npy"), wt)
passed = runs = 0
for rows in (1, 26, 77):
    x = rng.standard_normal((rows, K)).astype(np.float32)
    xs = os.path.join(out_dir, f"x{rows}.npy")
    np.save(xs, x)
    x64 = x.astype(np.float64)
    expected = {
        "constant_bias": x64 @ c1.T.astype(np.float64) + b1,
        "wide_bf16": x64 @ c2.T.astype(np.float64),
        "in_out": x64 @ w.astype(np.float64),
        "out_in": x64 @ wt.T.astype(np.float64),
        "int8": x64 @ dequantized(codes_s, scales_s).T,
        "int8_zero_points": x64 @ dequantized(codes_u, scales_u, zeros_u).T,
        "int4": x64 @ dequantized(nibbles(nib_s, True), scales_s).T,
        "int4_zero_points": x64 @ dequantized(nibbles(nib_u, False), scales_u,
                                              zeros_4).T,
        "nf4": x64 @ dequantized(NF4[nibbles(nib_n, False)], scales_s).T,
    }
    for bits in (128, 256, 512):
        runs += 1
        result = os.path.join(out_dir, f"r{rows}_{bits}")
        subprocess.run(qemu + ["-cpu", f"max,sve{bits}=on", runner, artifact,
                               "--input", f"x={xs}", "--input",
                               f"w={os.path.join(out_dir, 'w.npy')}",
                               "--input", f"wt={os.path.join(out_dir, 'wt.npy')}",
                               "--output-dir", result],
                       check=True, stdout=subprocess.DEVNULL)
        ok = True
        for name, want in expected.items():
            got = np.load(os.path.join(result, f"{name}.npy"))
            if got.shape != want.shape:
                print(f"{rows} rows, {bits} bits, {name}: shape {got.shape}, "
                      f"expected {want.shape} FAIL")
                ok = False
                continue
            # Row by row, so that a wrong tile cannot hide in the norm.
            worst = np.abs(got - want).max(axis=1)
            bad = np.nonzero(worst > 3e-5 * np.sqrt(K))[0]
            if bad.size:
                print(f"{rows} rows, {bits} bits, {name}: rows {bad[:8].tolist()} "
                      f"off by up to {worst.max():.3g} FAIL")
                ok = False
        print(f"{rows} rows, {bits} bits: worst "
              f"{max(np.abs(np.load(os.path.join(result, n + '.npy')) - e).max() for n, e in expected.items()):.3g} "
              f"{'ok' if ok else 'FAIL'}")
        passed += ok
print(f"sve gemm: {passed} of {runs} runs passed")
sys.exit(0 if passed == runs else 1)
