"""ONNX backend conformance cases for the attention-family ops, with ONNX Runtime results.

Makes: one folder per onnx node test case whose model uses an ai.onnx `Attention`,
`RotaryEmbedding` or `RMSNormalization` op, collected with
`onnx.backend.test.case.node.collect_testcases`. Each folder holds
  model.onnx, input_<i>.npy, output_<i>.npy (graph input/output order), meta.json
meta.json records the graph input/output names, element types and shapes, the
opsets, whether any tensor is bfloat16 (bf16 arrays are stored as float32
upcasts, with "bf16": true) and whether ONNX Runtime (CPUExecutionProvider)
reproduces the expected outputs (`ort_pass`, rtol=1e-3, atol=1e-4).
A top-level meta.json holds the tool versions and the summary counts.

Runs on a machine with onnx (>= 1.23, whose node tests include these ops),
onnxruntime and numpy (the device machine that also has torch/transformers):
    python3 scripts/refgen/onnx_conformance.py [--direct]
Writes $OUT/onnx_conformance_cases.tar.gz (folder `cases/`; with --expanded
the function-expanded forms instead: onnx_conformance_expanded.tar.gz, folder
`expanded/`); --direct imports only
the node-test modules of these ops instead of collecting every node test.
"""
import importlib
import json
import os
import pkgutil
import shutil
import sys
import tarfile
import tempfile
import time
import traceback

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

OUT = os.environ.get("OUT", os.path.join(tempfile.gettempdir(), "out"))
WORK = os.path.join(os.environ.get("REFGEN_TMP", os.path.join(tempfile.gettempdir(), "refgen")), "cases")
OPS = {"Attention", "RotaryEmbedding", "RMSNormalization"}
RTOL, ATOL = 1e-3, 1e-4


def collect(direct):
    """All node test cases (or, with direct, those of the modules of OPS)."""
    from onnx.backend.test.case import node as node_pkg
    how = "collect_testcases(None)"
    cases = []
    if not direct:
        try:
            cases = list(node_pkg.collect_testcases(None))
        except Exception:
            how = "collect_testcases failed: " + traceback.format_exc()[-600:]
            cases = list(getattr(node_pkg, "_NodeTestCases", []))
    found = {op for c in cases for op in case_ops(c.model)}
    if direct or not OPS <= found:
        # import the op modules directly (their export functions run at import time)
        node_pkg._TargetOpType = None
        for info in pkgutil.iter_modules(node_pkg.__path__):
            key = info.name.lower().replace("_", "")
            if any(k in key for k in ("attention", "rotary", "rmsnorm")):
                name = f"{node_pkg.__name__}.{info.name}"
                if name not in sys.modules:
                    importlib.import_module(name)
        cases = list(node_pkg._NodeTestCases)
        how += " + direct module import"
    return cases, how


def graph_ops(g):
    for n in g.node:
        yield n.domain, n.op_type
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graph_ops(a.g)
            for sg in a.graphs:
                yield from graph_ops(sg)


def case_ops(model):
    ops = set(graph_ops(model.graph))
    for f in model.functions:
        for n in f.node:
            ops.add((n.domain, n.op_type))
    return {op for dom, op in ops if dom in ("", "ai.onnx") and op in OPS}


def to_numpy(x):
    if isinstance(x, TensorProto):
        return numpy_helper.to_array(x)
    return np.asarray(x)


def is_bf16(arr, elem_type):
    return elem_type == TensorProto.BFLOAT16 or getattr(arr.dtype, "name", "") == "bfloat16"


def storable(arr, elem_type):
    """(array numpy can save, was_bf16)."""
    if is_bf16(arr, elem_type):
        if arr.dtype == np.uint16:  # raw bf16 bits
            return (arr.astype(np.uint32) << 16).view(np.float32), True
        return arr.astype(np.float32), True
    return arr, False


def vi_desc(vi):
    t = vi.type.tensor_type
    shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
    return {"name": vi.name,
            "dtype": TensorProto.DataType.Name(t.elem_type) if t.elem_type else None,
            "shape": shape if t.HasField("shape") else None}


def compare(actual, expected, elem_type):
    a, e = np.asarray(actual), np.asarray(expected)
    if is_bf16(e, elem_type):
        a, e = storable(a, elem_type)[0], storable(e, elem_type)[0]
    if a.shape != e.shape:
        return False, f"shape {a.shape} != expected {e.shape}", None
    if e.dtype.kind in "fc":
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        ok = bool(np.allclose(a64, e64, rtol=RTOL, atol=ATOL, equal_nan=True))
        fin = np.isfinite(e64) & np.isfinite(a64)
        err = float(np.abs(a64 - e64)[fin].max()) if fin.any() else 0.0
        why = f"max |diff| {err:.3g} over finite values"
        odd = (~fin) & ~(np.isnan(a64) & np.isnan(e64)) & (a64 != e64)
        if odd.any():
            i = tuple(np.argwhere(odd)[0])
            why += (f"; {int(odd.sum())} non-finite values differ (first at {list(map(int, i))}:"
                    f" got {a64[i]:.6g}, expected {e64[i]:.6g})")
        return ok, None if ok else why, err
    ok = bool(np.array_equal(a, e))
    return ok, None if ok else "values differ", None


def run_ort(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def main():
    direct = "--direct" in sys.argv
    # --expanded: the function-expanded forms (the op written out as its
    # decomposition) instead of the op itself.
    expanded = "--expanded" in sys.argv
    t0 = time.time()
    cases, how = collect(direct)
    t_collect = time.time() - t0
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    import onnxruntime as ort
    versions = {"onnx": onnx.__version__, "onnxruntime": ort.__version__, "numpy": np.__version__}
    try:
        import torch, transformers
        versions.update(torch=torch.__version__, transformers=transformers.__version__)
    except Exception:
        pass
    selected, expanded_skipped = [], []
    for c in cases:
        ours = any(c.name.startswith(p) for p in (
            "test_attention", "test_rotary_embedding", "test_rms_normalization"))
        if case_ops(c.model):
            if not expanded:
                selected.append(c)
        elif ours:
            if expanded:
                selected.append(c)
            else:
                expanded_skipped.append(c.name)  # no such op left in the graph
    summary = {"versions": versions, "collection": how, "collect_seconds": round(t_collect, 1),
               "rtol": RTOL, "atol": ATOL, "cases": {}}
    seen = set()
    for c in sorted(selected, key=lambda c: c.name):
        if c.name in seen:
            continue
        seen.add(c.name)
        d = os.path.join(WORK, c.name)
        os.makedirs(d)
        meta = {"name": c.name, "ops": sorted(case_ops(c.model))}
        try:
            m = c.model
            onnx.save(m, os.path.join(d, "model.onnx"))
            meta["opset"] = {(o.domain or "ai.onnx"): o.version for o in m.opset_import}
            meta["ir_version"] = m.ir_version
            meta["case_rtol"], meta["case_atol"] = c.rtol, c.atol
            ins = [vi for vi in m.graph.input if vi.name not in {i.name for i in m.graph.initializer}]
            outs = list(m.graph.output)
            meta["inputs"], meta["outputs"] = [vi_desc(v) for v in ins], [vi_desc(v) for v in outs]
            if len(c.data_sets) != 1:
                meta["data_sets"] = len(c.data_sets)
            inputs, outputs = c.data_sets[0]
            inputs, outputs = [to_numpy(x) for x in inputs], [to_numpy(x) for x in outputs]
            if len(inputs) != len(ins) or len(outputs) != len(outs):
                raise RuntimeError(f"{len(inputs)} inputs/{len(outputs)} outputs for "
                                   f"{len(ins)}/{len(outs)} graph values")
            bf16 = False
            for kind, arrs, vis in (("input", inputs, ins), ("output", outputs, outs)):
                for i, (arr, vi) in enumerate(zip(arrs, vis)):
                    st, was = storable(arr, vi.type.tensor_type.elem_type)
                    bf16 |= was
                    np.save(os.path.join(d, f"{kind}_{i}.npy"), st)
            meta["bf16"] = bf16
            try:
                got = run_ort(os.path.join(d, "model.onnx"), {vi.name: a for vi, a in zip(ins, inputs)})
                per, errs = [], []
                for vi, a, e in zip(outs, got, outputs):
                    ok, why, err = compare(a, e, vi.type.tensor_type.elem_type)
                    per.append(err)
                    if not ok:
                        errs.append(f"{vi.name}: {why}")
                meta["ort_max_abs_err"] = per
                meta["ort_pass"] = not errs
                if errs:
                    meta["ort_error"] = "; ".join(errs)
            except Exception as e:
                meta["ort_pass"] = False
                # error texts name the case folder relative to the output, not this machine's temp path
                meta["ort_error"] = f"{type(e).__name__}: {str(e).replace(WORK + os.sep, '')[:600]}"
        except Exception:
            meta["error"] = traceback.format_exc()[-1500:]
            meta["ort_pass"] = False
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        summary["cases"][c.name] = {k: meta.get(k) for k in ("ops", "bf16", "ort_pass", "ort_error", "error")}
    cs = summary["cases"]
    summary["counts"] = {
        "total": len(cs),
        "without_bf16": sum(1 for v in cs.values() if not v["bf16"]),
        "ort_pass": sum(1 for v in cs.values() if v["ort_pass"]),
        "ort_pass_without_bf16": sum(1 for v in cs.values() if v["ort_pass"] and not v["bf16"]),
        "by_op": {op: sum(1 for v in cs.values() if op in (v["ops"] or [])) for op in sorted(OPS)},
        "errors": sum(1 for v in cs.values() if v.get("error")),
    }
    summary["ort_failures"] = {k: v.get("ort_error") or v.get("error") for k, v in cs.items() if not v["ort_pass"]}
    summary["expanded_cases_not_included"] = sorted(expanded_skipped)
    with open(os.path.join(WORK, "meta.json"), "w") as f:
        json.dump(summary, f, indent=1)
    os.makedirs(OUT, exist_ok=True)
    name = "expanded" if expanded else "cases"
    with tarfile.open(os.path.join(OUT, f"onnx_conformance_{name}.tar.gz"), "w:gz") as t:
        t.add(WORK, arcname=name)
    print(json.dumps({"collection": how, "collect_seconds": round(t_collect, 1), **summary["counts"]}))
    print("ORT failures:", json.dumps(summary["ort_failures"], indent=1)[:6000])


if __name__ == "__main__":
    main()
