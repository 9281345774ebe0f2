"""Row-by-row comparison of an output with its reference, for the GPU
checks and benchmarks: a whole-tensor norm lets a zeroed or stale tile hide
among many good ones, a row's own norm does not.

A row is a vector along the last dim (an attention output row of one head,
a linear layer's output row). Its relative error is |d_row| / |ref_row|,
where rows whose reference is near zero (under 1e-3 of the rows' RMS norm)
are measured against that floor instead, so they neither hide nor blow up.
"""

import numpy as np


def worst_row(diff_norms, ref_norms):
    """Per-row L2 norms of the difference and of the reference (any shape,
    one entry per row) -> (worst relative error, index of that row)."""
    diff_norms = np.asarray(diff_norms, np.float64)
    ref_norms = np.asarray(ref_norms, np.float64)
    if diff_norms.size == 0:
        return 0.0, ()
    floor = max(1e-3 * float(np.sqrt(np.mean(ref_norms ** 2))), 1e-30)
    rel = diff_norms / np.maximum(ref_norms, floor)
    rel = np.where(np.isfinite(rel), rel, np.inf)
    at = int(np.argmax(rel))
    return float(rel.flat[at]), tuple(int(i) for i in np.unravel_index(at, rel.shape))


def worst_row_numpy(out, ref):
    """worst_row for numpy arrays of the same shape."""
    d = np.asarray(out, np.float64) - np.asarray(ref, np.float64)
    return worst_row(np.linalg.norm(d, axis=-1), np.linalg.norm(ref, axis=-1))


def worst_row_torch(out, ref):
    """worst_row for torch tensors of the same shape (norms on the device)."""
    import torch
    d = out.double() - ref.double()
    return worst_row(torch.linalg.vector_norm(d, dim=-1).cpu().numpy(),
                     torch.linalg.vector_norm(ref.double(), dim=-1).cpu().numpy())
