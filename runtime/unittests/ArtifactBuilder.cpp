//===- ArtifactBuilder.cpp - artifacts built in memory for tests *- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"

#include "crc32.h"

#include <cstring>
#include <elf.h>

using namespace mnemo::test;

namespace {

/// Appends `value`'s bytes (little-endian hosts only, as the runtime).
template <typename T> size_t append(std::string &out, const T &value) {
  size_t at = out.size();
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
  return at;
}

void alignTo(std::string &out, size_t alignment) {
  out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
}

/// A data object of the code object: its name and size in bytes.
struct DataSymbol {
  std::string name;
  uint64_t size = 8;
};

/// A minimal ELF shared object defining `symbols` as zeroed data objects in
/// one writable, non-executable segment, with libc as its only dependency
/// (so that dlsym finds libc's symbols through it, as through mnemoc's
/// code). No section headers, no relocations, no code.
std::string buildSymbolObject(const std::vector<DataSymbol> &symbols) {
  constexpr unsigned kPhnum = 3; // PT_LOAD, PT_DYNAMIC, PT_GNU_STACK
  std::string strtab(1, '\0');
  auto addString = [&](const std::string &s) {
    auto at = static_cast<Elf64_Word>(strtab.size());
    strtab += s;
    strtab += '\0';
    return at;
  };
  Elf64_Word libc = addString("libc.so.6");
  std::vector<Elf64_Word> names;
  for (const DataSymbol &s : symbols)
    names.push_back(addString(s.name));

  // Everything after the headers, at offsets equal to addresses.
  std::string image(sizeof(Elf64_Ehdr) + kPhnum * sizeof(Elf64_Phdr), '\0');
  alignTo(image, 8);
  size_t symtab = image.size();
  append(image, Elf64_Sym{});
  std::vector<size_t> symbolAt;
  for (size_t i = 0; i < symbols.size(); ++i) {
    Elf64_Sym sym{};
    sym.st_name = names[i];
    sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
    sym.st_other = STV_DEFAULT;
    sym.st_shndx = 1; // defined (any index but UNDEF and the reserved ones)
    sym.st_size = symbols[i].size;
    symbolAt.push_back(append(image, sym));
  }
  size_t strtabAt = image.size();
  image += strtab;
  // DT_HASH with one bucket: every name hashes to it, and the chain visits
  // every symbol.
  alignTo(image, 4);
  size_t hash = image.size();
  auto nchain = static_cast<Elf64_Word>(symbols.size() + 1);
  append(image, Elf64_Word(1));
  append(image, nchain);
  append(image, Elf64_Word(symbols.empty() ? 0 : 1));
  for (Elf64_Word i = 0; i < nchain; ++i)
    append(image, Elf64_Word(i == 0 || i + 1 == nchain ? 0 : i + 1));
  alignTo(image, 8);
  for (size_t i = 0; i < symbols.size(); ++i) {
    Elf64_Sym sym;
    std::memcpy(&sym, &image[symbolAt[i]], sizeof(sym));
    sym.st_value = image.size();
    std::memcpy(&image[symbolAt[i]], &sym, sizeof(sym));
    image.append(symbols[i].size, '\0');
    alignTo(image, 8);
  }
  alignTo(image, 8);
  size_t dynamic = image.size();
  for (Elf64_Dyn d :
       {Elf64_Dyn{DT_NEEDED, {libc}}, Elf64_Dyn{DT_HASH, {hash}},
        Elf64_Dyn{DT_STRTAB, {strtabAt}}, Elf64_Dyn{DT_SYMTAB, {symtab}},
        Elf64_Dyn{DT_STRSZ, {strtab.size()}},
        Elf64_Dyn{DT_SYMENT, {sizeof(Elf64_Sym)}}, Elf64_Dyn{DT_NULL, {0}}})
    append(image, d);

  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_ident[EI_OSABI] = ELFOSABI_SYSV;
  header.e_type = ET_DYN;
#if defined(__x86_64__)
  header.e_machine = EM_X86_64;
#else
  header.e_machine = EM_AARCH64;
#endif
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = kPhnum;
  std::memcpy(&image[0], &header, sizeof(header));
  Elf64_Phdr phdrs[kPhnum]{};
  phdrs[0].p_type = PT_LOAD;
  phdrs[0].p_flags = PF_R | PF_W;
  phdrs[0].p_filesz = phdrs[0].p_memsz = image.size();
  phdrs[0].p_align = 0x10000; // any page size up to 64 KiB
  phdrs[1].p_type = PT_DYNAMIC;
  phdrs[1].p_flags = PF_R | PF_W;
  phdrs[1].p_offset = phdrs[1].p_vaddr = phdrs[1].p_paddr = dynamic;
  phdrs[1].p_filesz = phdrs[1].p_memsz = image.size() - dynamic;
  phdrs[1].p_align = 8;
  phdrs[2].p_type = PT_GNU_STACK;
  phdrs[2].p_flags = PF_R | PF_W;
  phdrs[2].p_align = 16;
  std::memcpy(&image[sizeof(Elf64_Ehdr)], phdrs, sizeof(phdrs));
  return image;
}

} // namespace

const std::string &mnemo::test::codeObject() {
  static const std::string bytes = buildSymbolObject({{kSymbolA}, {kSymbolB}});
  return bytes;
}

std::string mnemo::test::codeObjectWithHooks(uint64_t hooksSize) {
  return buildSymbolObject({{kSymbolA}, {kSymbolB}, {kHooks, hooksSize}});
}

const char *mnemo::test::hostTriple() {
#if defined(__x86_64__)
  return "x86_64-unknown-linux-gnu";
#else
  return "aarch64-unknown-linux-gnu";
#endif
}

std::unique_ptr<fb::TensorSigT>
mnemo::test::sig(const std::string &name, fb::DType dtype,
                 std::vector<int64_t> shape, std::vector<int64_t> maxShape) {
  auto t = std::make_unique<fb::TensorSigT>();
  t->name = name;
  t->dtype = dtype;
  t->shape = std::move(shape);
  t->max_shape = maxShape.empty() ? t->shape : std::move(maxShape);
  return t;
}

std::unique_ptr<fb::CallT> mnemo::test::call(uint32_t kernel,
                                             std::vector<uint32_t> args,
                                             std::vector<uint32_t> results) {
  auto c = std::make_unique<fb::CallT>();
  c->kernel = kernel;
  c->args = std::move(args);
  c->results = std::move(results);
  return c;
}

bool mnemo::test::resign(std::string &bytes) {
  if (bytes.size() < 12)
    return false;
  uint32_t n;
  std::memcpy(&n, bytes.data(), 4);
  if (n > bytes.size() - 4 || n < 8)
    return false;
  auto *data = reinterpret_cast<uint8_t *>(&bytes[0]);
  flatbuffers::Verifier verifier(data, size_t(n) + 4);
  if (!fb::VerifySizePrefixedArtifactBuffer(verifier))
    return false;
  const fb::Artifact *a = fb::GetSizePrefixedArtifact(data);
  if (!a->metadata_crc32())
    return false;
  const uint8_t *field =
      reinterpret_cast<const flatbuffers::Table *>(a)->GetAddressOf(
          fb::Artifact::VT_METADATA_CRC32);
  uint8_t *p = data + (field - data);
  std::memset(p, 0, 4);
  uint32_t crc = mnemo::rt::crc32(0, data + 4, n);
  std::memcpy(p, &crc, 4);
  return true;
}

ArtifactBuilder::ArtifactBuilder() {
  artifact.abi_version = MNEMO_ARTIFACT_ABI_VERSION;
  artifact.target = std::make_unique<fb::TargetT>();
  artifact.target->triple = hostTriple();
  artifact.target->cpu = "generic";
  artifact.code_format = fb::CodeFormat::ELF_SHARED_OBJECT;
  const std::string &code = codeObject();
  artifact.code.assign(code.begin(), code.end());
  artifact.provenance = std::make_unique<fb::ProvenanceT>();
  artifact.provenance->compiler = "unit test";
  artifact.provenance->source = "ArtifactBuilder";
}

uint32_t ArtifactBuilder::addKernel(const std::string &symbol, uint32_t numArgs,
                                    uint32_t numResults,
                                    std::vector<uint32_t> argRanks,
                                    std::vector<uint32_t> resultRanks) {
  auto k = std::make_unique<fb::KernelT>();
  k->symbol = symbol;
  k->num_args = numArgs;
  k->num_results = numResults;
  k->arg_ranks = std::move(argRanks);
  k->result_ranks = std::move(resultRanks);
  artifact.kernels.push_back(std::move(k));
  return static_cast<uint32_t>(artifact.kernels.size() - 1);
}

uint32_t ArtifactBuilder::addWeight(const std::string &name,
                                    std::vector<int64_t> shape,
                                    const std::vector<float> &values) {
  auto w = std::make_unique<fb::WeightT>();
  w->name = name;
  w->dtype = fb::DType::F32;
  w->shape = std::move(shape);
  w->size = values.size() * sizeof(float);
  artifact.weights.push_back(std::move(w));
  weightBytes.emplace_back(reinterpret_cast<const char *>(values.data()),
                           values.size() * sizeof(float));
  return static_cast<uint32_t>(artifact.weights.size() - 1);
}

fb::FunctionT &ArtifactBuilder::addFunction(const std::string &name) {
  auto f = std::make_unique<fb::FunctionT>();
  f->name = name;
  artifact.functions.push_back(std::move(f));
  return *artifact.functions.back();
}

std::string ArtifactBuilder::build() {
  std::string segment;
  for (size_t k = 0; k < weightBytes.size(); ++k) {
    segment.resize((segment.size() + 63) / 64 * 64, '\0');
    artifact.weights[k]->offset = segment.size();
    segment += weightBytes[k];
  }
  artifact.weights_size = segment.size();
  artifact.weights_file = sideFile;
  auto pack = [&] {
    flatbuffers::FlatBufferBuilder b;
    b.FinishSizePrefixed(fb::Artifact::Pack(b, &artifact),
                         fb::ArtifactIdentifier());
    return std::string(reinterpret_cast<const char *>(b.GetBufferPointer()),
                       b.GetSize());
  };
  // The size does not depend on these two values (both always present).
  artifact.weights_offset = uint64_t(1) << 40;
  if (checksum)
    artifact.metadata_crc32 = 0;
  std::string metadata = pack();
  artifact.weights_offset =
      sideFile.empty() ? (metadata.size() + 63) / 64 * 64 : 64;
  uint64_t padTo = artifact.weights_offset;
  if (forceWeightsOffset)
    artifact.weights_offset = *forceWeightsOffset;
  metadata = pack();
  if (checksum) {
    artifact.metadata_crc32 = mnemo::rt::crc32(
        0, reinterpret_cast<const uint8_t *>(metadata.data()) + 4,
        metadata.size() - 4);
    metadata = pack();
  }
  if (!sideFile.empty()) {
    // The side file: 64 bytes of zeros, then the segment.
    sideSegment = std::string(64, '\0') + segment;
    return metadata;
  }
  metadata.resize(padTo, '\0');
  return metadata + segment;
}
