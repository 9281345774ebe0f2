//===- cli.cpp - mnemo-run's messages, names and timing ---------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "cli.h"
#include "npy.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sys/stat.h>

int mnemo::run::fail(const std::string &subject, const std::string &reason) {
  std::fprintf(stderr, "mnemo-run: error: %s: %s\n", subject.c_str(),
               reason.c_str());
  return 1;
}

int mnemo::run::fail(mnemo_status_t status) {
  std::fprintf(stderr, "mnemo-run: error: %s\n", mnemo_status_message(status));
  mnemo_status_free(status);
  return 1;
}

std::string mnemo::run::formatShape(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

std::string mnemo::run::fileNameFor(const char *name) {
  std::string s = name;
  for (char &c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      c = '_';
  if (s.empty() || s == "." || s == "..")
    s = "output";
  return s;
}

int mnemo::run::makeOutputDir(const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return fail(dir, std::string("cannot create the directory: ") +
                         std::strerror(errno));
  return -1;
}

double mnemo::run::nowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double mnemo::run::median(std::vector<double> &times) {
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

int mnemo::run::setWeights(
    mnemo_model_t *model,
    const std::vector<std::pair<std::string, std::string>> &weights) {
  for (const auto &[name, file] : weights) {
    mnemo::npy::Array a;
    std::string error;
    if (!mnemo::npy::read(file.c_str(), a, error))
      return fail(file, error);
    if (mnemo_status_t status = mnemo_model_set_weight(
            model, name.c_str(), a.dtype, a.shape.data(), a.shape.size(),
            a.data.get()))
      return fail(status);
  }
  return -1;
}
