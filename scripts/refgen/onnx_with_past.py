"""Decoder-with-past ONNX exports of the reference checkpoints.

The form optimum and ONNX Runtime GenAI use: inputs `input_ids` [B, S],
`attention_mask` [B, P + S] (1 for a real token, 0 for padding),
`position_ids` [B, S] and, for every layer N, `past_key_values.N.key` and
`past_key_values.N.value` [B, Hkv, P, D]; outputs `logits` [B, S, V] and
`present.N.key` / `present.N.value` [B, Hkv, P + S, D] (the past with the new
tokens appended). The cache is transformers' own DynamicCache (the model's
attention decides what it caches: DeepSeek's MLA caches per-head expanded
keys and values, as its modeling code does).

Runs on a machine with torch, transformers 5.x, onnx and onnxruntime (the GPU
machine's image). For each checkpoint folder (config.json + model.safetensors
+ input_ids.npy + greedy_tokens.npy + greedy_logits.npy, as in
../shared/models/refs_public) and each recipe:

  dynamo23  torch.onnx.export(dynamo=True, opset 23), batch, sequence and past
            length dynamic
  legacy17  the TorchScript exporter (dynamo=False, opset 17) with dynamic_axes

writes <out>/<recipe>/<model>/model.onnx (+ model.onnx.data) and meta.json:
the op histogram, the graph's input and output names, and a check of the
export with ONNX Runtime: the prompt prefilled with an empty past (P = 0),
then the reference's greedy tokens fed one at a time through past/present
(teacher forcing); `ort_vs_greedy_logits` is the largest |difference| from
greedy_logits.npy over all steps.

Usage: onnx_with_past.py OUT_DIR CHECKPOINT_DIR...
"""
import json
import os
import sys
import traceback

import numpy as np
import torch
import transformers as tf
from transformers.cache_utils import DynamicCache

import onnx_exporters  # the op histogram (same directory)


def make_cache(pairs):
    try:
        return DynamicCache(pairs)
    except TypeError:
        cache = DynamicCache()
        for i, (k, v) in enumerate(pairs):
            cache.update(k, v, i)
        return cache


def cache_tensors(cache):
    if hasattr(cache, "layers"):
        return [t for layer in cache.layers for t in (layer.keys, layer.values)]
    return [t for i in range(len(cache.key_cache))
            for t in (cache.key_cache[i], cache.value_cache[i])]


class WithPast(torch.nn.Module):
    def __init__(self, model, layers):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids, attention_mask, position_ids, past_key_values):
        pairs = [(past_key_values[2 * i], past_key_values[2 * i + 1])
                 for i in range(self.layers)]
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids,
                         past_key_values=make_cache(pairs), use_cache=True)
        return (out.logits, *cache_tensors(out.past_key_values))


def names(layers):
    inputs = ["input_ids", "attention_mask", "position_ids"]
    outputs = ["logits"]
    for i in range(layers):
        inputs += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outputs += [f"present.{i}.key", f"present.{i}.value"]
    return inputs, outputs


def export(recipe, wrapped, args, path, layers):
    inputs, outputs = names(layers)
    if recipe == "dynamo23":
        auto = torch.export.Dim.AUTO
        pkv = [{0: auto, 2: auto}] * (2 * layers)
        torch.onnx.export(wrapped, args, path, dynamo=True, opset_version=23,
                          input_names=inputs, output_names=outputs,
                          dynamic_shapes={"input_ids": {0: auto, 1: auto},
                                          "attention_mask": {0: auto, 1: auto},
                                          "position_ids": {0: auto, 1: auto},
                                          "past_key_values": pkv})
    elif recipe == "legacy17":
        axes = {"input_ids": {0: "batch", 1: "seq"},
                "attention_mask": {0: "batch", 1: "total"},
                "position_ids": {0: "batch", 1: "seq"},
                "logits": {0: "batch", 1: "seq"}}
        for n in inputs[3:]:
            axes[n] = {0: "batch", 2: "past"}
        for n in outputs[1:]:
            axes[n] = {0: "batch", 2: "total"}
        torch.onnx.export(wrapped, args, path, dynamo=False, opset_version=17,
                          input_names=inputs, output_names=outputs,
                          dynamic_axes=axes)
    else:
        raise ValueError(recipe)


def histogram(path):
    """onnx_exporters' op histogram, with the graph's input and output
    names."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    hist = onnx_exporters.histogram(path)
    hist["inputs"] = [i.name for i in m.graph.input]
    hist["outputs"] = [o.name for o in m.graph.output]
    return hist


def ort_teacher_forced(path, ids, tokens, past_shapes):
    """Prefill with an empty past, then one token per step through
    past/present; returns the logits each step chose from, [B, N, V]."""
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    b, s = ids.shape
    past = [np.zeros((b, h, 0, d), np.float32) for h, d in past_shapes]
    feed_ids, start, steps = ids, 0, []
    for step in range(tokens.shape[1]):
        n = feed_ids.shape[1]
        feeds = {"input_ids": feed_ids,
                 "attention_mask": np.ones((b, start + n), np.int64),
                 "position_ids": np.tile(np.arange(start, start + n), (b, 1))}
        for i, t in enumerate(past):
            feeds[f"past_key_values.{i // 2}.{'key' if i % 2 == 0 else 'value'}"] = t
        out = sess.run(None, feeds)
        steps.append(out[0][:, -1])
        past = out[1:]
        start += n
        feed_ids = tokens[:, step:step + 1]
    return np.stack(steps, axis=1)


def main(out, checkpoints):
    summary = {"torch": torch.__version__, "transformers": tf.__version__}
    for ckpt in checkpoints:
        name = os.path.basename(os.path.normpath(ckpt))
        model = tf.AutoModelForCausalLM.from_pretrained(
            ckpt, attn_implementation="eager", dtype=torch.float32).eval()
        layers = model.config.num_hidden_layers
        wrapped = WithPast(model, layers).eval()
        vocab = model.config.vocab_size
        g = torch.Generator().manual_seed(7)
        prefix = torch.randint(0, vocab, (2, 5), generator=g)
        with torch.no_grad():
            cache = model(input_ids=prefix, use_cache=True).past_key_values
        past = cache_tensors(cache)
        past_shapes = [(t.shape[1], t.shape[3]) for t in past]
        new = torch.randint(0, vocab, (2, 3), generator=g)
        args = (new, torch.ones(2, 8, dtype=torch.int64),
                torch.arange(5, 8).repeat(2, 1), list(past))
        ids = np.load(os.path.join(ckpt, "input_ids.npy")).astype(np.int64)
        tokens = np.load(os.path.join(ckpt, "greedy_tokens.npy")).astype(np.int64)
        want = np.load(os.path.join(ckpt, "greedy_logits.npy"))
        for recipe in ("dynamo23", "legacy17"):
            d = os.path.join(out, recipe, name)
            os.makedirs(d, exist_ok=True)
            meta = {"model": name, "recipe": recipe,
                    "past_shapes": [list(s) for s in past_shapes]}
            try:
                path = os.path.join(d, "model.onnx")
                with torch.no_grad():
                    export(recipe, wrapped, args, path, layers)
                meta["onnx"] = histogram(path)
                got = ort_teacher_forced(path, ids, tokens, past_shapes)
                meta["ort_vs_greedy_logits"] = float(np.abs(got - want).max())
            except Exception:
                meta["error"] = traceback.format_exc()[-2000:]
            json.dump(meta, open(os.path.join(d, "meta.json"), "w"), indent=1)
            summary[f"{recipe}/{name}"] = {k: v for k, v in meta.items()
                                           if k != "onnx"}
            print(json.dumps(summary[f"{recipe}/{name}"])[:800], flush=True)
    json.dump(summary, open(os.path.join(out, "meta.json"), "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
