// RUN: mnemo-opt %s --mnemo-generate-concats --canonicalize | FileCheck %s

// concat(past, new) along the token dim, the past generated from its
// indices (a stand-in for a paged-cache gather) and one new token: one
// generic without inputs, each element selected between the generator at
// the clamped index and the new token.
// CHECK-LABEL: func.func @generated_past
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x?x32xf32>)
// CHECK: %[[T:.*]] = linalg.index 2 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[T]], %[[P:.*]] : index
// CHECK: %[[AT:.*]] = arith.minui %[[T]], %{{.*}} : index
// CHECK: %[[X:.*]] = tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %[[AT]], %{{.*}}] : tensor<?x2x64x32xf32>
// CHECK: %[[BACK:.*]] = arith.subi %[[T]], %[[P]] : index
// CHECK: %[[K:.*]] = arith.select %[[FIRST]], %{{.*}}, %[[BACK]] : index
// CHECK: %[[N:.*]] = tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %[[K]], %{{.*}}] : tensor<?x2x1x32xf32>
// CHECK: %[[Y:.*]] = arith.select %[[FIRST]], %[[X]], %[[N]] : f32
// CHECK: linalg.yield %[[Y]]
// CHECK: return %[[G]]
func.func @generated_past(%pool: tensor<?x2x64x32xf32>, %new: tensor<?x2x1x32xf32>,
                          %p: index) -> tensor<?x2x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %new, %c0 : tensor<?x2x1x32xf32>
  %e = tensor.empty(%b, %p) : tensor<?x2x?x32xf32>
  %past = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x2x?x32xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %x = tensor.extract %pool[%i0, %i1, %i2, %i3] : tensor<?x2x64x32xf32>
    linalg.yield %x : f32
  } -> tensor<?x2x?x32xf32>
  %t = arith.addi %p, %c1 : index
  %all = tensor.empty(%b, %t) : tensor<?x2x?x32xf32>
  %a = tensor.insert_slice %past into %all[0, 0, 0, 0] [%b, 2, %p, 32] [1, 1, 1, 1]
      : tensor<?x2x?x32xf32> into tensor<?x2x?x32xf32>
  %c = tensor.insert_slice %new into %a[0, 0, %p, 0] [%b, 2, 1, 32] [1, 1, 1, 1]
      : tensor<?x2x1x32xf32> into tensor<?x2x?x32xf32>
  return %c : tensor<?x2x?x32xf32>
}

// New tokens of a dynamic count (a prefill's) might be none, where reading
// one at a clamped index would be out of bounds: left as it is.
// CHECK-LABEL: func.func @dynamic_new
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
func.func @dynamic_new(%new: tensor<?x2x?x32xf32>, %p: index) -> tensor<?x2x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %new, %c0 : tensor<?x2x?x32xf32>
  %s = tensor.dim %new, %c2 : tensor<?x2x?x32xf32>
  %e = tensor.empty(%b, %p) : tensor<?x2x?x32xf32>
  %past = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x2x?x32xf32>) {
  ^bb0(%out: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  } -> tensor<?x2x?x32xf32>
  %t = arith.addi %p, %s : index
  %all = tensor.empty(%b, %t) : tensor<?x2x?x32xf32>
  %a = tensor.insert_slice %past into %all[0, 0, 0, 0] [%b, 2, %p, 32] [1, 1, 1, 1]
      : tensor<?x2x?x32xf32> into tensor<?x2x?x32xf32>
  %c = tensor.insert_slice %new into %a[0, 0, %p, 0] [%b, 2, %s, 32] [1, 1, 1, 1]
      : tensor<?x2x?x32xf32> into tensor<?x2x?x32xf32>
  return %c : tensor<?x2x?x32xf32>
}

// A first part read from memory is a plain concat: left as it is.
// CHECK-LABEL: func.func @stored_past
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
func.func @stored_past(%past: tensor<?x2x?x32xf32>, %new: tensor<?x2x1x32xf32>,
                       %p: index) -> tensor<?x2x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %new, %c0 : tensor<?x2x1x32xf32>
  %t = arith.addi %p, %c1 : index
  %all = tensor.empty(%b, %t) : tensor<?x2x?x32xf32>
  %a = tensor.insert_slice %past into %all[0, 0, 0, 0] [%b, 2, %p, 32] [1, 1, 1, 1]
      : tensor<?x2x?x32xf32> into tensor<?x2x?x32xf32>
  %c = tensor.insert_slice %new into %a[0, 0, %p, 0] [%b, 2, 1, 32] [1, 1, 1, 1]
      : tensor<?x2x1x32xf32> into tensor<?x2x?x32xf32>
  return %c : tensor<?x2x?x32xf32>
}
