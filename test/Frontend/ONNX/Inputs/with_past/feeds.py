"""Inputs for a decoder-with-past graph run on its own: a prompt with an
empty past, which the graph takes as one masked token of zeros (its past
dims are at least 1).

    feeds.py IDS.npy LAYERS HEADS DIM OUT_DIR

writes OUT_DIR/input_ids.npy, attention_mask.npy ([B, 1 + S]: 0, then 1s),
position_ids.npy and past.npy ([B, HEADS, 1, DIM] zeros).
"""
import os
import sys

import numpy as np

ids = np.load(sys.argv[1]).astype(np.int64)
heads, dim, out = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
os.makedirs(out, exist_ok=True)
b, s = ids.shape
mask = np.ones((b, 1 + s), np.int64)
mask[:, 0] = 0
np.save(os.path.join(out, "input_ids.npy"), ids)
np.save(os.path.join(out, "attention_mask.npy"), mask)
np.save(os.path.join(out, "position_ids.npy"), np.tile(np.arange(s), (b, 1)))
np.save(os.path.join(out, "past.npy"), np.zeros((b, heads, 1, dim), np.float32))
