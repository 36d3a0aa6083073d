#!/usr/bin/env python3
"""Runs a model export once per distinct command and reuses its files.

usage: export-cache.py --cache DIR OUT COMMAND...

COMMAND (e.g. `python3 export_vit.py OUT`) writes the file OUT, or files
into the directory OUT, and nothing else. The first time, it runs with OUT
replaced by a fresh path under DIR, and what it wrote, its stdout and its
stderr are kept there; every run (the first included) copies the files to
OUT and replays stdout and stderr. A failing command is not kept: its exit
code and output pass through.

The tests export the same PyTorch models many times (77 export lines, 48
distinct commands), each run paying for importing torch and tracing the
model; both lit runs of scripts/test.sh share one cache. The key is the
command with OUT replaced, whether OUT was an existing directory, the Python
scripts of the command's directories, this script, and the installed torch,
torchvision, onnx and numpy, so that a changed exporter, cache layout or
PyTorch exports again.
"""
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

PLACEHOLDER = "@OUT@"


def package_stamp(name):
    """The installed package's location, size and time, without importing
    it (importing torch takes over a second)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return f"{name}: none"
    st = os.stat(spec.origin)
    return f"{name}: {spec.origin} {st.st_size} {st.st_mtime_ns}"


def cache_key(command, out_is_dir):
    h = hashlib.sha256()
    h.update(("\0".join(command) + f"\0dir={out_is_dir}\0").encode())
    with open(os.path.abspath(__file__), "rb") as fh:
        h.update(fh.read())
    for name in ("torch", "torchvision", "onnx", "numpy"):
        h.update(package_stamp(name).encode())
    # The exporter and its neighbours (helpers it may import); `command`'s
    # scripts are already canonical paths.
    dirs = sorted({os.path.dirname(a)
                   for a in command if a.endswith(".py") and os.path.isfile(a)})
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if f.endswith(".py"):
                h.update(f.encode())
                with open(os.path.join(d, f), "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()[:32]


def fill(entry, out):
    """Copies the kept files of `entry` to OUT; replays the output."""
    files = os.path.join(entry, "out")
    if os.path.isdir(files):
        shutil.copytree(files, out, dirs_exist_ok=True)
    elif os.path.exists(files):
        shutil.copyfile(files, out)
    for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
        with open(os.path.join(entry, name)) as f:
            stream.write(f.read())
    return 0


def main(argv):
    if len(argv) < 4 or argv[0] != "--cache":
        print("usage: export-cache.py --cache DIR OUT COMMAND...",
              file=sys.stderr)
        return 2
    cache, out, command = argv[1], argv[2], argv[3:]
    if out not in command:
        print(f"export-cache.py: OUT ({out}) is not an argument of the command",
              file=sys.stderr)
        return 2
    out_is_dir = os.path.isdir(out)
    keyed = [PLACEHOLDER if a == out else a for a in command]
    # One script reached through different relative paths is one key.
    canonical = [os.path.realpath(a) if os.path.isfile(a) else a
                 for a in keyed]
    entry = os.path.join(cache, cache_key(canonical, out_is_dir))
    if os.path.isdir(entry):
        return fill(entry, out)

    os.makedirs(cache, exist_ok=True)
    stage = tempfile.mkdtemp(prefix="stage-", dir=cache)
    try:
        staged_out = os.path.join(stage, "out")
        if out_is_dir:
            os.mkdir(staged_out)
        run = subprocess.run([staged_out if a == PLACEHOLDER else a
                              for a in keyed], capture_output=True, text=True)
        if run.returncode != 0:
            sys.stdout.write(run.stdout)
            sys.stderr.write(run.stderr)
            return run.returncode
        extra = sorted(set(os.listdir(stage)) - {"out"})
        if extra:
            # Files beside OUT (e.g. external weights) would be lost.
            print(f"export-cache.py: the command wrote {', '.join(extra)} "
                  f"beside OUT; only OUT is kept", file=sys.stderr)
            return 1
        for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
            with open(os.path.join(stage, name), "w") as f:
                # Messages name OUT, not the staging path.
                f.write(text.replace(staged_out, out))
        try:
            # Atomic: a concurrent export of the same command either finds
            # nothing or a complete entry.
            os.rename(stage, entry)
            stage = None
        except OSError:
            pass  # another run kept the same export first
        return fill(entry, out)
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
