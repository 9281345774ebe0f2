#!/usr/bin/env python3
"""CPU benchmark of Mnemo against ONNX Runtime, side by side in one run.

    scripts/bench_cpu.py [--repeat 30] [--rounds 3] [--threads N] [--models NAME ...]
                         [--keep DIR]

(with a Python that has numpy and onnx, e.g. Debian's python3-onnx).

Each model is compiled by `mnemoc --target=host` (the compile is timed) and
run by `mnemo-run --repeat N`; ONNX Runtime 1.30 (npm onnxruntime-node, at
its default settings unless --threads sets intraOpNumThreads) runs the
ONNX form of the same model on the same inputs through scripts/lib/ort_run.js.
Both report the median of their timed runs (ort_run.js after 3 untimed
warm-up runs; mnemo-run times its first run too). The two sides run in
alternating rounds (--rounds, default 3, of repeat / rounds runs each), so
that a change of the machine's speed between them falls on both; the ratio
is the median of the rounds' ratios.

Models (--models keeps those whose name contains any of the given strings):
  onnx/<ref>       the refs_public ONNX exports (test/Frontend/ONNX/Inputs)
  ckpt/<ref>       the same models compiled from their Hugging Face
                   checkpoints (test/Frontend/Checkpoint/Inputs); ONNX
                   Runtime runs the ONNX export on the same input ids
  attention_block  an opset-23 block: x[1, 1024, 2048] -> q/k/v projections
                   -> Attention (GQA 16/4 heads, head dim 128, causal, f32)
                   -> o projection; generated here with seeded weights
  <ref> is llama_gqa, qwen3_qknorm, mistral_swa or deepseek_mla.
  onnx/<name>, ckpt/<name>
                   with --model-dir DIR: the model in DIR (its basename),
                   e.g. the other shapes of scripts/refgen/unseen_shapes.py

Mnemo's first output is compared with ONNX Runtime's (max |diff|) and,
where the repository stores them, with PyTorch's logits; a difference
above 1e-4 is a failure. The result is a markdown table; the exit status
is non-zero if any model failed to compile, run or match.

ONNX Runtime is installed on first use into build/ort (git-ignored) with
`ONNXRUNTIME_NODE_INSTALL=skip npm install` (a plain install tries to
download CUDA libraries); node and npm must be on PATH.
"""

import argparse
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    sys.exit(f"bench_cpu: {e}; run it with a Python that has numpy and onnx "
             "(Debian python3-numpy, python3-onnx)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
ORT_PREFIX = os.path.join(ROOT, "build", "ort")
ORT_VERSION = "1.30.0"
ORT_RUN = os.path.join(ROOT, "scripts", "lib", "ort_run.js")
ONNX_REFS = os.path.join(ROOT, "test", "Frontend", "ONNX", "Inputs",
                         "refs_public")
CKPT_REFS = os.path.join(ROOT, "test", "Frontend", "Checkpoint", "Inputs",
                         "refs_public")
REFS = ("llama_gqa", "qwen3_qknorm", "mistral_swa", "deepseek_mla")
TOLERANCE = 1e-4
# "latency: X ms (median of N)", from newer mnemo-run with ", T threads".
LATENCY = re.compile(
    r"^latency: ([0-9.eE+-]+) ms \(median of \d+\)(?:, (\d+) threads?)?", re.M)
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ ?(.*?)(?: ?\(/.*\))?$")
OUTPUT = re.compile(r"^(\S+): .* -> (.+?\.npy)(?: \(as f32\))?$", re.M)

# The attention block of BASELINES.md.
BLOCK = dict(seq=1024, hidden=2048, q_heads=16, kv_heads=4, head_dim=128)


class BenchError(Exception):
    """A model that failed to build, compile, run or match."""


@dataclasses.dataclass
class Case:
    """One benchmarked model.

    make(case, work) fills in the rest, writing what it needs under work
    (so the attention block is generated only when selected):
    mnemo_source is what mnemoc compiles, ort_model what ONNX Runtime runs;
    mnemo_inputs / ort_inputs map input names to .npy files; reference is
    a stored PyTorch output, if any.
    """
    name: str
    make: callable
    mnemo_source: str = ""
    ort_model: str = ""
    mnemo_inputs: dict = dataclasses.field(default_factory=dict)
    ort_inputs: dict = dataclasses.field(default_factory=dict)
    reference: str = ""
    gflop: float = 0.0


@dataclasses.dataclass
class Result:
    """One row of the table; None where a step failed or does not apply."""
    name: str
    mnemo_ms: float = None
    mnemo_threads: int = None
    ort_ms: float = None
    compile_s: float = None
    ratio: float = None
    diff_ort: float = None
    diff_ref: float = None
    gflop: float = 0.0
    error: str = ""


# --- running tools -----------------------------------------------------------

def run(cmd, what, env=None, log_dir=None):
    """Runs cmd, returns its stdout; a failure raises BenchError with the
    error lines (or the last lines) of its output, the whole of which goes
    to log_dir/<what>.log if log_dir is given."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:
        raise BenchError(f"{what}: {e}") from None
    if not proc.returncode:
        return proc.stdout
    text = (proc.stderr + proc.stdout).strip()
    lines = text.splitlines()
    summary = ([l.strip() for l in lines if "error" in l.lower()][:3]
               or crash_frames(lines))
    reason = (f"killed by {signal.Signals(-proc.returncode).name}"
              if proc.returncode < 0 else f"exit {proc.returncode}")
    message = f"{what} failed ({reason}): " + " | ".join(
        summary or [l.strip() for l in lines[-3:]])
    if log_dir:  # with --keep only
        log = os.path.join(log_dir, f"{what}.log")
        with open(log, "w") as f:
            f.write(" ".join(cmd) + "\n" + text + "\n")
        message += f" (all of it in {log})"
    raise BenchError(message)


def crash_frames(lines, count=2):
    """The first named frames of an LLVM stack dump that are neither the
    signal handler nor the C library (abort, malloc checks)."""
    frames = [m.group(1) for m in map(FRAME.match, lines) if m]
    ours = [f for f in frames
            if f and not f.startswith(("llvm::sys::", "./"))
            and not re.search(r"\s\./\S+:\d+", f)]
    return [f"at {f}" for f in ours[:count]]


def parse_run(stdout, what):
    """The median latency, the thread count (None if not printed) and the
    output files of mnemo-run / ort_run.js."""
    m = LATENCY.search(stdout)
    if not m:
        raise BenchError(f"{what}: no latency line in its output")
    threads = int(m.group(2)) if m.group(2) else None
    return float(m.group(1)), threads, dict(OUTPUT.findall(stdout))


def ensure_ort():
    """Installs onnxruntime-node into build/ort unless it is there."""
    pkg = os.path.join(ORT_PREFIX, "node_modules", "onnxruntime-node",
                       "package.json")
    if os.path.exists(pkg):
        with open(pkg) as f:
            if json.load(f).get("version") == ORT_VERSION:
                return
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            sys.exit(f"bench_cpu: {tool} is not on PATH (ONNX Runtime runs "
                     "from npm onnxruntime-node)")
    print(f"installing onnxruntime-node@{ORT_VERSION} into {ORT_PREFIX} ...",
          file=sys.stderr)
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
    try:
        run(["npm", "install", "--prefix", ORT_PREFIX,
             f"onnxruntime-node@{ORT_VERSION}"], "npm install", env=env)
    except BenchError as e:
        sys.exit(f"bench_cpu: {e}")


def mnemo_run_threads_flag():
    """Whether this mnemo-run takes --threads N."""
    proc = subprocess.run([os.path.join(BIN, "mnemo-run"), "--help"],
                          capture_output=True, text=True)
    return "--threads" in proc.stdout + proc.stderr


# --- models ------------------------------------------------------------------

def np_dtype(elem_type):
    """The numpy dtype of an ONNX TensorProto element type."""
    if hasattr(helper, "tensor_dtype_to_np_dtype"):  # onnx >= 1.13
        return helper.tensor_dtype_to_np_dtype(elem_type)
    from onnx import mapping  # onnx 1.12
    return mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def onnx_inputs(model_path, input_ids, work, tag):
    """Writes one .npy per graph input of an ONNX model (input_ids from the
    given array; attention_mask all ones; position_ids 0..S-1), each in the
    graph's element type; returns {name: file}."""
    graph = onnx.load(model_path, load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    batch, seq = input_ids.shape
    files = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        dtype = np_dtype(value.type.tensor_type.elem_type)
        if value.name == "input_ids":
            array = input_ids
        elif value.name == "attention_mask":
            array = np.ones((batch, seq))
        elif value.name == "position_ids":
            array = np.broadcast_to(np.arange(seq), (batch, seq))
        else:
            raise BenchError(f"{model_path}: no data for input '{value.name}'")
        files[value.name] = os.path.join(work, f"{tag}.{value.name}.npy")
        np.save(files[value.name], np.ascontiguousarray(array, dtype=dtype))
    return files


def ref_case(kind, ref, onnx_dir=None, ckpt_dir=None):
    """onnx/<ref> or ckpt/<ref>, from the repository's refs_public copies
    or from the given folders."""
    onnx_dir = onnx_dir or os.path.join(ONNX_REFS, ref)
    src_dir = onnx_dir if kind == "onnx" else (
        ckpt_dir or os.path.join(CKPT_REFS, ref))
    onnx_model = os.path.join(onnx_dir, "model.onnx")

    def make(case, work):
        ids = np.load(os.path.join(src_dir, "input_ids.npy"))
        case.ort_model = onnx_model
        logits = os.path.join(src_dir, "logits.npy")
        case.reference = logits if os.path.exists(logits) else ""
        case.ort_inputs = onnx_inputs(onnx_model, ids, work, kind)
        if kind == "onnx":
            case.mnemo_source = onnx_model
            case.mnemo_inputs = case.ort_inputs
        else:
            case.mnemo_source = src_dir
            path = os.path.join(work, "ckpt.input_ids.npy")
            np.save(path, ids)
            case.mnemo_inputs = {"input_ids": path}

    return Case(f"{kind}/{ref}", make)


def attention_block_model(path, seq, hidden, q_heads, kv_heads, head_dim,
                          seed=0):
    """Writes the opset-23 attention block: x[1, S, C] -> MatMul q/k/v ->
    [B, H, S, D] -> Attention(is_causal) -> [B, S, Hq*D] -> MatMul o.

    The spec asks for q_num_heads/kv_num_heads only with 3-D inputs; they
    are given here too (equal to the 4-D inputs' head counts), which both
    ONNX Runtime 1.30 and mnemoc accept."""
    rng = np.random.default_rng(seed)

    def weight(name, rows, cols):
        w = rng.standard_normal((rows, cols), dtype=np.float32)
        return numpy_helper.from_array(w / np.float32(np.sqrt(rows)), name)

    def shape(name, dims):
        return numpy_helper.from_array(np.array(dims, dtype=np.int64), name)

    q_dim, kv_dim = q_heads * head_dim, kv_heads * head_dim
    inits = [weight("w_q", hidden, q_dim), weight("w_k", hidden, kv_dim),
             weight("w_v", hidden, kv_dim), weight("w_o", q_dim, hidden),
             shape("q_shape", [1, seq, q_heads, head_dim]),
             shape("kv_shape", [1, seq, kv_heads, head_dim]),
             shape("o_shape", [1, seq, q_dim])]
    nodes = []
    for name, shape_name in (("q", "q_shape"), ("k", "kv_shape"),
                             ("v", "kv_shape")):
        nodes += [
            helper.make_node("MatMul", ["x", f"w_{name}"], [f"{name}_proj"]),
            helper.make_node("Reshape", [f"{name}_proj", shape_name],
                             [f"{name}_bshd"]),
            helper.make_node("Transpose", [f"{name}_bshd"], [f"{name}_bhsd"],
                             perm=[0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("Attention", ["q_bhsd", "k_bhsd", "v_bhsd"],
                         ["attn_bhsd"], is_causal=1, q_num_heads=q_heads,
                         kv_num_heads=kv_heads),
        helper.make_node("Transpose", ["attn_bhsd"], ["attn_bshd"],
                         perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["attn_bshd", "o_shape"], ["attn"]),
        helper.make_node("MatMul", ["attn", "w_o"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "attention_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [1, seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [1, seq, hidden])],
        initializer=inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    onnx.save(model, path)


def block_gflop(seq, hidden, q_heads, kv_heads, head_dim):
    """Projections 2*S*C*(Cq + 2*Ckv) + Cq*C, causal attention
    4*Hq*S*S*D / 2 (the convention of BASELINES.md)."""
    q_dim, kv_dim = q_heads * head_dim, kv_heads * head_dim
    proj = 2 * seq * hidden * (q_dim + 2 * kv_dim) + 2 * seq * q_dim * hidden
    attn = 4 * q_heads * seq * seq * head_dim / 2
    return (proj + attn) / 1e9


def block_case():
    def make(case, work):
        model = os.path.join(work, "attention_block.onnx")
        attention_block_model(model, **BLOCK)
        x = np.random.default_rng(1).standard_normal(
            (1, BLOCK["seq"], BLOCK["hidden"]), dtype=np.float32)
        path = os.path.join(work, "x.npy")
        np.save(path, x)
        case.mnemo_source = case.ort_model = model
        case.mnemo_inputs = case.ort_inputs = {"x": path}

    return Case("attention_block", make, gflop=block_gflop(**BLOCK))


def dir_cases(folder):
    """onnx/<name> and ckpt/<name> of a folder in the refs layout
    (scripts/refgen/unseen_shapes.py writes such folders): model.onnx,
    config.json + model.safetensors, input_ids.npy, logits.npy."""
    folder = os.path.abspath(folder)
    name = os.path.basename(folder.rstrip(os.sep))
    missing = [f for f in ("model.onnx", "input_ids.npy")
               if not os.path.exists(os.path.join(folder, f))]
    if missing:
        sys.exit(f"bench_cpu: {folder}: no {', '.join(missing)}")
    cases = [ref_case("onnx", name, onnx_dir=folder)]
    if os.path.exists(os.path.join(folder, "config.json")):
        cases.append(ref_case("ckpt", name, onnx_dir=folder, ckpt_dir=folder))
    return cases


def all_cases(model_dirs=()):
    return ([ref_case("onnx", r) for r in REFS]
            + [ref_case("ckpt", r) for r in REFS] + [block_case()]
            + [c for d in model_dirs for c in dir_cases(d)])


# --- benchmarking ------------------------------------------------------------

def input_flags(inputs):
    return [arg for name, path in inputs.items()
            for arg in ("--input", f"{name}={path}")]


def compile_mnemo(case, work, args):
    """Compiles case with mnemoc; returns (compile s, artifact)."""
    art = os.path.join(work, "x.mnemo")
    start = time.perf_counter()
    run([os.path.join(BIN, "mnemoc"), case.mnemo_source, "-o", art,
         "--target=host"], "mnemoc", log_dir=work if args.keep else None)
    return time.perf_counter() - start, art


def run_mnemo(case, work, args, art, repeat, threads_flag):
    """Runs the artifact `repeat` times; returns (ms, threads, output)."""
    cmd = [os.path.join(BIN, "mnemo-run"), art, "--output-dir",
           os.path.join(work, "mnemo"), "--repeat", str(repeat)]
    if args.threads and threads_flag:
        cmd += ["--threads", str(args.threads)]
    ms, threads, outputs = parse_run(
        run(cmd + input_flags(case.mnemo_inputs), "mnemo-run",
            log_dir=work if args.keep else None),
        "mnemo-run")
    return ms, threads, first_output(outputs, "mnemo-run")


def run_ort(case, work, args, repeat):
    """Runs case `repeat` times on ONNX Runtime; returns (ms, output)."""
    cmd = ["node", ORT_RUN, case.ort_model, "--output-dir",
           os.path.join(work, "ort"), "--repeat", str(repeat),
           "--ort", ORT_PREFIX]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    ms, _, outputs = parse_run(
        run(cmd + input_flags(case.ort_inputs), "ort_run.js",
            log_dir=work if args.keep else None),
        "ort_run.js")
    return ms, first_output(outputs, "ort_run.js")


def first_output(outputs, what):
    if not outputs:
        raise BenchError(f"{what}: wrote no output")
    return np.load(next(iter(outputs.values())))


def max_diff(a, b, what):
    if a.shape != b.shape:
        raise BenchError(f"{what}: shape {a.shape} vs {b.shape}")
    return float(np.max(np.abs(a.astype(np.float64) - b)))


def bench(case, work, args, threads_flag):
    """Benchmarks one case; every failure ends up in Result.error (a failing
    side does not keep the other from running)."""
    result = Result(case.name, gflop=case.gflop)
    errors = []
    os.makedirs(work, exist_ok=True)
    try:
        case.make(case, work)
    except BenchError as e:
        result.error = str(e)
        return result
    out = ort_out = art = None
    try:
        result.compile_s, art = compile_mnemo(case, work, args)
    except BenchError as e:
        errors.append(str(e))
    # The two run in alternating rounds, so that a change of the machine's
    # speed between them (this host has phases) falls on both.
    repeat = -(-args.repeat // args.rounds)
    ort_ms, mnemo_ms = [], []
    for _ in range(args.rounds):
        try:
            if ort_ms is not None:
                ms, ort_out = run_ort(case, work, args, repeat)
                ort_ms.append(ms)
        except BenchError as e:
            errors.append(str(e))
            ort_ms = None
        try:
            if art and mnemo_ms is not None:
                ms, result.mnemo_threads, out = run_mnemo(
                    case, work, args, art, repeat, threads_flag)
                mnemo_ms.append(ms)
        except BenchError as e:
            errors.append(str(e))
            mnemo_ms = None
    if ort_ms:
        result.ort_ms = float(np.median(ort_ms))
    if mnemo_ms:
        result.mnemo_ms = float(np.median(mnemo_ms))
    if ort_ms and mnemo_ms:
        result.ratio = float(np.median(
            [o / m for o, m in zip(ort_ms, mnemo_ms)]))
    try:
        if out is not None and ort_out is not None:
            result.diff_ort = max_diff(out, ort_out, "Mnemo vs ONNX Runtime")
        if out is not None and case.reference:
            result.diff_ref = max_diff(out, np.load(case.reference),
                                       "Mnemo vs PyTorch")
    except BenchError as e:
        errors.append(str(e))
    diffs = [d for d in (result.diff_ort, result.diff_ref) if d is not None]
    if diffs and max(diffs) > TOLERANCE:
        errors.append(f"max |diff| {max(diffs):.3g} > {TOLERANCE:g}")
    result.error = "; ".join(errors)
    return result


# --- report ------------------------------------------------------------------

def fmt(value, spec, missing="—"):
    return missing if value is None else format(value, spec)


def fmt_ms(value):
    """4 significant digits, never in exponent notation."""
    if value is None:
        return "—"
    return np.format_float_positional(value, precision=4, unique=False,
                                      fractional=False, trim="-")


def table(results):
    lines = ["| model | Mnemo ms | ORT ms | ratio (ORT/Mnemo) "
             "| max\\|Δ\\| ORT | max\\|Δ\\| PyTorch | compile s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        ratio = r.ratio
        name = r.name + (" **FAIL**" if r.error else "")
        lines.append(
            f"| {name} | {fmt_ms(r.mnemo_ms)} | {fmt_ms(r.ort_ms)} "
            f"| {fmt(ratio, '.3g')} | {fmt(r.diff_ort, '.2e')} "
            f"| {fmt(r.diff_ref, '.2e')} | {fmt(r.compile_s, '.2f')} |")
    return "\n".join(lines)


def notes(results, args, threads_flag):
    out = []
    for r in results:
        if r.gflop:
            rates = ", ".join(
                f"{who} {r.gflop / (ms / 1e3):.1f} GFLOP/s"
                for who, ms in (("Mnemo", r.mnemo_ms), ("ORT", r.ort_ms))
                if ms)
            out.append(f"{r.name}: {r.gflop:.1f} GFLOP; {rates or 'no time'}")
    for r in results:
        if r.error:
            out.append(f"{r.name}: FAIL: {r.error}")
    threads = (f"intraOpNumThreads={args.threads}" if args.threads
               else "default threads")
    counts = sorted({r.mnemo_threads for r in results if r.mnemo_threads})
    mnemo = (f"Mnemo {'/'.join(map(str, counts))} thread(s)" if counts
             else "Mnemo threads not reported")
    if args.threads and not threads_flag:
        mnemo += " (mnemo-run has no --threads)"
    per_round = -(-args.repeat // args.rounds)
    rounds = (f"{args.rounds} alternating rounds of {per_round} runs each "
              "(ms: the median of the rounds' medians; ratio: the median of "
              "the rounds' ratios)" if args.rounds > 1
              else f"median of {args.repeat}")
    out.append(f"{rounds}; ORT {threads}; {mnemo}; ratio > 1: Mnemo faster")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--repeat", type=int, default=30,
                    help="timed runs per model and side (default 30)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate ONNX Runtime and Mnemo in this many "
                         "rounds of repeat / rounds runs (default 3)")
    ap.add_argument("--threads", type=int,
                    help="ORT intraOpNumThreads (and mnemo-run --threads, "
                         "once it has one)")
    ap.add_argument("--models", nargs="+", metavar="NAME",
                    help="keep models whose name contains any NAME")
    ap.add_argument("--model-dir", action="append", default=[],
                    metavar="DIR",
                    help="also benchmark the model in DIR (refs layout: "
                         "model.onnx, input_ids.npy, optionally config.json "
                         "+ model.safetensors and logits.npy); repeatable")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep models, artifacts and outputs in DIR")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.threads is not None and args.threads < 1:
        ap.error("--threads must be at least 1")

    candidates = all_cases(args.model_dir)
    cases = [c for c in candidates
             if not args.models or any(m in c.name for m in args.models)]
    if not cases:
        ap.error("--models matches none of: "
                 + " ".join(c.name for c in candidates))
    for tool in ("mnemoc", "mnemo-run"):
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            sys.exit(f"bench_cpu: {os.path.join(BIN, tool)} is missing; "
                     "build the compiler first")
    ensure_ort()
    threads_flag = mnemo_run_threads_flag()

    with tempfile.TemporaryDirectory(prefix="bench_cpu.") as tmp:
        work = os.path.abspath(args.keep) if args.keep else tmp
        results = []
        for case in cases:
            print(f"{case.name} ...", file=sys.stderr, flush=True)
            results.append(bench(case, os.path.join(
                work, case.name.replace("/", "_")), args, threads_flag))
    print(table(results))
    print()
    print(notes(results, args, threads_flag))
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
