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
