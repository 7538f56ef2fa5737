#!/usr/bin/env python3
"""Edits a compiled artifact the way a careless or hostile user would, for
the hardening tests: rewrites the manifest section (or flips a byte of the
cpu.so section) and writes a new .lfa with a valid container.

edit_manifest.py IN.lfa OUT.lfa EDIT...
edit_manifest.py --print-rows IN.lfa   (how many kernels of a run have
                                        length rules; initializers apart)
edit_manifest.py --print-layout IN.lfa (format_version and sequence_layout)
edit_manifest.py --print-collectives IN.lfa (format_version, the weights
                                        split over ranks, the all-reduce
                                        steps and the bytes they sum, and
                                        the all-gathers' blocks)
  workgroups=K:N       kernel K's workgroup count becomes N (and its length
                       rule is dropped)
  bytes=NAME:N         intermediate or constant NAME's size becomes N bytes
  buffers=K:N          kernel K binds only its first N buffers
  shared=K:N           kernel K asks for N bytes of shared memory (CUDA)
  rows-tile=K:N        kernel K's length rule has row tiles of N tokens
                       (K = "first": the first kernel with a rule)
  rows-drop            every length rule is removed
  max-length=K:LO:HI   kernel K is a length variant for (LO, HI] (CUDA;
                       the manifest says format_version 3)
  tensor-map=NAME:DTYPE:DIMS:BOX[:SWIZZLE[:OFFSET]]
                       a tensor map NAME.map of buffer NAME (DIMS and BOX
                       innermost first, as 64x256; contiguous strides)
                       takes NAME's place in every kernel that binds NAME
                       and does not write it (CUDA; the manifest says
                       format_version 7)
  tensor-map-extra=NAME[:DTYPE:DIMS:BOX[:SWIZZLE[:OFFSET]]]
                       the same map appended to those kernels' bindings
                       instead: a parameter their code does not declare,
                       which the driver passes and the kernel ignores (a
                       real driver's check of the encoding; without DTYPE,
                       NAME's dtype, its shape reversed, and boxes of
                       16 bytes x 8 rows x 1 ...; NAME "@input": the
                       first input without a role)
  version=N            the manifest's format_version becomes N
  layout=NAME          sequence_layout becomes NAME ("padded": the key goes)
  flip-code            flips one byte in the middle of the cpu.so section
"""
import json
import struct
import sys


def read_sections(image):
    assert image[:8] == b"LFARTIF1"
    count = struct.unpack_from("<I", image, 12)[0]
    sections = []
    for i in range(count):
        entry = image[16 + 48 * i:16 + 48 * (i + 1)]
        name = entry[:32].rstrip(b"\0").decode()
        offset, size = struct.unpack_from("<QQ", entry, 32)
        sections.append((name, bytearray(image[offset:offset + size])))
    return sections


def write_sections(sections):
    header = b"LFARTIF1" + struct.pack("<II", 1, len(sections))
    offset = (16 + 48 * len(sections) + 63) // 64 * 64
    table, offsets = b"", []
    for name, data in sections:
        offsets.append(offset)
        table += name.encode().ljust(32, b"\0") + struct.pack("<QQ", offset, len(data))
        offset = (offset + len(data) + 63) // 64 * 64
    image = bytearray(header + table)
    for (name, data), at in zip(sections, offsets):
        image += b"\0" * (at - len(image))
        image += data
    return bytes(image)


def main():
    if sys.argv[1] == "--print-rows":
        sections = dict(read_sections(open(sys.argv[2], "rb").read()))
        every = json.loads(bytes(sections["manifest"]))["kernels"]
        kernels = [k for k in every if not k.get("initializer")]
        ruled = [k for k in kernels if "rows" in k]
        print("rules: %d of %d kernels, %d initializers" %
              (len(ruled), len(kernels), len(every) - len(kernels)))
        return
    if sys.argv[1] == "--print-layout":
        sections = dict(read_sections(open(sys.argv[2], "rb").read()))
        manifest = json.loads(bytes(sections["manifest"]))
        print("format_version %d, sequence_layout %s" %
              (manifest["format_version"],
               manifest.get("sequence_layout", "padded")))
        return
    if sys.argv[1] == "--print-collectives":
        sections = dict(read_sections(open(sys.argv[2], "rb").read()))
        manifest = json.loads(bytes(sections["manifest"]))
        buffers = manifest["buffers"]
        split = ["%s %s / %d" % (b["name"], b["shape"], b["sequence_split"])
                 for b in buffers if "sequence_split" in b]
        steps = [k for k in manifest["kernels"] if "all_reduce" in k]
        print("format_version %d, split weights: %s" %
              (manifest["format_version"], ", ".join(split) or "none"))
        print("all-reduce steps: %d over %s ranks, %d bytes" %
              (len(steps), sorted({k["all_reduce"]["ranks"] for k in steps}),
               sum(buffers[k["buffers"][-1]]["bytes"] for k in steps)))
        gathers = [k for k in steps if "gather_blocks" in k["all_reduce"]]
        if gathers:
            print("all-gathers: %s" % ", ".join(
                "%s %d blocks of %d bytes -> %d bytes" %
                (k["symbol"], k["all_reduce"]["gather_blocks"],
                 buffers[k["buffers"][0]]["bytes"] //
                 k["all_reduce"]["gather_blocks"],
                 buffers[k["buffers"][1]]["bytes"]) for k in gathers))
        return
    if sys.argv[1] == "--print-products":
        sections = dict(read_sections(open(sys.argv[2], "rb").read()))
        manifest = json.loads(bytes(sections["manifest"]))
        constants = [b for b in manifest["buffers"] if b["kind"] == "constant"]
        print("products %s, %d constant bytes" %
              (manifest.get("products", "(absent)"),
               sum(b["bytes"] for b in constants)))
        return
    src, dst, edits = sys.argv[1], sys.argv[2], sys.argv[3:]
    sections = read_sections(open(src, "rb").read())
    names = [n for n, _ in sections]
    manifest = json.loads(bytes(sections[names.index("manifest")][1]))
    for edit in edits:
        what, _, arg = edit.partition("=")
        if what == "workgroups":
            k, n = arg.split(":")
            manifest["kernels"][int(k)]["workgroups"] = int(n)
            # Its length rule would no longer add up; the edit is about the
            # code's workgroup count (K_abi), so the rule goes.
            manifest["kernels"][int(k)].pop("rows", None)
        elif what == "bytes":
            name, n = arg.split(":")
            buf = next(b for b in manifest["buffers"] if b["name"] == name)
            buf["bytes"] = int(n)
        elif what == "buffers":
            k, n = arg.split(":")
            kernel = manifest["kernels"][int(k)]
            kernel["buffers"] = kernel["buffers"][:int(n)]
        elif what == "shared":
            k, n = arg.split(":")
            manifest["kernels"][int(k)]["shared_bytes"] = int(n)
        elif what == "rows-tile":
            k, n = arg.split(":")
            kernels = manifest["kernels"]
            index = (next(i for i, x in enumerate(kernels) if "rows" in x)
                     if k == "first" else int(k))
            kernels[index]["rows"]["tile"] = int(n)
        elif what == "max-length":
            k, lo, hi = arg.split(":")
            manifest["kernels"][int(k)]["max_length"] = [int(lo), int(hi)]
            manifest["format_version"] = 3
        elif what in ("tensor-map", "tensor-map-extra"):
            buffers = manifest["buffers"]
            if arg == "@input":
                arg = next(b["name"] for b in buffers
                           if b["kind"] == "input" and "role" not in b)
            if ":" not in arg:
                b = next(b for b in buffers if b["name"] == arg)
                size = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8,
                        "u8": 1}[b["dtype"]]
                dims = list(reversed(b["shape"]))
                box = [16 // size] + [min(d, 8) for d in dims[1:2]] + [1] * len(dims[2:])
                arg = "%s:%s:%s:%s" % (arg, b["dtype"], "x".join(map(str, dims)),
                                       "x".join(map(str, box)))
            name, dtype, dims, box, *rest = arg.split(":")
            dims = [int(v) for v in dims.split("x")]
            size = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8,
                    "u8": 1}[dtype]
            strides, stride = [], dims[0] * size
            for d in dims[1:]:
                strides.append(stride)
                stride *= d
            buffers = manifest["buffers"]
            source = next(i for i, b in enumerate(buffers) if b["name"] == name)
            view = {"source": source, "dtype": dtype, "dims": dims,
                    "strides": strides,
                    "box": [int(v) for v in box.split("x")]}
            if len(rest) > 0:
                view["swizzle"] = int(rest[0])
            if len(rest) > 1:
                view["offset"] = int(rest[1])
            buffers.append({"name": name + ".map", "kind": "tensor_map",
                            "tensor_map": view})
            for kernel in manifest["kernels"]:
                if source not in kernel["buffers"] or source in kernel.get(
                        "writes", kernel["buffers"]):
                    continue
                if what == "tensor-map-extra":
                    kernel["buffers"].append(len(buffers) - 1)
                else:
                    kernel["buffers"] = [len(buffers) - 1 if b == source else b
                                         for b in kernel["buffers"]]
            manifest["format_version"] = 7
        elif what == "version":
            manifest["format_version"] = int(arg)
        elif what == "layout":
            if arg == "padded":
                manifest.pop("sequence_layout", None)
            else:
                manifest["sequence_layout"] = arg
        elif what == "products":
            manifest["products"] = arg
        elif what == "rows-drop":
            for kernel in manifest["kernels"]:
                kernel.pop("rows", None)
        elif what == "flip-code":
            code = sections[names.index("cpu.so")][1]
            code[len(code) // 2] ^= 0x01
        else:
            sys.exit("unknown edit " + edit)
    sections[names.index("manifest")] = (
        "manifest", bytearray(json.dumps(manifest, indent=2).encode()))
    open(dst, "wb").write(write_sections(sections))


if __name__ == "__main__":
    main()
