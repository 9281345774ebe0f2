//===- region.cpp - mapping files, wrapping memory --------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "region.h"

#include "status.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mnemo::rt;

namespace {

constexpr size_t kAlignment = 64;

mnemo_status_code_t codeForErrno(int error) {
  switch (error) {
  case ENOENT:
  case ENOTDIR:
    return MNEMO_STATUS_NOT_FOUND;
  case ENOMEM:
  case EMFILE:
  case ENFILE:
    return MNEMO_STATUS_RESOURCE_EXHAUSTED;
  default:
    return MNEMO_STATUS_UNAVAILABLE;
  }
}

} // namespace

mnemo_status_t mnemo::rt::mapFile(const char *path, const char *role,
                                  Region &out) {
  int fd;
  do
    fd = open(path, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int error = errno;
    return makeStatus(codeForErrno(error), "%s: cannot open the %s: %s", path,
                      role, std::strerror(error));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int error = errno;
    close(fd);
    return makeStatus(codeForErrno(error), "%s: cannot stat the %s: %s", path,
                      role, std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return makeStatus(MNEMO_STATUS_INVALID_ARGUMENT,
                      "%s: the %s is not a regular file", path, role);
  }
  if (st.st_size == 0) {
    close(fd);
    return makeStatus(MNEMO_STATUS_DATA_LOSS, "%s: the %s is empty", path,
                      role);
  }
  if (static_cast<uint64_t>(st.st_size) > SIZE_MAX) {
    close(fd);
    return makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED,
                      "%s: the %s is too large to map", path, role);
  }
  size_t size = static_cast<size_t>(st.st_size);
  void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int error = errno;
  close(fd);
  if (p == MAP_FAILED)
    return makeStatus(codeForErrno(error), "%s: cannot map the %s: %s", path,
                      role, std::strerror(error));
  out.data = static_cast<const uint8_t *>(p);
  out.size = size;
  out.kind = Region::Kind::Mapped;
  return nullptr;
}

mnemo_status_t mnemo::rt::wrapMemory(const void *data, size_t size,
                                     Region &out) {
  if (reinterpret_cast<uintptr_t>(data) % kAlignment == 0) {
    out.data = static_cast<const uint8_t *>(data);
    out.size = size;
    out.kind = Region::Kind::Borrowed;
    return nullptr;
  }
  size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < size)
    return outOfMemory();
  void *copy = std::aligned_alloc(kAlignment, rounded);
  if (!copy)
    return outOfMemory();
  std::memcpy(copy, data, size);
  out.data = static_cast<const uint8_t *>(copy);
  out.size = size;
  out.kind = Region::Kind::Owned;
  return nullptr;
}

void mnemo::rt::releaseRegion(Region &region) {
  switch (region.kind) {
  case Region::Kind::Mapped:
    munmap(const_cast<uint8_t *>(region.data), region.size);
    break;
  case Region::Kind::Owned:
    std::free(const_cast<uint8_t *>(region.data));
    break;
  case Region::Kind::None:
  case Region::Kind::Borrowed:
    break;
  }
  region = Region();
}
