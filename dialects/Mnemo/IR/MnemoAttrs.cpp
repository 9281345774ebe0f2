//===- MnemoAttrs.cpp - mnemo dialect attributes ----------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/MnemoAttrs.h"
#include "dialects/Mnemo/IR/MnemoDialect.h"
#include "dialects/Mnemo/IR/MnemoOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;

#include "dialects/Mnemo/IR/MnemoEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Mnemo/IR/MnemoAttrs.cpp.inc"

void MnemoDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Mnemo/IR/MnemoAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// RopeScalingAttr
//===----------------------------------------------------------------------===//

namespace {
/// Shortest readable form of a parameter value for diagnostics.
std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// Which keyword parameters each scaling kind accepts.
bool acceptsParameter(RopeScalingKind kind, StringRef key) {
  switch (kind) {
  case RopeScalingKind::None:
    return false;
  case RopeScalingKind::Linear:
    return key == "factor";
  case RopeScalingKind::Dynamic:
    return key == "factor" || key == "original_max_position";
  case RopeScalingKind::Yarn:
    return llvm::is_contained({"factor", "original_max_position", "beta_fast",
                               "beta_slow", "attention_factor", "truncate"},
                              key);
  case RopeScalingKind::Llama3:
    return llvm::is_contained({"factor", "original_max_position",
                               "low_freq_factor", "high_freq_factor"},
                              key);
  }
  return false;
}
} // namespace

// Syntax: `<` kind (`,` key `=` value)* `>`; keys are snake_case.
Attribute RopeScalingAttr::parse(AsmParser &parser, Type) {
  std::string kindName;
  if (parser.parseLess() || parser.parseKeywordOrString(&kindName))
    return {};
  std::optional<RopeScalingKind> kind = symbolizeRopeScalingKind(kindName);
  if (!kind) {
    parser.emitError(parser.getCurrentLocation(),
                     "unknown rope scaling kind '")
        << kindName << "' (expected none, linear, dynamic, yarn or llama3)";
    return {};
  }
  double factor = 1.0, lowFreq = 1.0, highFreq = 4.0, betaFast = 32.0,
         betaSlow = 1.0;
  int64_t originalMax = 0;
  std::optional<double> attentionFactor;
  bool truncate = true;
  llvm::StringSet<> seen;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (!seen.insert(key).second) {
      parser.emitError(keyLoc, "duplicate rope scaling parameter '")
          << key << "'";
      return {};
    }
    if (!acceptsParameter(*kind, key)) {
      parser.emitError(keyLoc, "rope scaling parameter '")
          << key << "' does not apply to '" << kindName << "' scaling";
      return {};
    }
    ParseResult result = success();
    if (key == "original_max_position") {
      result = parser.parseInteger(originalMax);
    } else if (key == "truncate") {
      StringRef value;
      result = parser.parseKeyword(&value);
      if (succeeded(result) && value != "true" && value != "false") {
        parser.emitError(keyLoc, "'truncate' must be true or false");
        return {};
      }
      truncate = value == "true";
    } else {
      double value;
      result = parser.parseFloat(value);
      if (key == "factor")
        factor = value;
      else if (key == "low_freq_factor")
        lowFreq = value;
      else if (key == "high_freq_factor")
        highFreq = value;
      else if (key == "beta_fast")
        betaFast = value;
      else if (key == "beta_slow")
        betaSlow = value;
      else
        attentionFactor = value;
    }
    if (failed(result))
      return {};
  }
  if (parser.parseGreater())
    return {};
  std::optional<APFloat> af;
  if (attentionFactor)
    af = APFloat(*attentionFactor);
  return parser.getChecked<RopeScalingAttr>(
      parser.getContext(), *kind, APFloat(factor), originalMax,
      APFloat(lowFreq), APFloat(highFreq), APFloat(betaFast), APFloat(betaSlow),
      af, truncate);
}

void RopeScalingAttr::print(AsmPrinter &printer) const {
  RopeScalingKind kind = getKind();
  printer << "<" << stringifyRopeScalingKind(kind);
  auto printFloat = [&](StringRef key, const APFloat &value) {
    if (acceptsParameter(kind, key)) {
      printer << ", " << key << " = ";
      printer.printFloat(value);
    }
  };
  printFloat("factor", getFactor());
  if (acceptsParameter(kind, "original_max_position"))
    printer << ", original_max_position = " << getOriginalMaxPosition();
  printFloat("low_freq_factor", getLowFreqFactor());
  printFloat("high_freq_factor", getHighFreqFactor());
  printFloat("beta_fast", getBetaFast());
  printFloat("beta_slow", getBetaSlow());
  if (std::optional<APFloat> af = getAttentionFactor())
    printFloat("attention_factor", *af);
  if (acceptsParameter(kind, "truncate") && !getTruncate())
    printer << ", truncate = false";
  printer << ">";
}

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        RopeScalingKind kind, APFloat factorAP,
                        int64_t originalMaxPosition, APFloat lowFreqAP,
                        APFloat highFreqAP, APFloat betaFastAP,
                        APFloat betaSlowAP,
                        std::optional<APFloat> attentionFactorAP,
                        bool truncate) {
  double factor = factorAP.convertToDouble();
  double lowFreqFactor = lowFreqAP.convertToDouble();
  double highFreqFactor = highFreqAP.convertToDouble();
  double betaFast = betaFastAP.convertToDouble();
  double betaSlow = betaSlowAP.convertToDouble();
  if (kind == RopeScalingKind::None)
    return success();
  if (!(factor > 0.0) || !std::isfinite(factor))
    return emitError() << "rope scaling factor must be positive, got "
                       << fmt(factor);
  if (kind != RopeScalingKind::Linear && originalMaxPosition <= 0)
    return emitError() << "'" << stringifyRopeScalingKind(kind)
                       << "' rope scaling needs a positive "
                          "original_max_position";
  if (kind == RopeScalingKind::Llama3 &&
      !(lowFreqFactor > 0.0 && highFreqFactor > lowFreqFactor))
    return emitError() << "llama3 rope scaling needs 0 < low_freq_factor < "
                          "high_freq_factor, got "
                       << fmt(lowFreqFactor) << " and " << fmt(highFreqFactor);
  if (kind == RopeScalingKind::Yarn && !(betaSlow > 0.0 && betaFast > betaSlow))
    return emitError() << "yarn rope scaling needs 0 < beta_slow < beta_fast, "
                          "got "
                       << fmt(betaSlow) << " and " << fmt(betaFast);
  if (attentionFactorAP && !(attentionFactorAP->convertToDouble() > 0.0))
    return emitError() << "yarn attention_factor must be positive, got "
                       << fmt(attentionFactorAP->convertToDouble());
  return success();
}

double RopeScalingAttr::getEffectiveAttentionFactor() const {
  if (getKind() != RopeScalingKind::Yarn)
    return 1.0;
  if (std::optional<APFloat> af = getAttentionFactor())
    return af->convertToDouble();
  double factor = this->factor();
  return factor <= 1.0 ? 1.0 : 0.1 * std::log(factor) + 1.0;
}
