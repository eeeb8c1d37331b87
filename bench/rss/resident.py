#!/usr/bin/env python3
"""Which of a running binary's own file pages are resident, by ELF section, and the
resident code (.text) attributed to crates by the symbols on each page.

    sudo bench/rss/resident.py PID BINARY

Reads /proc/PID/maps and /proc/PID/pagemap (root: the present bit), the binary's section
and program headers (readelf) and its symbols (nm). A page holding code of several
crates is shared out by bytes. "core" and "alloc" are generic code monomorphised for
every crate (drop glue, iterators). BENCHMARKS.md, issue 12, sixteenth session.
"""
import sys, struct, subprocess, bisect, re, collections
pid, binary = int(sys.argv[1]), sys.argv[2]
PAGE = 4096
# ELF section ranges (vaddr) for classification
secs = []
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m:
        name, addr, off, size = m.group(1), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
        if addr: secs.append((addr, addr + size, name, off))
# symbols (function/object) sorted
syms = []
out = subprocess.run(["nm", "-n", "-S", "--defined-only", "-C", binary], capture_output=True, text=True).stdout
for line in out.splitlines():
    parts = line.split(" ", 3)
    if len(parts) == 4:
        try: syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
        except ValueError: pass
syms.sort()
starts = [s[0] for s in syms]
def crate_of(name):
    n = name.lstrip("<").lstrip("&").lstrip("*")
    n = re.sub(r"^(impl |dyn |mut )", "", n)
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)::", n)
    return m.group(1) if m else ("C:" + n[:20] if n else "?")
maps = []
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5].endswith(binary.split("/")[-1]):
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        maps.append((lo, hi, int(f[2], 16), f[1]))
# vaddr in ELF = file offset mapping: for PIE, load base = lo - offset (page aligned vs p_vaddr). Use program headers.
phdrs = []
for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
    if m: phdrs.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
def off_to_vaddr(off):
    for o, v, sz in phdrs:
        if o <= off < o + sz: return v + (off - o)
    return None
pm = open(f"/proc/{pid}/pagemap", "rb")
by_sec = collections.Counter(); by_crate = collections.Counter(); total = 0
for lo, hi, off, perm in maps:
    n = (hi - lo) // PAGE
    pm.seek(lo // PAGE * 8)
    data = pm.read(n * 8)
    for i in range(n):
        (e,) = struct.unpack_from("<Q", data, i * 8)
        if not (e >> 63) & 1: continue
        total += 1
        va = off_to_vaddr(off + i * PAGE)
        sec = next((s[2] for s in secs if va is not None and s[0] <= va < s[1]), "?")
        by_sec[sec] += 1
        if sec == ".text" and va is not None:
            # attribute page to crates by bytes of symbols overlapping it
            j = bisect.bisect_right(starts, va + PAGE) - 1
            seen = collections.Counter()
            while j >= 0 and syms[j][0] + max(syms[j][1], 1) > va:
                a, sz, nm = syms[j]
                ov = min(a + sz, va + PAGE) - max(a, va)
                if ov > 0: seen[crate_of(nm)] += ov
                if a < va - (1 << 20):
                    break
                j -= 1
            tot = sum(seen.values()) or 1
            for c, b in seen.items(): by_crate[c] += b / tot
print(f"resident pages of {binary}: {total} ({total*4} KiB)")
for s, c in by_sec.most_common(): print(f"  {s:24} {c*4:8} KiB")
print(".text by crate (KiB):")
for c, p in by_crate.most_common(30):
    print(f"  {c:32} {p*4:8.0f}")
