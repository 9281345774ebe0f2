// RUN: mnemo-opt %s --mnemo-approximate-math="expand-pow=true" | FileCheck %s
// RUN: mnemo-opt %s --mnemo-approximate-math | FileCheck %s --check-prefix=KEEP

// With expand-pow (the NVPTX pipeline's: libdevice's __nv_powf would be
// an unresolved symbol of the PTX), a constant exponent of 2 is a product
// and any other powf becomes exp and log, themselves polynomials (fma and
// the like, which the target has, remain). Without it (the CPU's, which
// calls libm), powf stays.

// CHECK-LABEL: func.func @square
// CHECK:         %[[R:.*]] = arith.mulf %arg0, %arg0 : f32
// CHECK-NEXT:    return %[[R]]
// KEEP-LABEL:  func.func @square
// KEEP:          math.powf
func.func @square(%x: f32) -> f32 {
  %c2 = arith.constant 2.0 : f32
  %y = math.powf %x, %c2 : f32
  return %y : f32
}

// CHECK-LABEL: func.func @general
// CHECK-NOT:     math.{{powf|exp|log}}
// CHECK:         return
// KEEP-LABEL:  func.func @general
// KEEP:          math.powf
func.func @general(%x: f32, %e: f32) -> f32 {
  %y = math.powf %x, %e : f32
  return %y : f32
}

// A narrower float's powf is computed in f32.
// CHECK-LABEL: func.func @half
// CHECK:         arith.extf %arg0 : f16 to f32
// CHECK-NOT:     math.{{powf|exp|log}}
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// KEEP-LABEL:  func.func @half
// KEEP:          math.powf
func.func @half(%x: f16, %e: f16) -> f16 {
  %y = math.powf %x, %e : f16
  return %y : f16
}
