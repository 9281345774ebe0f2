"""Inputs for, and the float64 reference of, @embed in model.mlir.

    embed_model.py inputs DIR        writes DIR/ids.npy, DIR/scale.npy and
                                     bad inputs (DIR/bad-*.npy)
    embed_model.py check OUT.npy DIR compares @embed's output with numpy
    embed_model.py check-double OUT.npy DIR   the same for @double
"""

import sys

import numpy as np

TABLE = np.arange(64 * 8, dtype=np.float64).reshape(64, 8) / 64.0 - 4.0


def reference(ids, scale):
    h = TABLE[ids]
    rms = np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + 1e-5)
    return h / rms * scale


def write_inputs(d):
    np.save(f"{d}/ids.npy", np.array([[3, 0, 63, 17, 42]], np.int64))
    np.save(f"{d}/scale.npy", np.linspace(0.5, 2.0, 8).astype(np.float32))
    np.save(f"{d}/x.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    # Wrong dtype, rank, static dim, dynamic dim over the max (32).
    np.save(f"{d}/bad-dtype.npy", np.zeros((1, 5), np.int32))
    np.save(f"{d}/bad-rank.npy", np.zeros(5, np.int64))
    np.save(f"{d}/bad-static.npy", np.zeros((2, 5), np.int64))
    np.save(f"{d}/bad-max.npy", np.zeros((1, 33), np.int64))
    np.save(f"{d}/bad-scale.npy", np.ones(9, np.float32))
    # Files mnemo-run cannot read.
    np.save(f"{d}/fortran.npy", np.asfortranarray(np.zeros((2, 3), np.float32)))
    np.save(f"{d}/big-endian.npy", np.zeros((1, 5), ">i8"))
    np.save(f"{d}/complex.npy", np.zeros((1, 5), np.complex64))
    raw = open(f"{d}/ids.npy", "rb").read()
    open(f"{d}/truncated.npy", "wb").write(raw[:-3])
    open(f"{d}/not-npy.npy", "wb").write(b"id,value\n1,2\n")


def check(out, d):
    ids = np.load(f"{d}/ids.npy")
    scale = np.load(f"{d}/scale.npy").astype(np.float64)
    got = np.load(out)
    want = reference(ids, scale)
    if got.dtype != np.float32 or got.shape != want.shape:
        print(f"mismatch: got {got.dtype}{list(got.shape)}, "
              f"want float32{list(want.shape)}")
        return 1
    err = float(np.max(np.abs(got - want)))
    print(f"max abs error {err:.2e}: {'match' if err < 1e-5 else 'MISMATCH'}")
    return 0 if err < 1e-5 else 1


def check_double(out, d):
    x = np.load(f"{d}/x.npy")
    got = np.load(out)
    ok = got.dtype == np.float32 and np.array_equal(got, 2 * x)
    print("double: " + ("match" if ok else f"MISMATCH {got!r}"))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        write_inputs(sys.argv[2])
    elif sys.argv[1] == "check-double":
        sys.exit(check_double(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
