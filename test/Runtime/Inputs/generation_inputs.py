"""Writes the malformed and edge-case inputs of generator.test into DIR:
ids1d.npy (a vector), idsf32.npy (float ids), idsvocab.npy (a token past a
256-token vocabulary in row 1), ids40.npy ([2, 40] in-vocabulary ids).

    generation_inputs.py DIR
"""
import os
import sys

import numpy as np

out = sys.argv[1]
np.save(os.path.join(out, "ids1d.npy"), np.arange(5, dtype=np.int64))
np.save(os.path.join(out, "idsf32.npy"), np.zeros((1, 5), np.float32))
bad = np.arange(10, dtype=np.int64).reshape(2, 5)
bad[1, 3] = 256
np.save(os.path.join(out, "idsvocab.npy"), bad)
rng = np.random.default_rng(0)
np.save(os.path.join(out, "ids40.npy"), rng.integers(0, 256, (2, 40), np.int64))
