//===- RopeFrequencies.cpp - rotary inverse frequencies ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Follows Hugging Face transformers' modeling_rope_utils, the reference
// semantics for checkpoints.
//
//===----------------------------------------------------------------------===//

#include "dialects/Mnemo/IR/RopeFrequencies.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::mnemo;

namespace {
constexpr double kPi = 3.14159265358979323846;

/// YaRN: the dimension whose wavelength completes `rotations` turns over the
/// original context.
double yarnCorrectionDim(double rotations, int64_t dim, double base,
                         int64_t originalMax) {
  return (dim * std::log(originalMax / (rotations * 2 * kPi))) /
         (2 * std::log(base));
}

void applyYarn(llvm::SmallVectorImpl<double> &invFreq, double theta,
               int64_t dim, RopeScalingAttr s) {
  double low = yarnCorrectionDim(s.betaFast(), dim, theta,
                                 s.getOriginalMaxPosition());
  double high = yarnCorrectionDim(s.betaSlow(), dim, theta,
                                  s.getOriginalMaxPosition());
  if (s.getTruncate()) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high)
    high += 0.001;
  for (auto [k, f] : llvm::enumerate(invFreq)) {
    double ramp = std::clamp((k - low) / (high - low), 0.0, 1.0);
    double extrapolation = 1.0 - ramp;
    double interpolated = f / s.factor();
    f = interpolated * (1.0 - extrapolation) + f * extrapolation;
  }
}

void applyLlama3(llvm::SmallVectorImpl<double> &invFreq, RopeScalingAttr s) {
  double factor = s.factor();
  double oldContext = static_cast<double>(s.getOriginalMaxPosition());
  double lowWavelen = oldContext / s.lowFreqFactor();
  double highWavelen = oldContext / s.highFreqFactor();
  for (double &f : invFreq) {
    double wavelen = 2 * kPi / f;
    if (wavelen > lowWavelen) {
      f /= factor;
    } else if (wavelen >= highWavelen) {
      double smooth = (oldContext / wavelen - s.lowFreqFactor()) /
                      (s.highFreqFactor() - s.lowFreqFactor());
      f = (1 - smooth) * f / factor + smooth * f;
    }
  }
}
} // namespace

llvm::SmallVector<double>
mlir::mnemo::computeRopeInverseFrequencies(double theta, int64_t rotaryDim,
                                           RopeScalingAttr scaling) {
  llvm::SmallVector<double> invFreq;
  for (int64_t k = 0; k < rotaryDim / 2; ++k)
    invFreq.push_back(1.0 / std::pow(theta, (2.0 * k) / rotaryDim));
  if (!scaling)
    return invFreq;
  switch (scaling.getKind()) {
  case RopeScalingKind::None:
  case RopeScalingKind::Dynamic:
    break;
  case RopeScalingKind::Linear:
    for (double &f : invFreq)
      f /= scaling.factor();
    break;
  case RopeScalingKind::Yarn:
    applyYarn(invFreq, theta, rotaryDim, scaling);
    break;
  case RopeScalingKind::Llama3:
    applyLlama3(invFreq, scaling);
    break;
  }
  return invFreq;
}

double mlir::mnemo::dynamicNtkBase(double theta, int64_t rotaryDim,
                                   double factor, int64_t originalMaxPosition,
                                   int64_t seqLen) {
  double seq = static_cast<double>(std::max(seqLen, originalMaxPosition));
  double ratio = factor * seq / originalMaxPosition - (factor - 1);
  return theta *
         std::pow(ratio, static_cast<double>(rotaryDim) / (rotaryDim - 2));
}
