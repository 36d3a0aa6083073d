"""Starts a tool that reads its program from standard input and, while it
waits there (its static constructors and start-up done), reports the
address range tcmalloc grows into from lib/Tools/HugePageHeap: its size,
whether the kernel may back it with transparent huge pages, and whether the
heap already lives in it.

  heap_mapping.py TOOL [ARGS...]
"""
import os
import subprocess
import sys
import time

RESERVED_KB = 64 << 20  # 64 GiB, in kB


def mappings(pid):
    """(size kB, fields) of each mapping in /proc/PID/smaps."""
    result, current = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                current = {}
                result.append(current)
            elif head.endswith(":") and current is not None:
                parts = line.split()
                current[head[:-1]] = int(parts[1]) if len(parts) > 1 and \
                    parts[1].isdigit() else parts[1:]
    return result


def main():
    tool = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        # Blocked in a read (syscall 0 on x86-64) of the pipe: the same read
        # seen twice, 50 ms apart (reads of regular files do not block).
        deadline, last = time.time() + 60, None
        while time.time() < deadline:
            with open(f"/proc/{tool.pid}/syscall") as f:
                fields = f.read().split()
            if fields and fields[0] == "0" and fields == last:
                break
            last = fields
            time.sleep(0.05)
        else:
            print("the tool never waited for its input")
            return
        found = [m for m in mappings(tool.pid) if m.get("Size") == RESERVED_KB]
        if not found:
            print("no heap reservation")
            return
        # Eligible unless the kernel's setting is "never".
        try:
            with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
                allowed = 0 if "[never]" in f.read() else 1
        except OSError:
            allowed = 0
        for m in found:
            print(f"reservation: {m['Size']} kB, huge pages as the kernel "
                  f"allows: {m.get('THPeligible') == allowed}, "
                  f"heap in it: {m.get('Rss', 0) > 0}")
    finally:
        tool.stdin.close()
        tool.wait()


if __name__ == "__main__":
    main()
