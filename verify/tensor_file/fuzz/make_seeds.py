#!/usr/bin/python3
"""Writes the fuzzer's seed corpus (corpus/): small valid files of every kind the parsers
accept, made by NumPy (Debian python3-numpy) and by hand for safetensors. Committed; rerun
only to change the seeds."""
import json, struct, numpy as np

def safetensors(path, tensors, metadata=None):
    header, buf = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + buf)

def bf16(values):
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)

np.save("corpus/v1_f32.npy", np.arange(6, dtype=np.float32).reshape(2, 3) / 4)
np.save("corpus/fortran_be_f8.npy", np.asfortranarray(np.arange(4, dtype=">f8").reshape(2, 2)))
with open("corpus/v2_i16.npy", "wb") as f:
    np.lib.format.write_array(f, np.array([1, -2, 3], np.int16), version=(2, 0))
np.savez("corpus/stored.npz", a=np.array([0.5, -1], np.float32), b=np.array([True, False]))
np.savez_compressed("corpus/deflate.npz", a=np.zeros(64, np.float16), c=np.arange(3, dtype=np.int64))
# The smallest problem: T = 2 tokens in two sequences, H = P = G = N = 1.
problem = dict(x=bf16([[[1]], [[2]]]).view(np.int16), dt=bf16([[0.5], [0.25]]).view(np.int16),
               A=np.array([-1], np.float32), B=bf16([[[1]], [[-1]]]).view(np.int16),
               C=bf16([[[0.5]], [[1]]]).view(np.int16), cu_seqlens=np.array([0, 1, 2], np.int32),
               y=bf16([[[0.25]], [[0.5]]]).view(np.int16))
np.savez("corpus/problem.npz", **problem)
safetensors("corpus/problem.safetensors", {
    "x": ("BF16", [1, 2, 1, 1], bf16([1, 2]).tobytes()),
    "dt": ("BF16", [1, 2, 1], bf16([0.5, 0.25]).tobytes()),
    "A": ("F32", [1], np.array([-1], np.float32).tobytes()),
    "B": ("BF16", [1, 2, 1, 1], bf16([1, -1]).tobytes()),
    "C": ("BF16", [1, 2, 1, 1], bf16([0.5, 1]).tobytes()),
    "D": ("F32", [1, 1], np.array([2], np.float32).tobytes()),
    "initial_states": ("F32", [1, 1, 1, 1], np.array([0.125], np.float32).tobytes()),
})
safetensors("corpus/kinds.safetensors", {
    "h": ("F16", [2], np.array([1, -2], np.float16).tobytes()),
    "i": ("I64", [1], np.array([7], np.int64).tobytes()),
    "e": ("U8", [0, 2], b""),
    "b": ("BOOL", [], b"\x01"),
}, metadata={"format": "pt"})

# The packed layout with a leading axis of 1 (varlen Triton kernels), every optional tensor,
# and outputs: T = 3 tokens in sequences [0, 1) and [1, 3); H = 2, P = 1, G = 1, N = 2.
safetensors("corpus/varlen.safetensors", {
    "x": ("BF16", [1, 3, 2, 1], bf16([1, -1, 0.5, 2, -0.25, 1]).tobytes()),
    "z": ("BF16", [1, 3, 2, 1], bf16([1, 1, -1, 0.5, 2, 0]).tobytes()),
    "dt": ("BF16", [1, 3, 2], bf16([0.125] * 6).tobytes()),
    "A": ("F32", [2], np.array([-1, -4], np.float32).tobytes()),
    "B": ("BF16", [1, 3, 1, 2], bf16([1, 0, 0, 1, 1, 1]).tobytes()),
    "C": ("BF16", [1, 3, 1, 2], bf16([0.5, 0.5, 1, -1, 2, 0]).tobytes()),
    "D": ("F32", [2], np.array([1, 0.5], np.float32).tobytes()),
    "dt_bias": ("F32", [2], np.array([0, -1], np.float32).tobytes()),
    "cu_seqlens": ("I64", [3], np.array([0, 1, 3], np.int64).tobytes()),
    "y": ("BF16", [1, 3, 2, 1], bf16([0.5] * 6).tobytes()),
    "final_states": ("F32", [2, 2, 1, 2], np.arange(8, dtype=np.float32).tobytes()),
})

# ZIP64 records in the central directory and at the end (np.savez writes them only for
# archives past 2 GiB): sizes and offset 0xFFFFFFFF with a ZIP64 extra field, a ZIP64 end
# record and its locator, and an end record of 0xFFFF... markers.
import io, zlib
buf = io.BytesIO()
np.save(buf, np.array([1.5, -2], np.float32))
npy = buf.getvalue()
crc = zlib.crc32(npy)
name = b"a.npy"
local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0x21, crc, len(npy), len(npy), len(name), 0) + name
extra = struct.pack("<HHQQQ", 1, 24, len(npy), len(npy), 0)
central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                      len(name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name + extra
cd_at = len(local) + len(npy)
end64_at = cd_at + len(central)
end64 = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, 1, 1, len(central), cd_at)
locator = struct.pack("<IIQI", 0x07064b50, 0, end64_at, 1)
end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
open("corpus/zip64.npz", "wb").write(local + npy + central + end64 + locator + end)

# Self-describing dumps (dump_metadata.h): "ssmv." keys in a safetensors "__metadata__" and
# in an .npz "__metadata__.npy" entry (1-D uint8, the UTF-8 bytes of a JSON object). Made
# with the standard library only (npy v1.0 headers written by hand, as np.save writes them).
import zipfile

def npy(descr, shape, raw):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + raw

safetensors("corpus/dump.safetensors", {"A": ("F32", [1], struct.pack("<f", -1))}, metadata={
    "ssmv.kernel": "chunk_scan", "ssmv.input_format": "bf16", "ssmv.state_format": "fp32",
    "ssmv.output_format": "fp16", "ssmv.dt_softplus": "true", "ssmv.dt_limit": "0x1p-4,inf",
    "ssmv.chunk_size": "64", "ssmv.chunk_layout": "sequence", "ssmv.prefill_tokens": "3",
    "ssmv.contract": "production", "ssmv.decode_contract": "sequential", "ssmv.source": "seed"})
text = json.dumps({"ssmv.kernel": "ssu", "ssmv.dt_limit": "-inf,0.5", "format": "np"}).encode()
with zipfile.ZipFile("corpus/dump.npz", "w", zipfile.ZIP_STORED) as z:
    for name, data in [("A.npy", npy("<f4", [1], struct.pack("<f", -1))),
                       ("__metadata__.npy", npy("|u1", [len(text)], text))]:
        z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
