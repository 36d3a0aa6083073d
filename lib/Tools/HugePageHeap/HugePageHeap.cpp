//===- HugePageHeap.cpp - tcmalloc's heap on transparent huge pages -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Linked into the command-line tools that link tcmalloc (DISTIR_TCMALLOC).
// A tool that builds or reads a large program grows its heap by hundreds of
// megabytes, and each fresh 4 KiB page costs a page fault: about a fifth of
// `distir-opt --dist-dtp --emit-bytecode`'s profile on a 900,000-op step
// program (bench/search/README.md). Machines whose kernel gives huge pages
// only on request (transparent_hugepage=madvise, Debian's default) never
// give them to tcmalloc, which does not ask. This file hands tcmalloc one
// address range reserved up front and marked MADV_HUGEPAGE, from which it
// takes what it grows by; pages are committed when touched, 2 MiB at a time.
// Past the range, or where the reservation or the advice fails, tcmalloc's
// own system allocator serves as before. DISTIR_HUGE_PAGES=0 in the
// environment turns it off (for measurements).
//
//===----------------------------------------------------------------------===//

#include <gperftools/malloc_extension.h>

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

/// Address space reserved (not committed) for the heap: mappings with
/// MAP_NORESERVE do not count against the commit limit under Linux's
/// default overcommit heuristic.
constexpr size_t kReserved = size_t(64) << 30;
constexpr size_t kHugePage = size_t(2) << 20;

class HugePageAllocator final : public SysAllocator {
public:
  HugePageAllocator(SysAllocator *fallback, char *begin, char *end)
      : fallback(fallback), next(begin), end(end) {}

  /// tcmalloc holds its page heap's lock around system allocations, so
  /// the bump pointer needs none of its own.
  void *Alloc(size_t size, size_t *actualSize, size_t alignment) override {
    uintptr_t at = reinterpret_cast<uintptr_t>(next);
    uintptr_t last = reinterpret_cast<uintptr_t>(end);
    uintptr_t align = alignment ? alignment : 1;
    uintptr_t aligned = (at + align - 1) & ~(align - 1);
    if (aligned >= at && aligned <= last && size <= last - aligned) {
      next = reinterpret_cast<char *>(aligned + size);
      if (actualSize)
        *actualSize = size;
      return reinterpret_cast<void *>(aligned);
    }
    return fallback ? fallback->Alloc(size, actualSize, alignment) : nullptr;
  }

private:
  SysAllocator *fallback;
  char *next, *end;
};

bool disabledByEnvironment() {
  const char *value = std::getenv("DISTIR_HUGE_PAGES");
  return value && std::strcmp(value, "0") == 0;
}

/// Installed before main: the static constructors of the libraries loaded
/// before the tool have already allocated, the program has not.
struct Installer {
  Installer() {
    if (disabledByEnvironment())
      return;
    MallocExtension *extension = MallocExtension::instance();
    if (!extension)
      return;
    // One extra huge page so that the range can start on a 2 MiB boundary.
    void *raw = mmap(nullptr, kReserved + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
      return;
    uintptr_t start = (reinterpret_cast<uintptr_t>(raw) + kHugePage - 1) &
                      ~(uintptr_t(kHugePage) - 1);
    char *begin = reinterpret_cast<char *>(start);
    if (madvise(begin, kReserved, MADV_HUGEPAGE) != 0) {
      munmap(raw, kReserved + kHugePage);
      return;
    }
    // Never destroyed: tcmalloc may grow its heap until the process ends
    // (destructors of other statics included).
    alignas(HugePageAllocator) static unsigned char
        storage[sizeof(HugePageAllocator)];
    auto *allocator = new (storage) HugePageAllocator(
        extension->GetSystemAllocator(), begin, begin + kReserved);
    extension->SetSystemAllocator(allocator);
  }
};

Installer installer;

} // namespace
