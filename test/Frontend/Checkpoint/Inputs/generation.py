"""Checks `mnemo-run --generate` against the recomputed greedy references
(greedy_tokens.npy, greedy_logits.npy, greedy_margin.npy: each step one plain
forward over the prompt and the tokens so far).

    generation.py ragged REF_DIR OUT.npy
        writes the ragged batch: row 0 is REF_DIR/input_ids.npy's row 0, row 1
        REF_DIR/ragged/input_ids.npy's prompt padded with zeros to the same
        width; prints the prompt lengths as "L0,L1"
    generation.py compare OUT_DIR REF_DIR [--ragged] [--teacher]
                  [--max-abs TOL | --rel-l2 TOL] [--margin M]
        compares OUT_DIR/tokens.npy and step_logits.npy with REF_DIR's
        references (with --ragged, row 1 with REF_DIR/ragged's row 0), row by
        row and step by step. Greedy runs: the tokens must match up to the
        first step whose reference margin is below 1e-3 (where a correct
        implementation may pick the other token), and the logits up to and
        including that step. Teacher-forced runs: the logits of every step.
        --max-abs bounds max |d| of each step's logits (default 1e-4),
        --rel-l2 bounds ||d|| / ||ref|| of each row instead; with
        --flips N it bounds each step's instead, but for at most N steps
        (a sparse model's top-k selection may flip where a lossy cache
        moves a near-tie: those steps are listed, not hidden). --margin
        moves the greedy cut to the first margin below M (lossy weights,
        whose logits move by more than 1e-3).

    generation.py recompute MNEMO_RUN ARTIFACT OUT_DIR IDS.npy [TOL]
        checks OUT_DIR's generation of IDS.npy (every row a whole prompt)
        against the artifact's own `forward` (checked against PyTorch
        elsewhere): step i's logits must be those of one forward over the
        prompt and tokens[:, :i] at its last position, within TOL (default
        1e-4) max |d|, and each token their first maximum; for models
        without greedy references.

Prints one line per row (recompute: per step); exits 1 on a mismatch or NaN.
"""

import os
import sys

import numpy as np

MARGIN = 1e-3


def references(ref_dir, ragged):
    tokens = np.load(os.path.join(ref_dir, "greedy_tokens.npy"))
    logits = np.load(os.path.join(ref_dir, "greedy_logits.npy"))
    margin = np.load(os.path.join(ref_dir, "greedy_margin.npy"))
    if not ragged:
        return tokens, logits, margin
    sub = os.path.join(ref_dir, "ragged")
    rows = lambda name, full: np.concatenate(
        [full[:1], np.load(os.path.join(sub, name))[:1]])
    return (rows("greedy_tokens.npy", tokens), rows("greedy_logits.npy", logits),
            rows("greedy_margin.npy", margin))


def compare(out_dir, ref_dir, ragged, teacher, max_abs, rel_l2, flips=None,
            cut=MARGIN):
    tokens = np.load(os.path.join(out_dir, "tokens.npy"))
    logits = np.load(os.path.join(out_dir, "step_logits.npy"))
    ref_tokens, ref_logits, margin = references(ref_dir, ragged)
    steps = ref_tokens.shape[1]
    if tokens.shape != ref_tokens.shape or logits.shape != ref_logits.shape:
        print(f"shape mismatch: tokens {tokens.shape} logits {logits.shape}, "
              f"references {ref_tokens.shape} {ref_logits.shape}")
        return 1
    ok = True
    for r in range(tokens.shape[0]):
        if teacher:
            upto = steps
        else:
            low = np.nonzero(margin[r] < cut)[0]
            upto = int(low[0]) + 1 if len(low) else steps
        got, want = logits[r, :upto], ref_logits[r, :upto]
        if not np.isfinite(got).all():
            print(f"row {r}: NaN or Inf in the logits")
            ok = False
            continue
        line = f"row {r}: "
        if not teacher:
            # The token of the margin-cut step itself may differ.
            n = upto - 1 if upto < steps or margin[r, -1] < cut else steps
            same = int((tokens[r, :n] == ref_tokens[r, :n]).sum())
            line += f"tokens {same}/{n} match"
            line += f" (cut at step {upto - 1}: margin below {cut:g})" \
                if n < steps else ""
            ok &= same == n
            line += ", "
        if rel_l2 is not None and flips is not None:
            per_step = (np.linalg.norm(got - want, axis=-1) /
                        np.linalg.norm(want, axis=-1))
            over = np.nonzero(per_step > rel_l2)[0]
            err = float(np.median(per_step))
            line += (f"logits rel L2 per step median {err:.2e} (tol {rel_l2:g}), "
                     f"{len(over)} step(s) above (at most {flips})")
            line += "".join(f"; step {i}: {per_step[i]:.2e}" for i in over)
            good = len(over) <= flips
        elif rel_l2 is not None:
            err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            line += f"logits rel L2 {err:.2e} (tol {rel_l2:g})"
            good = err <= rel_l2
        else:
            per_step = np.abs(got - want).max(axis=-1)
            worst = int(per_step.argmax())
            err = float(per_step[worst])
            line += f"worst step {worst} max |d| {err:.2e} (tol {max_abs:g})"
            good = err <= max_abs
        ok &= good
        print(line + (": ok" if good else ": MISMATCH"))
    return 0 if ok else 1


def recompute(mnemo_run, artifact, out_dir, ids_path, tol):
    import subprocess
    import tempfile
    tokens = np.load(os.path.join(out_dir, "tokens.npy"))
    logits = np.load(os.path.join(out_dir, "step_logits.npy"))
    ids = np.load(ids_path)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(tokens.shape[1]):
            seq = np.concatenate([ids, tokens[:, :i]], axis=1)
            path = os.path.join(tmp, "ids.npy")
            np.save(path, seq)
            subprocess.run([mnemo_run, artifact, "--input",
                            f"input_ids={path}", "--output-dir", tmp],
                           check=True, stdout=subprocess.DEVNULL)
            want = np.load(os.path.join(tmp, "logits.npy"))[:, -1]
            got = logits[:, i]
            err = float(np.abs(got - want).max())
            first_max = bool((tokens[:, i] == got.argmax(-1)).all())
            good = np.isfinite(got).all() and err <= tol and first_max
            ok &= good
            print(f"step {i} (length {seq.shape[1]}): max |d| {err:.2e} "
                  f"(tol {tol:g}), greedy {'ok' if first_max else 'WRONG'}"
                  f"{': ok' if good else ': MISMATCH'}")
    return 0 if ok else 1


def main(argv):
    if len(argv) in (6, 7) and argv[1] == "recompute":
        tol = float(argv[6]) if len(argv) == 7 else 1e-4
        return recompute(argv[2], argv[3], argv[4], argv[5], tol)
    if len(argv) == 4 and argv[1] == "ragged":
        ref_dir, out = argv[2], argv[3]
        full = np.load(os.path.join(ref_dir, "input_ids.npy"))
        short = np.load(os.path.join(ref_dir, "ragged", "input_ids.npy"))
        ids = np.zeros((2, full.shape[1]), np.int64)
        ids[0] = full[0]
        ids[1, :short.shape[1]] = short[0]
        np.save(out, ids)
        print(f"{full.shape[1]},{short.shape[1]}")
        return 0
    if len(argv) >= 4 and argv[1] == "compare":
        flags = argv[4:]
        max_abs, rel_l2, flips, cut = 1e-4, None, None, MARGIN
        for i, f in enumerate(flags):
            if f == "--max-abs":
                max_abs = float(flags[i + 1])
            if f == "--rel-l2":
                rel_l2 = float(flags[i + 1])
            if f == "--flips":
                flips = int(flags[i + 1])
            if f == "--margin":
                cut = float(flags[i + 1])
        return compare(argv[2], argv[3], "--ragged" in flags,
                       "--teacher" in flags, max_abs, rel_l2, flips, cut)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
