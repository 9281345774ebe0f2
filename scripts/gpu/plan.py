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
    gpu_binaries         [{"chip", "offset", "size"}]: the cubins mnemoc's ptxas
                         made of that PTX (`--gpu-binary`), for gpu_binary
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

A dynamic plan (a function compiled without --input-shape: its buffer
sizes, tensor map dims and strides, grids and some scalar arguments are
expressions of the input dims, the function's "exprs") is read at given
input shapes, `load_plan(..., shapes=[...])`: the shapes are checked
against the signature as the runtime checks a call's (a dynamic dim in
1..max_shape), the expressions evaluated as the runtime's CUDA executor
evaluates them (64-bit, an overflow or a division by zero refused), and
the plan returned in the static form above, at those shapes: concrete
bytes, tensor map dims and strides, grids, {"i64": v} / {"i32": v}
arguments and input and output shapes, a launch whose grid came out
empty dropped (the runtime skips it). Without shapes, a dynamic plan is
refused. Shapes given for a static plan must be its own; for a CPU plan
they are checked and set as its inputs' shapes, and nothing else changes.

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
import operator
import os
import re
import subprocess

# Tensor map fields of the driver's cuTensorMapEncodeTiled: data type and
# swizzle enums by the plan's names, element bytes per data type.
# CU_TENSOR_MAP_DATA_TYPE_* (FP8 bytes as UINT8)
TENSOR_MAP_DTYPES = {"f16": 6, "f32": 7, "bf16": 9, "f8e4m3": 0}
TENSOR_MAP_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CU_TENSOR_MAP_SWIZZLE_*
TENSOR_MAP_ELEMENT_BYTES = {"f16": 2, "f32": 4, "bf16": 2, "f8e4m3": 1}
TENSOR_MAP_BYTES = 128
BUFFER_KINDS = ("input", "weight", "temporary", "tensor_map")
SCALAR_KINDS = ("i64", "i32", "f32")
_CHIP = re.compile(r"sm_([0-9]{2,3})a?")  # a GPU binary's chip, as the runtime checks it
# Bytes per element of the signature's dtypes (mnemo_dtype_name's names).
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i64": 8, "i32": 4, "i8": 1, "u8": 1,
               "bool": 1, "f8e4m3": 1}
# The runtime's limits on sizes computed at a call (runtime/src/cuda/executor.cpp).
MAX_BUFFER_BYTES = 1 << 40
MAX_GRID = (0x7FFFFFFF, 65535, 65535)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MASK = (1 << 64) - 1


def _trunc_div(a, b):
    """a / b rounded toward zero, as C's."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _u64(x):
    return x & UINT64_MASK


def _s64(x):
    """The int64 of x's low 64 bits."""
    x &= UINT64_MASK
    return x - (1 << 64) if x > INT64_MAX else x


def _s32(x):
    """The int32 of x's low 32 bits (an i32 argument's value)."""
    return ((x & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000


# The operations of the plan's expressions on their operands' values
# (tools/mnemo-run/plan_json.cpp's names), as the executor's evaluateOne:
# signed ones in int64 (a result out of its range is an overflow), *_u on
# the values' uint64 bits, comparisons 1 or 0. "const", "input_dim" and
# "select" are evaluated apart.
EXPR_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div_s": _trunc_div,
    "floor_div_s": lambda a, b: a // b,
    "ceil_div_s": lambda a, b: -(-a // b),
    "rem_s": lambda a, b: a - b * _trunc_div(a, b),
    "min_s": min,
    "max_s": max,
    "div_u": lambda a, b: _s64(_u64(a) // _u64(b)),
    "rem_u": lambda a, b: _s64(_u64(a) % _u64(b)),
    "min_u": lambda a, b: _s64(min(_u64(a), _u64(b))),
    "max_u": lambda a, b: _s64(max(_u64(a), _u64(b))),
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "slt": lambda a, b: int(a < b),
    "sle": lambda a, b: int(a <= b),
    "sgt": lambda a, b: int(a > b),
    "sge": lambda a, b: int(a >= b),
    "ult": lambda a, b: int(_u64(a) < _u64(b)),
    "ule": lambda a, b: int(_u64(a) <= _u64(b)),
    "ugt": lambda a, b: int(_u64(a) > _u64(b)),
    "uge": lambda a, b: int(_u64(a) >= _u64(b)),
}
SIGNED_DIVISIONS = ("div_s", "floor_div_s", "ceil_div_s", "rem_s")
UNSIGNED_DIVISIONS = ("div_u", "rem_u")


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


def _shapes(fn, shapes, where):
    """`shapes` (one sequence of dims per input of `fn`) as lists of ints,
    checked as the runtime checks a call's input shapes: the count, each
    rank, static dims equal, dynamic ones in 1..max_shape."""
    inputs = fn.get("inputs", [])
    if not isinstance(shapes, (list, tuple)):
        raise PlanError(f"{where}: shapes {shapes!r}: expected a list of shapes")
    if len(shapes) != len(inputs):
        raise PlanError(f"{where}: {len(shapes)} shapes for {len(inputs)} inputs")
    out = []
    for sig, shape in zip(inputs, shapes):
        what = f"{where}: input '{sig['name']}'"
        if not isinstance(shape, (list, tuple)):
            raise PlanError(f"{what}: shape {shape!r}: expected a list of dims")
        if len(shape) != len(sig["shape"]):
            raise PlanError(f"{what}: rank {len(shape)}, expected {len(sig['shape'])}")
        dims = []
        for i, (d, static, most) in enumerate(zip(shape, sig["shape"], sig["max_shape"])):
            if isinstance(d, bool) or not hasattr(d, "__index__"):
                raise PlanError(f"{what}: dim {i} is {d!r}, not an integer")
            d = operator.index(d)  # an int, or numpy's
            if static >= 0 and d != static:
                raise PlanError(f"{what}: dim {i} is {d}, expected {static}")
            if static < 0 and not 1 <= d <= most:
                raise PlanError(f"{what}: dim {i} is {d}, expected 1..{most} (dynamic)")
            dims.append(d)
        out.append(dims)
    return out


def _expr_values(exprs, shapes, where):
    """The values of the plan's expressions at the input `shapes`, in order
    (each operand an earlier expression), as the executor's evaluateOne."""
    values = []
    for i, expr in enumerate(exprs):
        what = f"{where}: expression {i}"
        if not isinstance(expr, list) or len(expr) != 5:
            raise PlanError(f"{what}: malformed {expr!r}")
        op, a, b, c, value = expr
        if op == "const":
            values.append(_int(value, what, INT64_MIN))
            continue
        if op == "input_dim":
            if not (0 <= _int(a, what) < len(shapes) and 0 <= _int(b, what) < len(shapes[a])):
                raise PlanError(f"{what}: input {a} has no dim {b}")
            values.append(shapes[a][b])
            continue
        if op != "select" and op not in EXPR_OPS:
            raise PlanError(f"{what}: unknown operation {op!r}")
        operands = (a, b, c) if op == "select" else (a, b)
        if not all(0 <= _int(x, what) < i for x in operands):
            raise PlanError(f"{what}: an operand is not an earlier expression")
        x, y = values[a], values[b]
        if op == "select":
            values.append(x if values[c] else y)
            continue
        if (op in SIGNED_DIVISIONS + UNSIGNED_DIVISIONS and y == 0) or (
                op in SIGNED_DIVISIONS and x == INT64_MIN and y == -1):
            result = None
        else:
            result = EXPR_OPS[op](x, y)
        if result is None or not INT64_MIN <= result <= INT64_MAX:
            raise PlanError(f"{what} ({op}) divides by zero or overflows at these input "
                            f"shapes")
        values.append(result)
    return values


def _evaluate(fn, shapes, where):
    """GPU function `fn` of the JSON at the checked input `shapes`, as the
    runtime's Executor::evaluate computes it, in the static form: buffer
    bytes (an input's from its shape), tensor map dims and strides, grids,
    expression arguments as {"i64"} / {"i32"}, the signature's shapes; a
    launch whose grid came out empty is dropped. A computed size out of the
    runtime's range is refused; the rest is checked as in a static plan."""
    values = _expr_values(fn.get("exprs") or [], shapes, where)

    def at(e, what):
        """Expression e's value; None for -1 (the static value)."""
        if _int(e, what, -1) >= len(values):
            raise PlanError(f"{what}: expression {e} of {len(values)}")
        return None if e < 0 else values[e]

    def pick(static, exprs, what):
        """The static values, those with an expression replaced by its value."""
        if exprs is None:
            return static
        if not isinstance(exprs, list) or len(exprs) != len(static):
            raise PlanError(f"{what}: {exprs!r} for {len(static)} values")
        return [x if (v := at(e, what)) is None else v for x, e in zip(static, exprs)]

    inputs = [dict(sig, shape=shape) for sig, shape in zip(fn["inputs"], shapes)]
    buffers = []
    for i, buf in enumerate(fn.get("buffers", [])):
        what = f"{where}: buffer {i}"
        out = {k: v for k, v in buf.items()
               if k not in ("bytes_expr", "dims_exprs", "strides_exprs")}
        size = at(buf.get("bytes_expr", -1), f"{what} bytes_expr")
        if buf.get("kind") == "input":
            if not 0 <= _int(buf["input"], what) < len(inputs):
                raise PlanError(f"{what}: input {buf['input']} of {len(inputs)}")
            out["bytes"] = _tensor_bytes(inputs[buf["input"]], what)
        elif size is not None:
            if not 0 <= size <= MAX_BUFFER_BYTES:
                raise PlanError(f"{what}: would take {size} bytes at these input shapes")
            out["bytes"] = size
        if buf.get("kind") == "tensor_map":
            out["dims"] = pick(buf.get("dims"), buf.get("dims_exprs"), f"{what} dims_exprs")
            out["strides"] = pick(buf.get("strides"), buf.get("strides_exprs"),
                                  f"{what} strides_exprs")
        buffers.append(out)
    launches = []
    for n, launch in enumerate(fn.get("launches", [])):
        what = f"{where}: launch {n} ({launch.get('kernel')})"
        exprs = launch.get("grid_exprs")
        grid = pick(launch.get("grid"), exprs, f"{what} grid_exprs")
        empty = False
        for g, e, most in zip(grid, exprs or [], MAX_GRID):
            if e >= 0 and not 0 <= g <= most:
                raise PlanError(f"{what}: would have grid size {g} at these input shapes")
            empty = empty or (e >= 0 and g == 0)
        if empty:
            continue  # the runtime skips the launch
        args = []
        for arg in launch.get("args", []):
            kind = next(iter(arg)) if isinstance(arg, dict) and len(arg) == 1 else None
            if kind == "i64_expr":
                arg = {"i64": at(arg[kind], what)}
            elif kind == "i32_expr":
                arg = {"i32": _s32(at(arg[kind], what))}
            args.append(arg)
        launches.append({k: v for k, v in launch.items() if k != "grid_exprs"}
                        | {"grid": grid, "args": args})
    dim_exprs = fn.get("output_dim_exprs")
    rank = sum(len(sig["shape"]) for sig in fn.get("outputs", []))
    if dim_exprs is not None and (not isinstance(dim_exprs, list) or len(dim_exprs) != rank):
        raise PlanError(f"{where}: output_dim_exprs {dim_exprs!r} for {rank} output dims")
    outputs, first = [], 0
    for sig in fn.get("outputs", []):
        what, count = f"{where}: output '{sig['name']}'", len(sig["shape"])
        shape = pick(sig["shape"],
                     None if dim_exprs is None else dim_exprs[first:first + count], what)
        first += count
        for d, size in enumerate(shape):
            if size < 0:
                raise PlanError(f"{what} would have dim {d} = {size} at these input shapes")
        outputs.append(dict(sig, shape=shape))
    return {k: v for k, v in fn.items() if k not in ("exprs", "output_dim_exprs")} | {
        "inputs": inputs, "outputs": outputs, "buffers": buffers, "launches": launches}


def _tensor_bytes(sig, what):
    """The bytes of a tensor of signature `sig` (dtype, concrete shape)."""
    if sig.get("dtype") not in DTYPE_BYTES:
        raise PlanError(f"{what}: dtype {sig.get('dtype')!r}")
    size = DTYPE_BYTES[sig["dtype"]]
    for d in sig["shape"]:
        size *= d
    return size


def load_plan(json_path, function=None, shapes=None):
    """The plan of `function` (by name; the first when None) in the JSON of
    `mnemo-run ARTIFACT --dump-plan`, checked (every index, size, launch
    dimension and argument); the module docstring says its fields. With
    `shapes` (one list of dims per input of the function), the plan at
    those input shapes: a dynamic plan evaluated there, any plan's
    signature checked against them. Raises PlanError for a malformed plan,
    a missing function, one the runtime reports as unsupported (its
    "unsupported" reason), shapes the function does not take or at which
    its sizes fail, or a dynamic plan (sizes as expressions of the input
    dims) without shapes."""
    with open(json_path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise PlanError(f"{json_path}: not JSON: {e}") from None
    base = os.path.dirname(os.path.abspath(json_path))
    try:
        return _load(doc, json_path, base, function, shapes)
    except (KeyError, TypeError) as e:
        raise PlanError(f"{json_path}: malformed plan: {type(e).__name__}: {e}") from None


def _load(doc, json_path, base, function, shapes):
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
    if shapes is not None:
        shapes = _shapes(fn, shapes, where)
        if doc.get("code_format") == "ptx":
            fn = _evaluate(fn, shapes, where)
        else:
            fn = dict(fn, inputs=[dict(sig, shape=shape)
                                  for sig, shape in zip(fn["inputs"], shapes)])
    elif fn.get("exprs"):
        # Sizes computed from the input dims at each call: evaluated at
        # given shapes, as the runtime does.
        raise PlanError(f"{where}: its sizes depend on the input dims (a dynamic plan); "
                        f"load it at input shapes (load_plan(..., shapes=...)), or compile "
                        f"it with --input-shape")
    artifact = _resolve(doc["artifact"], base)
    weights = [dict(w, file=_resolve(w["file"], base)) for w in doc.get("weights", [])]
    for k, w in enumerate(weights):
        _int(w["offset"], f"weight {k} offset")
        _int(w["size"], f"weight {k} size")
    code = doc.get("code") or {}
    binaries = doc.get("gpu_binaries", [])
    for k, g in enumerate(binaries):
        if not isinstance(g.get("chip"), str) or not _CHIP.fullmatch(g["chip"]):
            raise PlanError(f"{json_path}: GPU binary {k}: chip {g.get('chip')!r} is not "
                            f"sm_NN[a]")
        _int(g.get("offset"), f"{json_path}: GPU binary {k} offset")
        _int(g.get("size"), f"{json_path}: GPU binary {k} size", 1)
    plan = {"json": json_path, "artifact": artifact, "target": doc.get("target", {}),
            "code_format": doc.get("code_format"), "code": code, "weights": weights,
            "gpu_binaries": binaries,
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
    for sig, i in zip(plan["outputs"], plan["output_buffers"]):
        what = f"{where}: output '{sig['name']}'"
        if not 0 <= _int(i, f"{where}: output buffer") < len(buffers):
            raise PlanError(f"{where}: output buffer {i} of {len(buffers)}")
        size = _tensor_bytes(sig, what) if min(sig["shape"], default=0) >= 0 else 0
        if size > buffers[i]["bytes"]:
            raise PlanError(f"{what}: {size} bytes, more than its buffer {i} has "
                            f"({buffers[i]['bytes']})")
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


def gpu_binary(plan, capability):
    """The cubin for a device of compute `capability` ((major, minor)), or
    None: as the runtime chooses, only a binary of exactly that chip (sm_90a
    for 9.0; an sm_80 one is not taken on 8.6)."""
    for g in plan.get("gpu_binaries", []):
        if int(_CHIP.fullmatch(g["chip"])[1]) == 10 * capability[0] + capability[1]:
            return _read(plan["artifact"], g["offset"], g["size"], f"the {g['chip']} binary")
    return None


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


def dump_plan(mnemo_run, artifact, json_path=None, timeout=None, shapes=None):
    """Runs `mnemo-run ARTIFACT --dump-plan` in the artifact's folder (so the
    paths in the JSON are relative to it), writes its JSON to json_path
    (default: ARTIFACT without .mnemo, plus .plan.json) and returns
    (json_path, load_plan of it at `shapes`). Raises PlanError when mnemo-run
    fails or prints a plan load_plan refuses (a dynamic one without
    shapes)."""
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
    return json_path, load_plan(json_path, shapes=shapes)


if __name__ == "__main__":
    import sys
    for path in sys.argv[1:]:
        p = load_plan(path)
        print(f"{path}: {p['function']} ({p['code_format']}, {p['code'].get('size')} bytes of "
              f"code): {len(p['inputs'])} inputs, {len(p['buffers'])} buffers "
              f"({len(p['tensor_maps'])} tensor maps), {len(p['launches'])} launches")
