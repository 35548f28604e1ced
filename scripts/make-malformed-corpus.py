#!/usr/bin/env python3
"""Writes Fuzz/malformed/: inputs a user could hand `vaultctl import`, each wrong in one way.

The files are committed; this script says how each was made and remakes them (same bytes: the
random parts are seeded). Fuzz/malformed/expected.txt gives each file's expected outcome and
Tests/VaultTests/MalformedCorpusTests.swift checks it.
"""
import io
import os
import random
import struct
import zipfile

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fuzz", "malformed"))
random.seed(6)

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_US">\n <ExportDate value="2024-03-30 10:00:00 +0100"/>\n'
TAIL = '</HealthData>\n'


def record(value="120", start="2024-03-30 08:00:00 +0100", end="2024-03-30 08:10:00 +0100", extra=""):
    return (f' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" creationDate="{end}"'
            f' startDate="{start}" endDate="{end}" value="{value}"{extra}/>\n')


def write(name, data):
    with open(name, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def zipped(text, level=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        # A fixed timestamp, so that the same text makes the same bytes.
        entry = zipfile.ZipInfo("apple_health_export/export.xml", date_time=(2024, 3, 30, 10, 0, 0))
        entry.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(entry, text, compresslevel=level)
    return buf.getvalue()


write("empty.xml", b"")
write("binary.dat", bytes(random.randrange(256) for _ in range(4096)))
good = HEAD + "".join(record(value=str(100 + i), start=f"2024-03-30 {8 + i // 6:02d}:{(i % 6) * 10:02d}:00 +0100",
                             end=f"2024-03-30 {8 + i // 6:02d}:{(i % 6) * 10 + 5:02d}:00 +0100") for i in range(30)) + TAIL
write("truncated.xml", good[:good.index("<Record", len(good) // 2) + 40])
whole = zipped(good)
write("truncated.zip", whole[:len(whole) // 2])
write("deep-nesting.xml", HEAD + record().replace("/>\n", ">") + "<MetadataEntry>" * 100 + "</MetadataEntry>" * 100 + "</Record>\n" + TAIL)
write("utf16.xml", "\ufeff".encode("utf-16-le") + good.encode("utf-16-le"))
write("latin1.xml", (HEAD.replace("UTF-8", "ISO-8859-1") + record().replace("Phone", "T\xe9l\xe9phone") + TAIL).encode("latin-1"))
write("dates-out-of-range.xml", HEAD
      + record(start="0000-01-01 00:00:00 +0000", end="0000-01-01 00:10:00 +0000")
      + record(start="99999-01-01 00:00:00 +0000", end="99999-01-01 00:10:00 +0000")
      + record(start="2024-13-40 25:61:00 +0100", end="2024-13-40 25:65:00 +0100")
      + record(start="2024-03-30 08:00:00 +2500", end="2024-03-30 08:10:00 +2500")
      + record(start="2024-03-30 09:00:00 +0100", end="2024-03-30 08:00:00 +0100") + TAIL)
write("negative-nan-values.xml", HEAD + "".join(record(value=v) for v in ["-120", "NaN", "inf", "1e400", "12abc", ""]) + TAIL)
# A 9 MiB attribute value, zipped so that the repository holds 9 kB.
write("huge-attribute.zip", zipped(HEAD + record(extra=' device="' + "x" * (9 << 20) + '"') + TAIL))
# A zip bomb: 200 MiB of spaces inside <HealthData> in a 200 kB zip; then the same bomb whose
# local and central headers declare 1 MiB uncompressed.
bomb = zipped(HEAD + " " * (200 << 20) + TAIL, level=9)
write("zip-bomb.zip", bomb)
lying = bytearray(bomb)
struct.pack_into("<I", lying, lying.find(b"PK\x03\x04") + 22, 1 << 20)
struct.pack_into("<I", lying, lying.find(b"PK\x01\x02") + 24, 1 << 20)
write("zip-bomb-lying-size.zip", bytes(lying))

write("nan-values.json", '{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":NaN}]}')
write("negative-values.json", '{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":-38},'
      '{"timeRange":"2025-08-06 09:00/2025-08-06 10:00","value":1e400}]}')
write("deep-nesting.json", "[" * 100000 + "]" * 100000)
write("truncated.json", '{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","val')
write("dates-out-of-range.json", '{"metric":"STEPS","data":[{"timeRange":"0000-00-00 08:00/0000-00-00 09:00","value":3},'
      '{"timeRange":"2025-08-06 09:00/2025-08-06 08:00","value":4}]}')
write("negative-nan-values.csv", "type,start,end,value,unit,source\nsteps,2025-08-06 08:00,2025-08-06 09:00,-38,count,Phone\n"
      "steps,2025-08-06 09:00,2025-08-06 10:00,NaN,count,Phone\nsteps,2025-08-06 10:00,2025-08-06 11:00,inf,count,Phone\n")
write("dates-out-of-range.csv", "type,start,end,value,unit,source\nsteps,2025-13-06 08:00,2025-13-06 09:00,38,count,Phone\n"
      "steps,99999-08-06 09:00,99999-08-06 10:00,3,count,Phone\n")
write("binary.csv", bytes(random.randrange(256) for _ in range(2048)))
