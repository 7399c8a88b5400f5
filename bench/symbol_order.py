#!/usr/bin/env python3
"""Regenerates crates/tsrs/symbol-order.txt: the functions a one-shot `tsrs run` executes, which
the release link places together at the start of `.text` (see crates/tsrs/build.rs).

Why: a process maps its binary's code in 64 KB fault-around windows of whatever the page cache
holds. With the touched functions spread over 25 MB of text, one forward of ResNet-18 kept
~16 MB of the binary resident; packed together they fit in a few megabytes.

How: copy the release binary, drop the copy from the page cache, turn the block device's
readahead off, and run the bench cases once each (one `tsrs run` per case). The copy's pages
that are then in the page cache are exactly the ones the runs read; every function overlapping
one of those text pages is listed, in address order. Needs root (readahead is a device setting,
restored afterwards) and `bench/run_bench.py` to have written `bench/models` and `bench/inputs`.

    sudo python3 bench/symbol_order.py [--cli target/release/tsrs]

Re-run it when the set of hot functions changes a lot (new kernels, a new toolchain: symbol
names carry hashes that change with the compiler); stale names are ignored by the linker, so a
stale file costs resident memory, never correctness.
"""
import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--cli", default=os.path.join(root, "target", "release", "tsrs"))
ap.add_argument("--out", default=os.path.join(root, "crates", "tsrs", "symbol-order.txt"))
a = ap.parse_args()

PAGE = os.sysconf("SC_PAGE_SIZE")
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def cached_pages(path):
    """Indices of the file's pages that are in the page cache (mincore on a fresh mapping)."""
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        base = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        if base in (None, ctypes.c_void_p(-1).value):
            sys.exit(f"mmap failed: errno {ctypes.get_errno()}")
        n = (size + PAGE - 1) // PAGE
        vec = (ctypes.c_ubyte * n)()
        if libc.mincore(base, size, vec) != 0:
            sys.exit(f"mincore failed: errno {ctypes.get_errno()}")
        libc.munmap(base, size)
        return {i for i in range(n) if vec[i] & 1}
    finally:
        os.close(fd)


def readahead_knob(path):
    """The sysfs readahead setting of the block device that holds `path`."""
    dev = os.stat(path).st_dev
    sys_dev = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    for d in (sys_dev, os.path.dirname(sys_dev)):  # a partition's queue is its disk's
        knob = os.path.join(d, "queue", "read_ahead_kb")
        if os.path.exists(knob):
            return knob
    sys.exit(f"no read_ahead_kb for the device of {path} ({sys_dev})")


def workloads(probe):
    """One `tsrs run` per bench case (and the README example), as argument lists."""
    cases = json.load(open(os.path.join(here, "cases.json")))
    out = os.path.join(tempfile.gettempdir(), "tsrs_symbol_order_out.pt")
    runs = [[probe, "run", os.path.join(root, "examples", "hello.py"), "--entry", "main"]]
    for c in cases:
        target = (os.path.join(here, "models", c["model"] + ".pt") if "model" in c
                  else os.path.join(here, c["program"]))
        inputs = os.path.join(here, "inputs", c["name"] + ".pt")
        if not (os.path.exists(target) and os.path.exists(inputs)):
            sys.exit(f"missing {target} or {inputs}: run bench/run_bench.py first")
        runs.append([probe, "run", target, "--entry", c["entry"], "--inputs", inputs,
                     "--output", out, "--no-grad"])
    return runs


def text_functions(binary, pages):
    """Functions of `binary` overlapping the given file pages of its executable segments."""
    phdrs = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                           check=True).stdout
    exec_segs = []
    for line in phdrs.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in "".join(f[6:-1]):
            exec_segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    hot = set()
    for p in pages:
        for off, vaddr, size in exec_segs:
            if off <= p * PAGE < off + size:
                hot.add((vaddr + p * PAGE - off) // PAGE)
    syms = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True,
                          check=True).stdout
    chosen, seen = [], set()
    for line in syms.splitlines():
        f = line.split()
        if len(f) != 4 or f[2] not in "tTwW":
            continue
        addr, size, name = int(f[0], 16), int(f[1], 16), f[3]
        if size == 0 or name in seen:
            continue
        if any(pg in hot for pg in range(addr // PAGE, (addr + size - 1) // PAGE + 1)):
            seen.add(name)
            chosen.append((addr, size, name))
    chosen.sort()
    return chosen, len(hot)


with tempfile.TemporaryDirectory() as tmp:
    probe = os.path.join(tmp, "tsrs")
    shutil.copyfile(a.cli, probe)
    os.chmod(probe, 0o755)
    fd = os.open(probe, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    if cached_pages(probe):
        sys.exit("could not drop the copy from the page cache")
    knob = readahead_knob(probe)
    old = open(knob).read().strip()
    open(knob, "w").write("0")
    try:
        for cmd in workloads(probe):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    finally:
        open(knob, "w").write(old)
    chosen, hot_pages = text_functions(probe, cached_pages(probe))

with open(a.out, "w") as f:
    f.write("".join(name + "\n" for _, _, name in chosen))
print(f"{hot_pages} text pages touched; {len(chosen)} functions, "
      f"{sum(s for _, s, _ in chosen) / 2**20:.1f} MiB -> {os.path.relpath(a.out)}")
