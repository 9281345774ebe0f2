"""limit_memory.py KB COMMAND...: runs COMMAND with its memory bounded, so
that a test of an input whose sizes would make the compiler allocate
without bound sees an error rather than a machine swapping. A plain build
gets an address-space limit of KB kibibytes (as `ulimit -v KB`). An
AddressSanitizer build reserves terabytes of address space for its shadow
memory, which such a limit forbids; there each allocation is bounded to KB
instead (ASan's max_allocation_size_mb), and one past it ends the program
with a report, failing the test."""
import os
import resource
import sys

if __name__ == "__main__":
    kb, command = int(sys.argv[1]), sys.argv[2:]
    if os.environ.get("MNEMO_SANITIZED_ADDRESS"):
        options = os.environ.get("ASAN_OPTIONS", "")
        os.environ["ASAN_OPTIONS"] = (options + ":" if options else "") + \
            f"max_allocation_size_mb={kb // 1024}:allocator_may_return_null=0"
    else:
        resource.setrlimit(resource.RLIMIT_AS, (kb * 1024, kb * 1024))
    os.execvp(command[0], command)
