"""Greedy references for the DeepSeek-V4 reference checkpoint v4_csa_hca
at prompt lengths that end inside a CSA block (rate 4) and inside an HCA
block (rate 128), decoded across their boundaries; and transformers' own
cached decode measured against the recomputation, per step.

Each case folder v4_prompts/L<n>: input_ids.npy (the checkpoint's prompt
cut to n tokens), greedy_tokens.npy / greedy_logits.npy / greedy_margin.npy
(every step one plain forward over the prompt and the tokens so far:
use_cache=False), hf_cached_logits.npy (transformers' generate with its
cache, teacher-forced on the same tokens) and meta.json.

Runs on a machine with torch and transformers 5.17 (the device machine):
    python3 scripts/refgen/v4_prompts.py
Writes $OUT/v4_prompts.tar.gz, unpacked into
test/Frontend/Checkpoint/Inputs/refs_sparse_public/v4_csa_hca/, and
$OUT/modeling_deepseek_v4.py (transformers' model code, for reading).
"""
import json
import os
import shutil
import sys
import tarfile
import tempfile

import numpy as np
import torch
import transformers as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sparse_checkpoints import greedy  # noqa: E402

OUT = os.environ.get("OUT", os.path.join(tempfile.gettempdir(), "out"))
SRC = "test/Frontend/Checkpoint/Inputs/refs_sparse_public/v4_csa_hca"
WORK = os.path.join(tempfile.gettempdir(), "v4_prompts")
# 130: 2 tokens into a CSA block and into the second HCA window; 250 ends
# 2 tokens into a CSA block and decodes across the HCA boundary at 256.
CASES = {130: 16, 250: 16, 300: 16}


def cached(model, ids, tokens):
    """Prefill with the cache, then one cached step per token (teacher
    forced): the logits transformers' own cached decode gives."""
    out = model(input_ids=torch.from_numpy(ids), use_cache=True)
    past, logits = out.past_key_values, [out.logits[:, -1].float().numpy()]
    for i in range(tokens.shape[1] - 1):
        out = model(input_ids=torch.from_numpy(tokens[:, i:i + 1]),
                    past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits.append(out.logits[:, -1].float().numpy())
    return np.stack(logits, axis=1).astype(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    import transformers.models.deepseek_v4.modeling_deepseek_v4 as mod
    shutil.copy(mod.__file__, os.path.join(OUT, "modeling_deepseek_v4.py"))
    model = tf.AutoModelForCausalLM.from_pretrained(SRC, dtype=torch.float32).eval()
    full = np.load(os.path.join(SRC, "input_ids.npy"))
    summary = {"torch": torch.__version__, "transformers": tf.__version__}
    with tarfile.open(os.path.join(OUT, "v4_prompts.tar.gz"), "w:gz") as tar:
        for length, steps in CASES.items():
            name = f"L{length}"
            d = os.path.join(WORK, "v4_prompts", name)
            os.makedirs(d, exist_ok=True)
            ids = full[:, :length].copy()
            with torch.no_grad():
                tok, lg, mg = greedy(model, ids, steps)
                hf = cached(model, ids, tok)
            drift = np.abs(hf - lg).max(-1)[0]
            files = {"input_ids.npy": ids, "greedy_tokens.npy": tok, "greedy_logits.npy": lg,
                     "greedy_margin.npy": mg, "hf_cached_logits.npy": hf}
            for fn, arr in files.items():
                np.save(os.path.join(d, fn), arr)
            meta = {"prompt": length, "steps": steps, "min_margin": float(mg.min()),
                    "hf_cached_drift_per_step": [float(x) for x in drift]}
            json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
            summary[name] = meta
            print(name, json.dumps(meta), flush=True)
            for fn in os.listdir(d):
                tar.add(os.path.join(d, fn), arcname=os.path.join("v4_prompts", name, fn))
    json.dump(summary, open(os.path.join(OUT, "v4_prompts.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
