"""apkzip.py — zip archives laid out as Android installs apps (`zipalign -P`): native
libraries stored (not compressed) at a page-aligned data offset, padded with the
extra field, so bionic's linker can map them straight from the APK.  Written here
byte by byte (no zipalign on this machine) so the tests control every field:

  make_zip(path, entries, align=4096, zip64=False) -> {name: data offset}
    entries: [(name, data, stored)]; stored entries' data start at a multiple of
    align (the local header's extra field pads: zipalign's 0xd935 record); others
    are deflated.  zip64: every entry gets ZIP64 extra fields (sizes and offset
    0xffffffff in the headers) and the archive a ZIP64 end record and locator, as
    a writer does for archives over 4 GiB or 65535 entries.

The bad-input tests patch the bytes this writes (see the returned offsets and
local_header())."""
import struct
import time
import zlib

LOCAL, CENTRAL, EOCD = 0x04034b50, 0x02014b50, 0x06054b50
EOCD64, LOCATOR = 0x06064b50, 0x07064b50


def _dos_time():
    t = time.localtime(1577836800)   # 2020-01-01, fixed: reproducible bytes
    return ((t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec // 2),
            ((t.tm_year - 1980) << 9) | (t.tm_mon << 5) | t.tm_mday)


def make_zip(path, entries, align=4096, zip64=False):
    out = bytearray()
    central = bytearray()
    offsets = {}
    tm, dt = _dos_time()
    for name, data, stored in entries:
        nb = name.encode() if isinstance(name, str) else name
        crc = zlib.crc32(data) & 0xffffffff
        body = data if stored else zlib.compress(data, 9)[2:-4]
        method = 0 if stored else 8
        local_at = len(out)
        extra = b""
        if zip64:
            extra = struct.pack("<HHQQ", 1, 16, len(data), len(body))
        if stored:
            start = local_at + 30 + len(nb) + len(extra)
            pad = (-(start + 4)) % align
            extra += struct.pack("<HH", 0xd935, pad) + b"\0" * pad
        csz, usz = (0xffffffff, 0xffffffff) if zip64 else (len(body), len(data))
        out += struct.pack("<IHHHHHIIIHH", LOCAL, 45 if zip64 else 20, 0, method, tm, dt, crc,
                           csz, usz, len(nb), len(extra)) + nb + extra
        offsets[name] = len(out)
        out += body
        cextra = struct.pack("<HHQQQ", 1, 24, len(data), len(body), local_at) if zip64 else b""
        off32 = 0xffffffff if zip64 else local_at
        central += struct.pack("<IHHHHHHIIIHHHHHII", CENTRAL, 0x0314, 45 if zip64 else 20, 0,
                               method, tm, dt, crc, csz, usz, len(nb), len(cextra), 0, 0, 0,
                               0o100644 << 16, off32) + nb + cextra
    cd_at, n = len(out), len(entries)
    out += central
    if zip64:
        rec_at = len(out)
        out += struct.pack("<IQHHIIQQQQ", EOCD64, 44, 45, 45, 0, 0, n, n, len(central), cd_at)
        out += struct.pack("<IIQI", LOCATOR, 0, rec_at, 1)
        out += struct.pack("<IHHHHIIH", EOCD, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
    else:
        out += struct.pack("<IHHHHIIH", EOCD, 0, 0, n, n, len(central), cd_at, 0)
    with open(path, "wb") as f:
        f.write(out)
    return offsets


def central_records(blob):
    """[(offset of the central record, name)] of an archive make_zip wrote (no ZIP64)."""
    eocd = blob.rindex(struct.pack("<I", EOCD))
    n, size, at = struct.unpack_from("<HII", blob, eocd + 10)
    recs = []
    for _ in range(n):
        nlen, xlen, clen = struct.unpack_from("<HHH", blob, at + 28)
        recs.append((at, blob[at + 46:at + 46 + nlen].decode(errors="replace")))
        at += 46 + nlen + xlen + clen
    return recs
