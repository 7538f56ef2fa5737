"""Assembles every kernel of `linformer-compile --emit=ptx` output with
`ptxas -v` and reports its resources, one line per kernel, then a summary.

    ptxas_report.py PTXAS FILE.ptx SM

Exits 1 when ptxas fails or a kernel spills or uses local memory (register
arrays that did not stay in registers)."""

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
    stores, loads = int(spill.group(1)), int(spill.group(2))
    frame = int(stack.group(1)) if stack else 0
    max_regs = max(max_regs, regs)
    print(f"{name}: {regs} registers, {stores} bytes spill stores, {loads} bytes spill loads, "
          f"{frame} bytes stack frame")
    if stores or loads or frame:
        bad += 1
print(f"SUMMARY: {len(modules)} kernels, {bad} with spills or local memory, "
      f"at most {max_regs} registers")
sys.exit(1 if bad else 0)
