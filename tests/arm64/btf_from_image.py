#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Cut the kernel's BTF out of an arm64 Image (make arm64-vmlinux).

Debian ships the arm64 kernel as a raw Image, not an ELF vmlinux, so bpftool
cannot read its .BTF section; the section's bytes are in the image as they
are in /sys/kernel/btf/vmlinux.  This finds the BTF header (magic 0xeb9f,
version 1, a 24-byte header) and writes the largest blob it announces.
"""
import struct
import sys


def main(image, out):
    data = open(image, "rb").read()
    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    best = None
    pos = 0
    while True:
        pos = data.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00", pos)
        if pos < 0:
            break
        _, _, _, hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from(
            "<HBBIIIII", data, pos)
        size = hdr_len + max(type_off + type_len, str_off + str_len)
        if pos + size <= len(data) and (best is None or size > best[1]):
            best = (pos, size)
        pos += 1
    if best is None:
        sys.exit("%s: no BTF found" % image)
    with open(out, "wb") as f:
        f.write(data[best[0]:best[0] + best[1]])
    print("%s: %d bytes of BTF at offset %d" % (out, best[1], best[0]))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: btf_from_image.py IMAGE OUT")
    main(sys.argv[1], sys.argv[2])
