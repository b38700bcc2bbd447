#!/usr/bin/env python3
"""Which kernels two cubins compile alike: each kernel's machine code (.text.<name>), shared and
constant memory (.nv.shared.<name>, .nv.constant0.<name>) byte for byte, and its attributes
(.nv.info.<name>) one by one, without the symbol index that shifts with the file's kernel count.
A kernel renamed (a template argument added) shows as "only in" a and b.

A whole-file `cmp` of two cubins fails as soon as any kernel of the file changed; this tells
whether the kernels a device run tested are the ones a merge ships (no cuobjdump needed).

  nvcc -gencode=arch=compute_90a,code=sm_90a ... -cubin -o a.cubin src/cuda/chunk_bwd.cu
  python3 bench/cubin_kernels.py a.cubin b.cubin [--match SUBSTRING]
"""
import argparse
import struct
import sys

PARTS = (".text.", ".nv.info.", ".nv.shared.", ".nv.constant0.")


def sections(path):
    """{section name: bytes} of an ELF64 little-endian file"""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = []
    for i in range(shnum):
        name, typ, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        heads.append((name, typ, off, size))
    stroff, strsize = heads[shstrndx][2], heads[shstrndx][3]
    strtab = data[stroff:stroff + strsize]
    out = {}
    for name, typ, off, size in heads:
        end = strtab.index(b"\0", name)
        sname = strtab[name:end].decode()
        # SHT_NOBITS (a kernel's shared memory): no bytes in the file, its size alone
        out[sname] = size.to_bytes(8, "little") if typ == 8 else data[off:off + size]
    return out


PARAM_CBANK = 0x0A  # EIATTR_PARAM_CBANK: the symbol index of the kernel's constant bank first


def info_entries(data):
    """a kernel's .nv.info attributes as (attribute, value) pairs, symbol indices left out.

    Each entry is 4-byte aligned: format (1 no value, 2 a byte, 3 two bytes: 4 bytes in all; 4 a
    size of two bytes and that many bytes), attribute, value.  A symbol index depends on how many
    kernels the file has, not on this kernel's code."""
    out, i = [], 0
    while i + 4 <= len(data):
        fmt, attr = data[i], data[i + 1]
        if fmt == 4:
            size = int.from_bytes(data[i + 2:i + 4], "little")
            val = data[i + 4:i + 4 + size]
            i += 4 + size
        else:
            val = data[i + 2:i + 4]
            i += 4
        out.append((attr, val[4:] if attr == PARAM_CBANK else val))
    return out


def kernels(secs):
    """{kernel name: {part: bytes or comparable value}}"""
    ks = {}
    for sname, body in secs.items():
        for part in PARTS:
            if sname.startswith(part):
                ks.setdefault(sname[len(part):], {})[part] = info_entries(body) if part == ".nv.info." else body
    return ks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--match", default="", help="only kernels whose mangled name holds this")
    args = ap.parse_args()
    ka, kb = kernels(sections(args.a)), kernels(sections(args.b))
    names = sorted(n for n in set(ka) | set(kb) if args.match in n)
    same = differ = only = 0
    for n in names:
        if n not in ka or n not in kb:
            only += 1
            print(f"only in {'a' if n in ka else 'b'}  {n}")
            continue
        bad = [p.strip(".") for p in PARTS if ka[n].get(p) != kb[n].get(p)]
        if bad:
            differ += 1
            print(f"differs ({', '.join(bad)})  {n}")
        else:
            same += 1
            print(f"same  {n}")
    print(f"== {same} the same, {differ} differ, {only} in one file alone")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
