// CoreFile: an ELF core dump (ET_CORE) as a MemoryReader plus what the kernel
// recorded beside the memory: the mapped files (NT_FILE), every thread's
// registers (NT_PRSTATUS, x86_64: pid and fs_base) and the command name
// (NT_PRPSINFO).
//
// Memory: a PT_LOAD segment is readable for [p_vaddr, p_vaddr + p_filesz) as
// far as the file really holds it. Segments the kernel did not dump
// (p_filesz == 0: file-backed text, VM_DONTDUMP pinned CUDA memory) are NOT
// zeros: reads there fail, like an unmapped page. A core cut short (disk full,
// a copy interrupted) keeps every byte it has; `truncated` says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ccdiag/result.hpp"
#include "sys/elf_view.hpp"
#include "sys/memory_reader.hpp"

namespace ccdiag::nccl::attach {

struct CoreLoad {
  uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
  uint32_t flags = 0;  // PF_R | PF_W | PF_X
};

struct CoreMappedFile {
  uint64_t start = 0, end = 0, file_offset = 0;  // file_offset in bytes
  std::string path;
};

struct CoreThread {
  int tid = 0;
  int signal = 0;           // pr_cursig
  uint64_t fs_base = 0;     // x86_64 user_regs_struct.fs_base = the thread's pthread_t
  uint64_t pc = 0, sp = 0;
};

class CoreFile final : public MemoryReader {
 public:
  // Errors: unreadable, not ELF, not ET_CORE, no PT_LOAD. Architecture other
  // than x86_64 is accepted for memory but threads carry no registers.
  static Result<CoreFile> open(const std::string& path);
  // The same from bytes in memory (tests, fuzzing); `name` appears in errors.
  static Result<CoreFile> from_bytes(std::string bytes, const std::string& name);

  size_t read(uint64_t addr, void* out, size_t len) const override;
  // The start of the first dumped byte at or after `addr` (UINT64_MAX: none).
  uint64_t next_readable(uint64_t addr) const override;

  const std::vector<CoreLoad>& loads() const { return loads_; }
  const std::vector<CoreMappedFile>& files() const { return files_; }
  const std::vector<CoreThread>& threads() const { return threads_; }
  const std::string& command() const { return command_; }
  int pid() const { return pid_; }
  uint16_t machine() const { return machine_; }
  bool truncated() const { return truncated_; }
  uint64_t missing_bytes() const { return missing_bytes_; }  // dumped bytes past the end of the file

 private:
  static Result<CoreFile> parse(CoreFile c, const std::string& name);
  std::string_view bytes() const { return file_.bytes().empty() ? std::string_view(owned_) : file_.bytes(); }

  MappedFile file_;
  std::string owned_;  // from_bytes
  std::vector<CoreLoad> loads_;  // sorted by vaddr
  // Dumped ranges [start, end), merged and sorted: next_readable() in log time
  // (a crafted core has 65,535 segments).
  std::vector<std::pair<uint64_t, uint64_t>> dumped_;
  std::vector<CoreMappedFile> files_;
  std::vector<CoreThread> threads_;
  std::string command_;
  int pid_ = 0;
  uint16_t machine_ = 0;
  bool truncated_ = false;
  uint64_t missing_bytes_ = 0;
};

}  // namespace ccdiag::nccl::attach
