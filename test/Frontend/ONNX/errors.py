# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/Inputs/make_models.py %t
# RUN: not mnemoc %t/not_onnx.onnx -o %t/out.mnemo > %t/not_onnx.err 2>&1
# RUN: FileCheck %s --check-prefix=NOTONNX < %t/not_onnx.err
# RUN: count 1 < %t/not_onnx.err
# RUN: not mnemoc %t/truncated.onnx -o %t/out.mnemo > %t/truncated.err 2>&1
# RUN: FileCheck %s --check-prefix=TRUNCATED < %t/truncated.err
# RUN: count 1 < %t/truncated.err
# RUN: not mnemoc %t/unknown_op.onnx -o %t/out.mnemo > %t/unknown.err 2>&1
# RUN: FileCheck %s --check-prefix=UNKNOWN < %t/unknown.err
# RUN: count 1 < %t/unknown.err
# RUN: not mnemoc %t/missing_data.onnx -o %t/out.mnemo > %t/missing.err 2>&1
# RUN: FileCheck %s --check-prefix=MISSING < %t/missing.err
# RUN: count 1 < %t/missing.err
# RUN: not mnemoc %t/absent.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=ABSENT
# RUN: not mnemoc %t/short_data.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=SHORT
# RUN: not mnemoc %t/opset12.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=OPSET
# RUN: not mnemoc %t/type_mismatch.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=TYPE
# RUN: not mnemoc %t/shape_mismatch.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=SHAPE
# RUN: not mnemoc %t/unbound_dim.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=UNBOUND
# RUN: not mnemoc %t/checker.onnx -o %t/out.mnemo 2>&1 | FileCheck %s --check-prefix=CHECKER
# RUN: cd / && mnemoc %t/external17.onnx --emit=mnemo -o %t/external17.mlir
# RUN: for f in short_data opset12 checker type_mismatch shape_mismatch unbound_dim; do not mnemoc %t/$f.onnx -o %t/out.mnemo 2>&1 | count 1; done

# NOTONNX: mnemoc: error: not_onnx.onnx: not an ONNX model (protobuf parse failed: truncated or not a ModelProto)
# TRUNCATED: mnemoc: error: truncated.onnx: not an ONNX model (protobuf parse failed: truncated or not a ModelProto)
# UNKNOWN: mnemoc: error: unknown_op.onnx: node 'node_frob' (Frobnicate): unsupported operator ai.onnx::Frobnicate at opset 17
# MISSING: mnemoc: error: missing_data.onnx: initializer 'w': cannot open external data 'missing.onnx.data': No such file or directory
# ABSENT: mnemoc: error: {{.*}}absent.onnx{{.*}}
# SHORT: mnemoc: error: short_data.onnx: initializer 'w': {{.*}}short.onnx.data{{.*}}
# OPSET: mnemoc: error: opset12.onnx: ai.onnx opset 12 is not supported (this importer reads opsets 13 to 25)
# TYPE: mnemoc: error: type_mismatch.onnx: node 'node_mixed' (Add): operand element types differ
# SHAPE: mnemoc: error: shape_mismatch.onnx: node 'node_mm' (MatMul): contracted dimensions differ (4 vs 3)
# CHECKER: mnemoc: error: checker.onnx: invalid model (onnx checker): {{.*}}axis{{.*}}; Bad node spec for node. Name: node_softmax OpType: Softmax
# UNBOUND: mnemoc: error: unbound_dim.onnx: graph output 'y' is declared tensor<?x5xf32> but computed as tensor<?x4xf32>
# OPSET-NOT: error
"""Bad ONNX input gives one line naming the file and the node or tensor at
fault, and a non-zero exit."""
