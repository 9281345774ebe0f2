"""Launch plans of Mnemo's GPU artifacts, read through the artifact's schema.

`mnemo-run ARTIFACT.mnemo --dump-plan` prints the artifact's plan as JSON
(target, code format, where the code and every weight lie in the files,
and per function its signature, buffers, launches and output buffers);
the GPU scripts (check_ptx.py, time_kernels.py, bench_attention.py,
bench_linear.py) read that JSON here, never the PTX's comment lines.
make_cases.py and the benchmarks' `prepare` write it beside the artifact
(dump_plan), where it travels with the artifact to the GPU machine.

Standard library only: no GPU, CuPy or numpy needed (the CUDA side, the
module and the tensor map encoding, is in check_ptx.py).

load_plan returns one function's plan as a dict:

    artifact, json       resolved paths of the artifact and of the JSON
    target, code_format  as dumped ("ptx" for GPU artifacts)
    code                 {"offset", "size"}: the PTX inside the artifact
    weights              the artifact's weights, "file" resolved
    function             the function's name
    inputs, outputs      its signature: [{"name", "dtype", "shape", "max_shape"}]
    buffers              by buffer number: {"kind": "input", "input": I, "bytes"}
                         | {"kind": "weight", "weight": K, "bytes"}
                         | {"kind": "temporary", "bytes"}
                         | {"kind": "tensor_map", "source": S, "dtype", "dims",
                            "strides", "box", "swizzle", "bytes": 128}
    tensor_maps          numbers of the tensor_map buffers, in order
    launches             [{"kernel", "grid", "block", "shared_bytes", "args"}], an
                         argument {"buffer": I} | {"i64": v} | {"i32": v} |
                         {"f32": bits as uint32}
    output_buffers       the buffer of each output

A CPU artifact's plan (code_format "elf") has no buffers or launches but
its function's calls, output_slots and function_weights (the artifact
weights of its slots) as dumped; ptx_text refuses it.

Paths in the JSON: an absolute one is taken when it exists, a relative
one is looked up beside the JSON first, then from the current folder;
failing those, the file of the same name beside the JSON is used.
dump_plan runs mnemo-run in the artifact's folder, so the paths it writes
are relative to it, and a prepared folder can move to another machine.
"""

import json
import os
import subprocess

# Tensor map fields of the driver's cuTensorMapEncodeTiled: data type and
# swizzle enums by the plan's names, element bytes per data type.
TENSOR_MAP_DTYPES = {"f16": 6, "f32": 7, "bf16": 9}  # CU_TENSOR_MAP_DATA_TYPE_*
TENSOR_MAP_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CU_TENSOR_MAP_SWIZZLE_*
TENSOR_MAP_ELEMENT_BYTES = {"f16": 2, "f32": 4, "bf16": 2}
TENSOR_MAP_BYTES = 128
BUFFER_KINDS = ("input", "weight", "temporary", "tensor_map")
SCALAR_KINDS = ("i64", "i32", "f32")


class PlanError(ValueError):
    """A plan that cannot be read, or a function the runtime cannot run."""


def _resolve(path, base):
    """`path` as written if it exists, else under `base` (the JSON's folder),
    else `base`/its file name; the first candidate when none exists."""
    candidates = [path] if os.path.isabs(path) else [os.path.join(base, path), path]
    candidates.append(os.path.join(base, os.path.basename(path)))
    return next((c for c in candidates if os.path.exists(c)), candidates[0])


def _int(value, what, lo=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise PlanError(f"{what}: expected an integer >= {lo}, got {value!r}")
    return value


def _ints(values, what, count=None, lo=0):
    if not isinstance(values, list) or (count is not None and len(values) != count):
        raise PlanError(f"{what}: expected {count or 'a list of'} integers, got {values!r}")
    return [_int(v, what, lo) for v in values]


def _tensor_map(buf, what):
    """Checks a tensor_map buffer: rank 1 to 5, dims, byte strides of dims 1
    and up, box, all innermost first; a known dtype and swizzle; 128 bytes."""
    rank = len(buf.get("dims") or [])
    if not 1 <= rank <= 5:
        raise PlanError(f"{what}: tensor map of rank {rank}")
    _ints(buf["dims"], f"{what} dims", rank, 1)
    _ints(buf.get("strides"), f"{what} strides", rank - 1, 1)
    _ints(buf.get("box"), f"{what} box", rank, 1)
    if buf.get("dtype") not in TENSOR_MAP_DTYPES:
        raise PlanError(f"{what}: tensor map dtype {buf.get('dtype')!r}")
    if buf.get("swizzle") not in TENSOR_MAP_SWIZZLES:
        raise PlanError(f"{what}: tensor map swizzle {buf.get('swizzle')!r}")
    if buf.get("bytes") != TENSOR_MAP_BYTES:
        raise PlanError(f"{what}: a tensor map has {TENSOR_MAP_BYTES} bytes, not "
                        f"{buf.get('bytes')!r}")


def load_plan(json_path, function=None):
    """The plan of `function` (by name; the first when None) in the JSON of
    `mnemo-run ARTIFACT --dump-plan`, checked (every index, size, launch
    dimension and argument); the module docstring says its fields. Raises
    PlanError for a malformed plan, a missing function, one the runtime
    reports as unsupported (its "unsupported" reason), or a dynamic plan
    (sizes as expressions of the input dims)."""
    with open(json_path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise PlanError(f"{json_path}: not JSON: {e}") from None
    base = os.path.dirname(os.path.abspath(json_path))
    try:
        return _load(doc, json_path, base, function)
    except (KeyError, TypeError) as e:
        raise PlanError(f"{json_path}: malformed plan: {type(e).__name__}: {e}") from None


def _load(doc, json_path, base, function):
    functions = doc["functions"]
    names = [f["name"] for f in functions]
    if function is None:
        if not functions:
            raise PlanError(f"{json_path}: no functions")
        fn = functions[0]
    elif function in names:
        fn = functions[names.index(function)]
    else:
        raise PlanError(f"{json_path}: no function '{function}' (has {', '.join(names)})")
    where = f"{json_path}: function '{fn['name']}'"
    if fn.get("unsupported"):
        raise PlanError(f"{where}: the runtime cannot run it: {fn['unsupported']}")
    if fn.get("exprs"):
        # Sizes computed from the input dims at each call: mnemo-run
        # evaluates them; these scripts run plans of one shape.
        raise PlanError(f"{where}: its sizes depend on the input dims (a dynamic plan); "
                        f"compile it with --input-shape, or run it with mnemo-run")
    artifact = _resolve(doc["artifact"], base)
    weights = [dict(w, file=_resolve(w["file"], base)) for w in doc.get("weights", [])]
    for k, w in enumerate(weights):
        _int(w["offset"], f"weight {k} offset")
        _int(w["size"], f"weight {k} size")
    code = doc.get("code") or {}
    plan = {"json": json_path, "artifact": artifact, "target": doc.get("target", {}),
            "code_format": doc.get("code_format"), "code": code, "weights": weights,
            "function": fn["name"], "inputs": fn.get("inputs", []),
            "outputs": fn.get("outputs", []), "buffers": fn.get("buffers", []),
            "launches": fn.get("launches", []), "output_buffers": fn.get("output_buffers", []),
            "tensor_maps": []}
    if plan["code_format"] == "ptx":
        _int(code.get("offset"), f"{json_path}: code offset")
        _int(code.get("size"), f"{json_path}: code size", 1)
    buffers = plan["buffers"]
    for i, buf in enumerate(buffers):
        what = f"{where}: buffer {i}"
        kind = buf.get("kind")
        if kind not in BUFFER_KINDS:
            raise PlanError(f"{what}: unknown kind {kind!r}")
        _int(buf.get("bytes"), f"{what} bytes")
        if kind == "input":
            if not 0 <= _int(buf["input"], what) < len(plan["inputs"]):
                raise PlanError(f"{what}: input {buf['input']} of {len(plan['inputs'])}")
        elif kind == "weight":
            k = _int(buf["weight"], what)
            if k >= len(weights):
                raise PlanError(f"{what}: weight {k} of {len(weights)}")
            if weights[k]["size"] != buf["bytes"]:
                raise PlanError(f"{what}: {buf['bytes']} bytes, weight {k} has "
                                f"{weights[k]['size']}")
        elif kind == "tensor_map":
            _tensor_map(buf, what)
            src = _int(buf["source"], what)
            if src >= len(buffers) or buffers[src].get("kind") not in (
                    "input", "weight", "temporary"):
                raise PlanError(f"{what}: tensor map of buffer {src}, not an input, weight "
                                f"or temporary buffer")
            if tensor_map_span(buf) > buffers[src]["bytes"]:
                raise PlanError(f"{what}: the tensor map spans {tensor_map_span(buf)} "
                                f"bytes, buffer {src} has {buffers[src]['bytes']}")
            plan["tensor_maps"].append(i)
    for n, launch in enumerate(plan["launches"]):
        what = f"{where}: launch {n} ({launch.get('kernel')})"
        if not isinstance(launch.get("kernel"), str) or not launch["kernel"]:
            raise PlanError(f"{what}: no kernel name")
        _ints(launch.get("grid"), f"{what} grid", 3, 1)
        _ints(launch.get("block"), f"{what} block", 3, 1)
        _int(launch.get("shared_bytes"), f"{what} shared_bytes")
        for arg in launch.get("args", []):
            if not isinstance(arg, dict) or len(arg) != 1:
                raise PlanError(f"{what}: malformed argument {arg!r}")
            (kind, value), = arg.items()
            if kind == "buffer":
                if not 0 <= _int(value, what) < len(buffers):
                    raise PlanError(f"{what}: buffer {value} of {len(buffers)}")
            elif kind not in SCALAR_KINDS or not isinstance(value, int):
                raise PlanError(f"{what}: malformed argument {arg!r}")
    if plan["code_format"] != "ptx":  # a CPU plan: calls of the code's kernels
        plan.update(calls=fn.get("calls", []), output_slots=fn.get("output_slots", []),
                    function_weights=fn.get("weights", []))
        return plan
    if len(plan["output_buffers"]) != len(plan["outputs"]):
        raise PlanError(f"{where}: {len(plan['output_buffers'])} output buffers for "
                        f"{len(plan['outputs'])} outputs")
    for i in plan["output_buffers"]:
        if not 0 <= _int(i, f"{where}: output buffer") < len(buffers):
            raise PlanError(f"{where}: output buffer {i} of {len(buffers)}")
    return plan


def tensor_map_span(desc):
    """Bytes from the mapped tensor's base address to its last element's end."""
    elem = TENSOR_MAP_ELEMENT_BYTES[desc["dtype"]]
    strides = [elem] + list(desc["strides"])
    return elem + sum((d - 1) * s for d, s in zip(desc["dims"], strides))


def tensor_map_source(plan, idx):
    """(source buffer number, map description) of tensor_map buffer idx; the
    description has dtype, dims, strides (bytes, dims 1..rank-1), box (all
    innermost first) and swizzle (bytes), as encode_tensor_map takes them."""
    buf = plan["buffers"][idx]
    if buf["kind"] != "tensor_map":
        raise PlanError(f"buffer {idx} is a {buf['kind']} buffer, not a tensor map")
    desc = {key: buf[key] for key in ("dtype", "dims", "strides", "box", "swizzle")}
    return buf["source"], desc


def _read(path, offset, size, what):
    """`size` bytes at `offset` of the file `path`, which holds `what`."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(size)
    if len(data) != size:
        raise PlanError(f"{path}: {what} at bytes [{offset}, {offset + size}), past the "
                        f"file's end ({os.path.getsize(path)} bytes)")
    return data


def code_bytes(plan):
    """The code inside the artifact (for a GPU plan, the PTX text)."""
    return _read(plan["artifact"], plan["code"]["offset"], plan["code"]["size"], "the code")


def ptx_text(plan):
    """The artifact's PTX module as text; a plan of another code format is refused."""
    if plan["code_format"] != "ptx":
        raise PlanError(f"{plan['artifact']}: holds {plan['code_format']} code, not PTX "
                        f"(compile for a GPU target, --target=sm_90a)")
    return code_bytes(plan).decode()


def weight_bytes(plan, k):
    """The bytes of the artifact's weight k, from the artifact or its side file."""
    w = plan["weights"][k]
    return _read(w["file"], w["offset"], w["size"], f"weight {k} ({w['name']})")


def buffer_weight_bytes(plan, idx):
    """The bytes of weight buffer idx."""
    buf = plan["buffers"][idx]
    if buf["kind"] != "weight":
        raise PlanError(f"buffer {idx} is a {buf['kind']} buffer, not a weight")
    return weight_bytes(plan, buf["weight"])


def default_mnemo_run(mnemoc):
    """mnemo-run beside the given mnemoc (build/bin)."""
    return os.path.join(os.path.dirname(mnemoc), "mnemo-run")


def dump_plan(mnemo_run, artifact, json_path=None, timeout=None):
    """Runs `mnemo-run ARTIFACT --dump-plan` in the artifact's folder (so the
    paths in the JSON are relative to it), writes its JSON to json_path
    (default: ARTIFACT without .mnemo, plus .plan.json) and returns
    (json_path, load_plan of it). Raises PlanError when mnemo-run fails or
    prints a plan load_plan refuses."""
    if json_path is None:
        json_path = os.path.splitext(artifact)[0] + ".plan.json"
    tool = os.path.abspath(mnemo_run) if os.sep in mnemo_run else mnemo_run
    folder = os.path.dirname(os.path.abspath(artifact))
    try:
        r = subprocess.run([tool, os.path.basename(artifact), "--dump-plan"], cwd=folder,
                           capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PlanError(f"mnemo-run --dump-plan: {type(e).__name__}: {e}") from None
    if r.returncode:
        raise PlanError(f"mnemo-run --dump-plan exited {r.returncode}: "
                        + (r.stderr.strip() or r.stdout.strip())[-2000:])
    try:
        json.loads(r.stdout)
    except json.JSONDecodeError as e:
        raise PlanError(f"mnemo-run --dump-plan printed no JSON: {e}") from None
    with open(json_path, "w") as f:
        f.write(r.stdout)
    return json_path, load_plan(json_path)


if __name__ == "__main__":
    import sys
    for path in sys.argv[1:]:
        p = load_plan(path)
        print(f"{path}: {p['function']} ({p['code_format']}, {p['code'].get('size')} bytes of "
              f"code): {len(p['inputs'])} inputs, {len(p['buffers'])} buffers "
              f"({len(p['tensor_maps'])} tensor maps), {len(p['launches'])} launches")
