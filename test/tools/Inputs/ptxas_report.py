"""Assembles every kernel of `linformer-compile --emit=ptx` output with
`ptxas -v` and reports its resources, one line per kernel, then a summary.

    ptxas_report.py PTXAS FILE.ptx SM

Exits 1 when ptxas fails, a kernel spills or uses local memory (register
arrays that did not stay in registers), or it uses more registers or shared
memory than the budget linformer-compile wrote above it (from the block size
the schedule chose and the target's limits)."""

import re
import subprocess
import sys
import tempfile

ptxas, path, sm = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
modules = re.split(r"^// kernel module @", text, flags=re.M)[1:]
if not modules:
    sys.exit(f"{path}: no kernel modules")
bad, max_regs = 0, 0
for m in modules:
    name = m.split(",", 1)[0]
    budget = re.search(r"^// budget: (\d+) registers per thread, (\d+) bytes shared memory", m, re.M)
    if not budget:
        sys.exit(f"{name}: no budget line")
    reg_budget, smem_budget = int(budget.group(1)), int(budget.group(2))
    body = m.split("\n", 1)[1]
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(body)
        f.flush()
        p = subprocess.run([ptxas, "-v", f"-arch=sm_{sm}", f.name, "-o", "/dev/null"],
                           capture_output=True, text=True)
    if p.returncode != 0:
        print(f"{name}: ptxas failed: {p.stderr.strip()}")
        bad += 1
        continue
    info = p.stderr
    regs = int(re.search(r"Used (\d+) registers", info).group(1))
    spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", info)
    stack = re.search(r"(\d+) bytes stack frame", info)
    smem = re.search(r"(\d+) bytes smem", info)
    stores, loads = int(spill.group(1)), int(spill.group(2))
    frame = int(stack.group(1)) if stack else 0
    shared = int(smem.group(1)) if smem else 0
    max_regs = max(max_regs, regs)
    print(f"{name}: {regs} registers (budget {reg_budget}), {shared} bytes shared (budget "
          f"{smem_budget}), {stores} bytes spill stores, {loads} bytes spill loads, "
          f"{frame} bytes stack frame")
    if stores or loads or frame or regs > reg_budget or shared > smem_budget:
        bad += 1
print(f"SUMMARY: {len(modules)} kernels, {bad} over budget or with spills or local memory, "
      f"at most {max_regs} registers")
sys.exit(1 if bad else 0)
