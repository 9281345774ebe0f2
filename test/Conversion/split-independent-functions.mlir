// RUN: mnemo-opt %s --mnemo-split-independent-functions | FileCheck %s --check-prefix=SPLIT
// RUN: mnemo-opt %s --mnemo-split-independent-functions --mnemo-merge-nested-modules | FileCheck %s --check-prefix=ROUND

// Functions that share nothing go to modules of their own; a helper and a
// global go with their users; a declaration joins no group, each of its
// users' groups gets a copy; every nested module carries the top module's
// attributes.
// SPLIT: module attributes {mnemo.tag = 7 : i64} {
// SPLIT-NEXT: module attributes {mnemo.tag = 7 : i64} {
// SPLIT-NEXT: func.func private @runtime_hook(
// SPLIT-NEXT: memref.global "private" constant @table
// SPLIT-NEXT: func.func @first(
// SPLIT: func.func private @helper(
// SPLIT: module attributes {mnemo.tag = 7 : i64} {
// SPLIT-NEXT: func.func @second(
// SPLIT: module attributes {mnemo.tag = 7 : i64} {
// SPLIT-NEXT: func.func private @runtime_hook(
// SPLIT-NEXT: func.func @third(
// SPLIT: call @helper_of_third
// SPLIT: func.func private @helper_of_third(
// And back, group by group, the declaration once.
// ROUND: module attributes {mnemo.tag = 7 : i64} {
// ROUND-NEXT: func.func private @runtime_hook(
// ROUND-NEXT: memref.global "private" constant @table
// ROUND-NEXT: func.func @first(
// ROUND: func.func private @helper(
// ROUND: func.func @second(
// ROUND-NOT: @runtime_hook(
// ROUND: func.func @third(
// ROUND: func.func private @helper_of_third(
// ROUND-NOT: module
module attributes {mnemo.tag = 7 : i64} {
  memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
  func.func private @runtime_hook(f32)
  func.func @first(%x: f32) -> f32 {
    %t = memref.get_global @table : memref<2xf32>
    call @runtime_hook(%x) : (f32) -> ()
    %y = call @helper(%x) : (f32) -> f32
    return %y : f32
  }
  func.func @second(%x: f32) -> f32 {
    %y = arith.addf %x, %x : f32
    return %y : f32
  }
  func.func private @helper(%x: f32) -> f32 {
    return %x : f32
  }
  func.func @third(%x: f32) -> f32 {
    call @runtime_hook(%x) : (f32) -> ()
    %y = call @helper_of_third(%x) : (f32) -> f32
    return %y : f32
  }
  func.func private @helper_of_third(%x: f32) -> f32 {
    %y = arith.mulf %x, %x : f32
    return %y : f32
  }
}
