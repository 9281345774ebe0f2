"""The reference checkpoints exported to ONNX in the other ways users export.

Runs on a machine with torch, transformers, onnx and onnxruntime (the GPU
machine's image). For each checkpoint folder given (config.json +
model.safetensors), and each export recipe:

  dynamo23_dynamic  torch.onnx.export(dynamo=True, opset 23) with a dynamic
                    batch and sequence length (dynamic_shapes)
  legacy17_static   the TorchScript exporter (dynamo=False, opset 17), static
  legacy17_dynamic  the TorchScript exporter with dynamic_axes on batch/seq

writes <out>/<model>/<recipe>/model.onnx (+ model.onnx.data when large), and
for two prompts (2 x 40 and 1 x 23 token ids) input_ids_<n>.npy and the
eager PyTorch logits logits_<n>.npy, plus ONNX Runtime's ort_logits_<n>.npy
and a meta.json with the op histogram and any export error.

Usage: onnx_exporters.py OUT_DIR CHECKPOINT_DIR...
"""
import json
import os
import sys
import traceback

import numpy as np
import torch
import transformers as tf


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids, use_cache=False).logits


def export(recipe, wrapped, ids, path):
    if recipe == "dynamo23_dynamic":
        batch = torch.export.Dim("batch", min=1, max=8)
        seq = torch.export.Dim("seq", min=2, max=256)
        torch.onnx.export(wrapped, (ids,), path, dynamo=True, opset_version=23,
                          input_names=["input_ids"], output_names=["logits"],
                          dynamic_shapes={"input_ids": {0: batch, 1: seq}})
    elif recipe == "legacy17_static":
        torch.onnx.export(wrapped, (ids,), path, dynamo=False, opset_version=17,
                          input_names=["input_ids"], output_names=["logits"])
    elif recipe == "legacy17_dynamic":
        torch.onnx.export(wrapped, (ids,), path, dynamo=False, opset_version=17,
                          input_names=["input_ids"], output_names=["logits"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                        "logits": {0: "batch", 1: "seq"}})
    else:
        raise ValueError(recipe)


def histogram(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    hist = {}
    for n in m.graph.node:
        key = (n.domain + "::" if n.domain else "") + n.op_type
        hist[key] = hist.get(key, 0) + 1
    return {"opsets": {o.domain or "ai.onnx": o.version for o in m.opset_import},
            "ops": dict(sorted(hist.items()))}


def main(out, checkpoints):
    import onnxruntime as ort
    summary = {"torch": torch.__version__, "transformers": tf.__version__}
    for ckpt in checkpoints:
        name = os.path.basename(os.path.normpath(ckpt))
        model = tf.AutoModelForCausalLM.from_pretrained(
            ckpt, attn_implementation="eager", torch_dtype=torch.float32).eval()
        wrapped = Logits(model).eval()
        vocab = model.config.vocab_size
        g = torch.Generator().manual_seed(99)
        prompts = {"2x40": torch.randint(0, vocab, (2, 40), generator=g),
                   "1x23": torch.randint(0, vocab, (1, 23), generator=g)}
        for recipe in ("dynamo23_dynamic", "legacy17_static", "legacy17_dynamic"):
            d = os.path.join(out, name, recipe)
            os.makedirs(d, exist_ok=True)
            meta = {"model": name, "recipe": recipe}
            try:
                path = os.path.join(d, "model.onnx")
                with torch.no_grad():
                    export(recipe, wrapped, prompts["2x40"], path)
                meta["onnx"] = histogram(path)
                sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
                for key, ids in prompts.items():
                    if recipe.endswith("static") and key != "2x40":
                        continue
                    with torch.no_grad():
                        want = wrapped(ids).float().numpy()
                    np.save(os.path.join(d, f"input_ids_{key}.npy"), ids.numpy())
                    np.save(os.path.join(d, f"logits_{key}.npy"), want)
                    got = sess.run(None, {"input_ids": ids.numpy()})[0]
                    np.save(os.path.join(d, f"ort_logits_{key}.npy"), got)
                    meta[f"ort_vs_torch_{key}"] = float(np.abs(got - want).max())
            except Exception:
                meta["error"] = traceback.format_exc()[-1500:]
            json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
            summary[f"{name}/{recipe}"] = {k: v for k, v in meta.items()
                                           if k != "onnx"}
            print(json.dumps(summary[f"{name}/{recipe}"])[:600], flush=True)
    json.dump(summary, open(os.path.join(out, "meta.json"), "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
