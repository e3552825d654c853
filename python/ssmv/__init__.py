"""ssmv from Python: judge a Mamba2 (or Mamba-3) state-space kernel's outputs against ssmv's certified
reference and per-element error bounds, from a pytest test.

    import ssmv
    report = ssmv.check(x=x, dt=dt, A=A, B=B, C=C, D=D, dt_bias=dt_bias, y=y, final_states=fs,
                        kernel="ssu", contract="triton.ssu", dt_softplus=True)
    ssmv.assert_within_contract(...)   # same arguments; AssertionError naming the worst element
    ssmv.compare(a=ssmv.Outputs(y=y1, kernel="chunk_scan", chunk_size=64), b=ssmv.Outputs(y=y2), x=x, ...)
    x = ssmv.bf16(x_float32)           # NumPy has no bf16: floats rounded to bf16, marked as bf16
    ssmv.check_mamba3(x=x, B=B, C=C, dt=dt, adt=adt, trap=trap, angles=angles, B_bias=B_bias,
                      C_bias=C_bias, y=y, ...)   # Mamba-3's SISO step kernel (mamba3_step)
    ssmv.check_mamba3(..., kernel="mamba3_prefill", chunk_size=64)   # its chunked prefill
    ssmv.check_mamba3(..., kernel="mamba3_handoff", prefill_tokens=K)  # the prefill, then steps
    ssmv.compare_mamba3(a=ssmv.Mamba3Outputs(y=y1, kernel="mamba3_prefill"),
                        b=ssmv.Mamba3Outputs(y=y2, kernel="mamba3_step"), x=x, ...)  # the two paths

Each writes a self-describing dump (docs/tensor-files.md), runs the ssmv program on it
(SSMV_BINARY, else `ssmv` on PATH — where `cmake --install` puts it — else the repository's
build/release/ssmv) and reads its JSON report (docs/report-schema.md). Standard library only:
NumPy arrays are read when given, NumPy is not required.
"""

from ._api import (KERNELS, MAMBA3_CONTRACTS, MAMBA3_KERNELS, MAMBA3_PREFILL_CONTRACTS, Mamba3Outputs, Outputs,
                   __version__, assert_mamba3_within_contract, assert_within_contract, cex_dir, check, check_mamba3,
                   compare, compare_mamba3)
from ._bf16 import BF16Array, bf16
from ._errors import BinaryNotFoundError, InputError, InputTypeError, SsmvError
from ._run import find_binary
from .report import (BoundSource, Comparison, Difference, Entry, FormatValue, Real, Report, TensorComparison,
                     TensorResult, WorstElement)

__all__ = [
    "check", "assert_within_contract", "compare", "check_mamba3", "assert_mamba3_within_contract", "compare_mamba3",
    "Mamba3Outputs",
    "MAMBA3_KERNELS", "MAMBA3_CONTRACTS", "MAMBA3_PREFILL_CONTRACTS", "Outputs", "bf16", "BF16Array",
    "find_binary", "cex_dir", "KERNELS", "__version__",
    "Report", "Entry", "TensorResult", "WorstElement", "Difference", "BoundSource", "Real", "FormatValue",
    "Comparison", "TensorComparison", "SsmvError", "InputError", "InputTypeError", "BinaryNotFoundError",
]
