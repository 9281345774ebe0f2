"""Inputs for, and float64 references of, the models in norm_proj.mlir and
softcap.mlir, and a reader of an artifact's code object.

    compiled_models.py inputs DIR
        writes DIR/x-BxS.npy (x of @norm_proj at batch B, sequence S),
        DIR/scale.npy, DIR/rows.npy (x of @twice) and DIR/{q,k,v}-S.npy
    compiled_models.py check-norm-proj OUTDIR X.npy SCALE.npy
        proj within 1e-5 of numpy, scaled equal to x * scale in float32
    compiled_models.py check-twice OUTDIR X.npy
        both outputs equal to x + x
    compiled_models.py check-attention OUT.npy DIR S
        attention with softcap 5 within 1e-5 of numpy
    compiled_models.py code ARTIFACT OUT
        writes the artifact's code object (an ELF shared object) to OUT
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # nothing lands next to the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corrupt_artifact import ARTIFACT, Artifact  # noqa: E402

W = (((np.arange(32 * 8).reshape(32, 8) * 7) % 17) - 8) / 16.0
SOFTCAP = 5.0
SIZES = [(1, 5), (3, 7), (4, 16)]
LENGTHS = [9, 33]


def write_inputs(d):
    rng = np.random.default_rng(7)
    for b, s in SIZES:
        np.save(f"{d}/x-{b}x{s}.npy",
                rng.standard_normal((b, s, 8)).astype(np.float32))
    np.save(f"{d}/scale.npy", np.linspace(0.5, 2.0, 8).astype(np.float32))
    np.save(f"{d}/rows.npy", rng.standard_normal((3, 8)).astype(np.float32))
    # Large enough that the softcap bends most scores.
    for s in LENGTHS:
        for name, heads in (("q", 4), ("k", 2), ("v", 2)):
            np.save(f"{d}/{name}-{s}.npy",
                    (2 * rng.standard_normal((1, heads, s, 16)))
                    .astype(np.float32))


def report(name, ok, detail):
    print(f"{name}: {detail}: {'match' if ok else 'MISMATCH'}")
    return ok


def load_output(path, shape):
    got = np.load(path)
    if got.dtype != np.float32 or got.shape != shape:
        print(f"{os.path.basename(path)}: got {got.dtype}{list(got.shape)}, "
              f"want float32{list(shape)}: MISMATCH")
        return None
    return got


def check_norm_proj(out, x_path, scale_path):
    x = np.load(x_path)
    scale = np.load(scale_path)
    x64 = x.astype(np.float64)
    n = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-5)
    proj = (n * scale.astype(np.float64)) @ W.T
    ok = True
    got = load_output(f"{out}/proj.npy", proj.shape)
    if got is None:
        ok = False
    else:
        err = float(np.max(np.abs(got - proj)))
        ok &= report("proj", err <= 1e-5,
                     f"{list(got.shape)}, max abs error {err:.1e}")
    scaled = (x * scale).reshape(-1, 8)  # float32, one rounding: exact
    got = load_output(f"{out}/scaled.npy", scaled.shape)
    if got is None:
        ok = False
    else:
        ok &= report("scaled", np.array_equal(got, scaled),
                     f"{list(got.shape)}, bit for bit")
    return ok


def check_twice(out, x_path):
    x = np.load(x_path)
    ok = True
    for name in ("a", "b"):
        got = load_output(f"{out}/{name}.npy", x.shape)
        ok &= got is not None and report(name, np.array_equal(got, x + x),
                                         f"{list(got.shape)}, bit for bit")
    return ok


def check_attention(out, d, s):
    import numpy_refs

    q, k, v = (np.load(f"{d}/{n}-{s}.npy") for n in ("q", "k", "v"))
    want = numpy_refs.attention(q, k, v, causal=True, softcap=SOFTCAP)
    got = load_output(out, want.shape)
    if got is None:
        return False
    scores = np.einsum("bhid,bhjd->bhij", q.astype(np.float64),
                       np.repeat(k, 2, axis=1).astype(np.float64)) / 4.0
    bent = float(np.mean(np.abs(scores) > SOFTCAP))
    err = float(np.max(np.abs(got - want)))
    return report("attention", err <= 1e-5 and bent > 0.1,
                  f"{list(got.shape)}, max abs error {err:.1e}, "
                  f"{bent:.0%} of the scores past the softcap")


def write_code(artifact, out):
    a = Artifact(open(artifact, "rb").read())
    start, size = a.vector(a.root, ARTIFACT["code"])
    with open(out, "wb") as f:
        f.write(bytes(a.data[start:start + size]))
    return True


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "inputs":
        write_inputs(*args)
        ok = True
    else:
        ok = {"check-norm-proj": check_norm_proj, "check-twice": check_twice,
              "check-attention": check_attention,
              "code": write_code}[command](*args)
    sys.exit(0 if ok else 1)
