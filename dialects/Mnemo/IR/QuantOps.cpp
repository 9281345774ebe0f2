//===- QuantOps.cpp - mnemo weight quantization ops -------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoOps.h"
#include "dialects/Mnemo/IR/ShapeChecks.h"

using namespace mlir;
using namespace mlir::mnemo;
using namespace mlir::mnemo::shape_checks;

LogicalResult DequantizeOp::verify() {
  Operation *op = getOperation();
  RankedTensorType codes = getCodes().getType(), scales = getScales().getType(),
                   r = getResult().getType();
  int64_t rank = r.getRank();
  if (rank < 1)
    return emitOpError() << "expects a result of rank >= 1";
  if (failed(checkRank(op, codes, rank, "codes", "(the result's)")) ||
      failed(checkRank(op, scales, rank, "scales", "(the result's)")) ||
      failed(checkStatic(op, r, rank - 1, "the result's last dimension")))
    return failure();
  int64_t group = getGroupSize();
  if (group < 1)
    return emitOpError() << "group size must be positive, got " << group;
  int64_t columns = r.getDimSize(rank - 1);
  int64_t packed = isPacked() ? llvm::divideCeil(columns, 2) : columns;
  int64_t groups = llvm::divideCeil(columns, group);
  StringRef format = stringifyQuantFormat(getFormat());
  for (int64_t d = 0; d + 1 < rank; ++d) {
    std::string what = "dimension " + std::to_string(d);
    if (failed(checkDim(op, codes, d, r.getDimSize(d), "codes " + what,
                        "the result's")) ||
        failed(checkDim(op, scales, d, r.getDimSize(d), "scales " + what,
                        "the result's")))
      return failure();
  }
  std::string codesOf =
      (format + " codes of " + std::to_string(columns) + " columns").str();
  std::string groupsOf = "groups of " + std::to_string(group) + " in " +
                         std::to_string(columns) + " columns";
  if (failed(checkDim(op, codes, rank - 1, packed, "codes per row",
                      codesOf)) ||
      failed(checkDim(op, scales, rank - 1, groups, "scales per row",
                      groupsOf)))
    return failure();
  if (Value z = getZeroPoints()) {
    if (getFormat() == QuantFormat::NF4 || getFormat() == QuantFormat::FP8E4M3)
      return emitOpError() << stringifyQuantFormat(getFormat())
                           << " takes no zero points";
    auto zt = cast<RankedTensorType>(z.getType());
    if (failed(checkRank(op, zt, rank, "zero_points", "(the scales')")))
      return failure();
    for (int64_t d = 0; d < rank; ++d)
      if (failed(checkDim(op, zt, d, scales.getDimSize(d),
                          "zero_points dimension " + std::to_string(d),
                          "the scales'")))
        return failure();
  }
  return success();
}
