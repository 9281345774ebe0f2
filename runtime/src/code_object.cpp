//===- code_object.cpp - loading the kernels' shared object -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The code object travels inside the artifact. It is checked structurally
// (the dynamic loader is not hardened against malformed ELF), copied into an
// anonymous memfd and opened through /proc/self/fd/N. The memfd stays open
// as long as the code is loaded, so its path names one object only; a path
// still known to the loader from an object that outlived its dlclose is
// skipped.
//
//===----------------------------------------------------------------------===//

#include "code_object.h"

#include "hooks.h"
#include "status.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace mnemo::rt;

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char *kHostArch = "x86_64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char *kHostArch = "aarch64";
#else
#error "the Mnemo runtime supports x86_64 and aarch64 hosts"
#endif

const char *machineName(uint16_t machine) {
  switch (machine) {
  case EM_X86_64:
    return "x86_64";
  case EM_AARCH64:
    return "aarch64";
  case EM_386:
    return "i386";
  case EM_ARM:
    return "arm";
  case EM_RISCV:
    return "riscv";
  default:
    return "another machine";
  }
}

const char *lastDlError() {
  const char *e = dlerror();
  return e ? e : "unknown error";
}

/// Makes libm's symbols visible to objects loaded later with RTLD_LOCAL,
/// once per process (pthread_once: a guarded static needs the C++ runtime).
void loadMathLibrary() {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    if (!dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL))
      (void)dlerror(); // the kernel load will report what is missing
  });
}

/// Writes the /proc/self/fd path of the memfd `fd` (moving it to another
/// descriptor where needed) into `path`; closes `fd` on failure. The
/// dynamic loader knows objects by path: an object that stays loaded after
/// dlclose (linked -z nodelete, or still open elsewhere) keeps the path of
/// its closed memfd, and dlopen would hand that old code back for this
/// one.
mnemo_status_t choosePath(const char *what, int &fd, char *path, size_t size) {
  for (;;) {
    std::snprintf(path, size, "/proc/self/fd/%d", fd);
    void *known = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!known) {
      (void)dlerror();
      return nullptr;
    }
    dlclose(known);
    // Upwards, so this ends at the descriptor limit at the latest.
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
    if (moved < 0) {
      close(fd);
      return makeStatus(MNEMO_STATUS_RESOURCE_EXHAUSTED,
                        "%s: code: no file descriptor whose path names no "
                        "loaded object",
                        what);
    }
    close(fd);
    fd = moved;
  }
}

} // namespace

const char *mnemo::rt::hostArchitecture() { return kHostArch; }

mnemo_status_t mnemo::rt::checkCodeObject(const char *what, const uint8_t *data,
                                          size_t size, uint64_t *imageSize) {
  Elf64_Ehdr header;
  if (size < sizeof(header) || std::memcmp(data, ELFMAG, SELFMAG) != 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: code: not an ELF object (%zu bytes)", what, size);
  std::memcpy(&header, data, sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB ||
      header.e_ident[EI_VERSION] != EV_CURRENT)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: code: not a 64-bit little-endian ELF object", what);
  if (header.e_machine != kHostMachine)
    return makeStatus(MNEMO_STATUS_INCOMPATIBLE,
                      "%s: code: compiled for %s (ELF machine %u), this "
                      "machine is %s",
                      what, machineName(header.e_machine), header.e_machine,
                      kHostArch);
  if (header.e_type != ET_DYN)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: code: not an ELF shared object (type %u)", what,
                      header.e_type);
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      header.e_phoff > size ||
      (size - header.e_phoff) / sizeof(Elf64_Phdr) < header.e_phnum)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: code: program headers lie outside the object", what);
  uint64_t extent = 0;
  unsigned loads = 0;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, data + header.e_phoff + i * sizeof(Elf64_Phdr),
                sizeof(ph));
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC)
      continue;
    if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: code: segment %u lies outside the object", what,
                        i);
    if (ph.p_type != PT_LOAD)
      continue;
    ++loads;
    if (ph.p_filesz > ph.p_memsz || ph.p_vaddr > UINT64_MAX - ph.p_memsz)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: code: segment %u has an invalid size", what, i);
    if (ph.p_vaddr + ph.p_memsz > extent)
      extent = ph.p_vaddr + ph.p_memsz;
  }
  if (loads == 0)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: code: the object has no loadable segment", what);
  *imageSize = extent;
  return nullptr;
}

mnemo_status_t mnemo::rt::loadCodeObject(const char *what, const uint8_t *data,
                                         size_t size, CodeObject &out) {
  uint64_t imageSize = 0;
  MNEMO_RETURN_IF_ERROR(checkCodeObject(what, data, size, &imageSize));
#ifdef MNEMO_RUNTIME_FUZZING
  // Fuzz builds test the loader, not the dynamic linker: a fuzzer can forge
  // the checksum, and dlopen runs whatever initializers an object lists.
  (void)out;
  return nullptr;
#endif
  loadMathLibrary();

  int fd = memfd_create("mnemo-code", MFD_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return makeStatus(error == EMFILE || error == ENFILE || error == ENOMEM
                          ? MNEMO_STATUS_RESOURCE_EXHAUSTED
                          : MNEMO_STATUS_UNAVAILABLE,
                      "%s: code: memfd_create failed: %s", what,
                      std::strerror(error));
  }
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int error = n < 0 ? errno : EIO;
      close(fd);
      return makeStatus(
          error == ENOSPC || error == ENOMEM ? MNEMO_STATUS_RESOURCE_EXHAUSTED
                                             : MNEMO_STATUS_UNAVAILABLE,
          "%s: code: writing the memfd failed: %s", what, std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }

  char path[64];
  MNEMO_RETURN_IF_ERROR(choosePath(what, fd, path, sizeof(path)));
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    mnemo_status_t status = makeStatus(
        MNEMO_STATUS_INCOMPATIBLE, "%s: code: cannot load the code object: %s",
        what, lastDlError());
    close(fd);
    return status;
  }
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) {
    mnemo_status_t status =
        makeStatus(MNEMO_STATUS_INTERNAL, "%s: code: dlinfo failed: %s", what,
                   lastDlError());
    dlclose(handle);
    close(fd);
    return status;
  }
  out.fd = fd;
  out.handle = handle;
  out.begin = static_cast<uintptr_t>(map->l_addr);
  out.end = out.begin + static_cast<uintptr_t>(imageSize);
  return nullptr;
}

mnemo_status_t mnemo::rt::findKernel(const char *what, const CodeObject &code,
                                     const char *symbol, KernelFn *out) {
#ifdef MNEMO_RUNTIME_FUZZING
  (void)what, (void)code, (void)symbol;
  *out = [](void **) { __builtin_trap(); };
  return nullptr;
#endif
  (void)dlerror();
  void *p = dlsym(code.handle, symbol);
  if (!p)
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: kernel '%s' is not in the code object: %s", what,
                      symbol, lastDlError());
  if (!code.contains(p))
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: kernel '%s' is not defined by the code object", what,
                      symbol);
  *out = reinterpret_cast<KernelFn>(p);
  return nullptr;
}

namespace {

/// Whether the image bytes [offset, offset + bytes) lie in a segment that
/// stays writable after loading: a writable PT_LOAD, outside PT_GNU_RELRO
/// (which the loader makes read-only after relocating).
bool isWritableData(const uint8_t *data, uint64_t offset, uint64_t bytes) {
  Elf64_Ehdr header;
  std::memcpy(&header, data, sizeof(header));
  bool writable = false;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, data + header.e_phoff + i * sizeof(Elf64_Phdr),
                sizeof(ph));
    bool covers = offset >= ph.p_vaddr && bytes <= ph.p_memsz &&
                  offset - ph.p_vaddr <= ph.p_memsz - bytes;
    bool overlaps =
        offset < ph.p_vaddr + ph.p_memsz && ph.p_vaddr < offset + bytes;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) && covers)
      writable = true;
    if (ph.p_type == PT_GNU_RELRO && overlaps)
      return false;
  }
  return writable;
}

} // namespace

mnemo_status_t mnemo::rt::installHooks(const char *what, const uint8_t *data,
                                       size_t size, CodeObject &code) {
#ifdef MNEMO_RUNTIME_FUZZING
  // As findKernel: nothing was loaded.
  (void)what, (void)data, (void)size, (void)code;
  return nullptr;
#endif
  (void)size; // checkCodeObject bounded the program headers
  (void)dlerror();
  void *p = dlsym(code.handle, kHooksSymbol);
  // Absent, or found in a dependency rather than the object: no hooks.
  if (!p || !code.contains(p)) {
    (void)dlerror();
    return nullptr;
  }
  // The symbol's size tells the table of older code (two slots) from one
  // with the alloc and free slots; writing four slots into a two-slot
  // table would overwrite whatever the code placed after it. Without a
  // size (no symbol entry), assume the older, smaller table.
  constexpr uint64_t kMinSize = kHooksTableMinSize;
  uint64_t bytes = kMinSize;
  Dl_info info;
  void *entry = nullptr; // the symbol's Elf64_Sym
  if (dladdr1(p, &info, &entry, RTLD_DL_SYMENT) && entry) {
    bytes = static_cast<const Elf64_Sym *>(entry)->st_size;
    if (bytes < kMinSize)
      return makeStatus(MNEMO_STATUS_DATA_LOSS,
                        "%s: code: '%s' is %llu bytes, the hooks table takes "
                        "%llu",
                        what, kHooksSymbol,
                        static_cast<unsigned long long>(bytes),
                        static_cast<unsigned long long>(kMinSize));
  }
  // A larger table (a newer compiler's) gets the slots the runtime knows.
  uint64_t fill = bytes >= sizeof(HooksTable) ? sizeof(HooksTable) : kMinSize;
  auto address = reinterpret_cast<uintptr_t>(p);
  if (address % alignof(HooksTable) != 0 || code.end - address < fill ||
      !isWritableData(data, address - code.begin, fill))
    return makeStatus(MNEMO_STATUS_DATA_LOSS,
                      "%s: code: '%s' is not aligned, writable data of the "
                      "code object",
                      what, kHooksSymbol);
  HooksTable hooks = runtimeHooks();
  std::memcpy(p, &hooks, static_cast<size_t>(fill));
  code.hasHooks = true;
  code.hasAllocHooks = fill == sizeof(HooksTable);
  return nullptr;
}

void mnemo::rt::unloadCodeObject(CodeObject &code) {
  // Close the memfd only after dlclose, so that no other object is opened
  // under the same /proc/self/fd path while this one is still known.
  if (code.handle)
    dlclose(code.handle);
  if (code.fd >= 0)
    close(code.fd);
  code = CodeObject();
}
