"""Assembles the kernels of `linformer-compile --emit=ptx` output with
`ptxas -v` and reports each kernel's resources, one line per kernel, then a
summary.

    ptxas_report.py PTXAS FILE.ptx SM

Exits 1 when ptxas fails, a kernel spills or uses local memory (register
arrays that did not stay in registers), or it uses more registers or shared
memory than the budget linformer-compile wrote for it (from the block size
the schedule chose and the target's limits), or a kernel has no budget, or
ptxas serialized a kernel's wgmma (its C7514-C7517 notes: an instruction
that touches a batch's accumulators before its wgmma.wait_group)."""

import re
import subprocess
import sys
import tempfile

ptxas, path, sm = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
modules = re.split(r"^// kernel module @", text, flags=re.M)[1:]
if not modules:
    sys.exit(f"{path}: no kernel modules")
bad, max_regs, count = 0, 0, 0
for m in modules:
    module = m.split(",", 1)[0]
    budgets = {name: (int(r), int(s)) for name, r, s in re.findall(
        r"^// budget @(\w+): (\d+) registers per thread, (\d+) bytes shared memory", m, re.M)}
    body = re.sub(r"^//[^\n]*\n", "", m.split("\n", 1)[1], flags=re.M)
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(body)
        f.flush()
        p = subprocess.run([ptxas, "-v", f"-arch=sm_{sm}", f.name, "-o", "/dev/null"],
                           capture_output=True, text=True)
    if p.returncode != 0:
        print(f"{module}: ptxas failed: {p.stderr.strip()}")
        bad += 1
        continue
    for line in p.stderr.splitlines():
        if re.search(r"\(C751[4-7]\)", line):
            print(f"{module}: {line.strip()}")
            bad += 1
    # ptxas -v: per entry, "Compiling entry function 'NAME'", then its
    # stack/spill line and its "Used N registers ... bytes smem" line.
    for chunk in re.split(r"Compiling entry function '", p.stderr)[1:]:
        name = chunk.split("'", 1)[0]
        count += 1
        regs = int(re.search(r"Used (\d+) registers", chunk).group(1))
        spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", chunk)
        stack = re.search(r"(\d+) bytes stack frame", chunk)
        smem = re.search(r"(\d+) bytes smem", chunk)
        stores, loads = int(spill.group(1)), int(spill.group(2))
        frame = int(stack.group(1)) if stack else 0
        shared = int(smem.group(1)) if smem else 0
        max_regs = max(max_regs, regs)
        if name not in budgets:
            print(f"{name}: no budget line")
            bad += 1
            continue
        reg_budget, smem_budget = budgets[name]
        print(f"{name}: {regs} registers (budget {reg_budget}), {shared} bytes shared (budget "
              f"{smem_budget}), {stores} bytes spill stores, {loads} bytes spill loads, "
              f"{frame} bytes stack frame")
        if stores or loads or frame or regs > reg_budget or shared > smem_budget:
            bad += 1
print(f"SUMMARY: {count} kernels, {bad} over budget or with spills or local memory "
      f"or serialized wgmma, "
      f"at most {max_regs} registers")
sys.exit(1 if bad or not count else 0)
