#!/usr/bin/env python3
"""bench/latest.py on sample logs: each format parsed, the per-item key, repeated identical rows
taken once, conflicting rows, a missing log and a log without rows refused with nothing written.

The samples are made up: the figures are invented (near bench/NOTES.md's H200 ones), the lines
are printed with the format strings of the programs' printf / f-strings, copied from
bench/ssu/ssu_bench.cu, scripts/flashinfer/fi_bench.cu, scripts/triton/ssu_bench.py,
vllm_ssu_bench.py, bench/chunk_scan/chunk_scan_bench.cpp, scripts/triton/chunk_scan_bench.py,
and the step headers of bench/device_steps.sh.
Run: /usr/bin/python3 bench/tests/latest_test.py (CTest: latest_test).
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import latest  # noqa: E402

DEVICE = ("device NVIDIA H200, 132 SMs, L2 60 MiB; kernel variant: 8 rows/warp, 2 groups for 16-bit states, min "
          "blocks/SM 6; streamed kernel for fp32 states on, min blocks/SM 4, items of 2 groups (1 for fp32)")


def ssu_row(state, batch, tokens, kernel, us):
    return "%-6s %6d %6d %-9s %10.2f %10.2f %10.0f %10.0f %7.0f%% %7.0f%%" % (
        state, batch, tokens, kernel, 4.2 * batch * tokens, us, 3500, 3900, 90, 82)


SSU_LOG = "\n".join([
    DEVICE,
    "GPU = twin bit for bit (batch 8, 1 token(s) per request, fp32 state): yes",
    "copy 1 GiB device to device: 4270 GB/s (read + write)",
    "%-6s %6s %6s %-9s %10s %10s %10s %10s %8s %8s" % ("state", "batch", "tokens", "kernel", "MB moved",
                                                      "kernel us", "kernel GB/s", "copy GB/s", "of copy", "of 1GiB"),
    ssu_row("fp32", 1, 1, "per-item", 5.12),
    ssu_row("fp32", 256, 1, "streamed", 148.64),
    ssu_row("fp32", 256, 1, "per-item", 152.1),
    ssu_row("fp32", 256, 2, "octet", 150.5),
    ssu_row("fp32", 256, 2, "per-item", 183.0),
    ssu_row("fp32", 256, 2, "tokens", 162.98),
    ssu_row("bf16", 256, 1, "streamed", 82.43),
    ssu_row("bf16", 256, 1, "per-item", 90.5),
]) + "\n"

FI_HEAD = ("FlashInfer selective_state_update, H 32, P 64, N 128, G 1, bf16 inputs; median of 200, L2 flushed\n"
           + "%-6s %6s %6s %10s\n" % ("state", "batch", "tokens", "us"))


def state_rows(*rows):
    return "".join("%-6s %6d %6d %10.2f\n" % r for r in rows)


FI_NT2 = FI_HEAD + state_rows(("fp32", 64, 1, 40.86), ("bf16", 64, 1, 24.9), ("fp32", 64, 2, 47.23))
FI_NT4 = FI_HEAD + state_rows(("fp32", 64, 1, 40.86), ("fp32", 64, 4, 48.99))  # the 1-token row again
TRITON_SSU = ("mamba_ssm e9594ce1c732d97440f0332fdc43170a2294dbfa Triton selective_state_update, H 32, P 64, "
              "N 128, G 1, bf16 inputs; median of 200, L2 flushed\n" + "%-6s %6s %6s %10s\n" % (
                  "state", "batch", "tokens", "us") + state_rows(("fp32", 256, 1, 175.74)))
VLLM_SSU = ("vLLM 28be48fa944d8c58aeffd1ab1b56e27828c6b268 Triton selective_state_update, H 32, P 64, N 128, "
            "G 1, bf16 inputs; median of 200, L2 flushed\n" + "%-6s %6s %6s %10s\n" % (
                "state", "batch", "tokens", "us") + state_rows(("bf16", 256, 8, 882.02)))


def chunk_line(name, contract, kernel, total, stages, floor):
    return ("%-22s %-10s e:%-8s total %8.1f us | a %6.1f b %6.1f c %6.1f d %6.1f e %6.1f | floor %.1f us "
            "(bytes %.1f MB -> %.1f us, flops %.2f G -> %.1f us) | %.1fx floor\n"
            % ((name, contract, kernel, total) + stages + (floor, 243.3, floor, 563.09, 0.7, total / floor)))


CHUNK_SCAN = ("device NVIDIA H200, 132 SMs; copy bandwidth 4263 GB/s (read+write); bf16 rate 790 TFLOP/s\n"
              + chunk_line("1 x 8192 tokens", "production", "mma.sync", 224.1, (12.1, 68.5, 21.6, 16.7, 105.0), 57.1)
              + chunk_line("1 x 8192 tokens", "fp32", "fma", 900.0, (12.1, 300.0, 21.6, 80.0, 480.0), 57.1)
              + chunk_line("8 x 1024 tokens", "production", "mma.sync", 200.0, (10.0, 52.0, 22.0, 17.0, 98.0), 57.1))
TRITON_CHUNK_SCAN = ("device NVIDIA H200, 132 SMs\n"
                     "mamba_ssm e9594ce1c732d97440f0332fdc43170a2294dbfa Triton mamba_chunk_scan_combined, 1 x 8192 "
                     "tokens, H 32, P 64, N 128, G 1, chunk 256, bf16 x dt B C, D, dt_bias, softplus, no z, fp32 final "
                     "states; median of 200, L2 flushed\n"
                     + "%-10s %6s %10s\n" % ("kernel", "tokens", "us") + "%-10s %6d %10.2f\n" % ("mamba_ssm", 8192, 581.23))


def step(command, text, when="2026-12-06T10:00:00Z"):
    """A bench/device_steps.sh step: its header, the program's output, its exit status."""
    return f"=== {command} ({when})\n{text}=== rc=0: {command}\n"


class LatestTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.dir.name, "latest.json")

    def tearDown(self):
        self.dir.cleanup()

    def log(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_main(self, *args):
        """(exit status, stderr, the document written (the file's text where it is no JSON), or None)."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = latest.main(list(args) + ["--out", self.out, "--commit", "abc123"])
        doc = None
        if os.path.exists(self.out):
            with open(self.out) as f:
                doc = f.read()
            with contextlib.suppress(ValueError):
                doc = json.loads(doc)
        return rc, err.getvalue(), doc

    def test_every_format(self):
        rc, err, doc = self.run_main(
            "--ssmv-ssu", self.log("ssu", SSU_LOG), "--flashinfer", self.log("nt2", FI_NT2), self.log("nt4", FI_NT4),
            "--triton-ssu", self.log("t", TRITON_SSU), "--vllm-ssu", self.log("v", VLLM_SSU),
            "--ssmv-chunk-scan", self.log("cs", CHUNK_SCAN), "--triton-chunk-scan", self.log("tcs", TRITON_CHUNK_SCAN),
            "--date", "2026-12-06T10:00:00Z")
        self.assertEqual((rc, err), (0, ""))
        expected = {
            "ssu_b1_t1_fp32_us": 5.12, "ssu_b256_t1_fp32_us": 148.64, "ssu_b256_t1_fp32_per_item_us": 152.1,
            "ssu_b256_t2_fp32_us": 150.5, "ssu_b256_t2_fp32_per_item_us": 183.0, "ssu_b256_t2_fp32_tokens_us": 162.98, "ssu_b256_t1_bf16_us": 82.43,
            "ssu_b256_t1_bf16_per_item_us": 90.5,
            "flashinfer_ssu_b64_t1_fp32_us": 40.86, "flashinfer_ssu_b64_t1_bf16_us": 24.9,
            "flashinfer_ssu_b64_t2_fp32_us": 47.23, "flashinfer_ssu_b64_t4_fp32_us": 48.99,
            "triton_ssu_b256_t1_fp32_us": 175.74, "vllm_ssu_b256_t8_bf16_us": 882.02,
            # the production lines (stage (e) on mma.sync); the fp32 contract's line gives no key
            "chunk_scan_1x8192_us": 224.1, "chunk_scan_1x8192_stage_a_us": 12.1, "chunk_scan_1x8192_stage_b_us": 68.5,
            "chunk_scan_1x8192_stage_c_us": 21.6, "chunk_scan_1x8192_stage_d_us": 16.7,
            "chunk_scan_1x8192_stage_e_us": 105.0, "chunk_scan_1x8192_floor_us": 57.1,
            "chunk_scan_1x8192_stage_e_kernel": "mma.sync", "chunk_scan_8x1024_us": 200.0,
            "triton_chunk_scan_1x8192_us": 581.23,
            "commit": "abc123", "date": "2026-12-06T10:00:00Z", "device": "NVIDIA H200"}
        self.assertEqual({k: doc[k] for k in expected}, expected)
        self.assertEqual(sorted(k for k in doc if k.startswith("chunk_scan_8x1024")),
                         ["chunk_scan_8x1024_floor_us", "chunk_scan_8x1024_stage_a_us", "chunk_scan_8x1024_stage_b_us",
                          "chunk_scan_8x1024_stage_c_us", "chunk_scan_8x1024_stage_d_us",
                          "chunk_scan_8x1024_stage_e_kernel", "chunk_scan_8x1024_stage_e_us", "chunk_scan_8x1024_us"])
        self.assertEqual(len(doc), len(expected) + 7 + 1)  # 8x1024's other keys, sources
        fi = doc["sources"]["flashinfer"]
        self.assertEqual(fi["logs"], ["nt2", "nt4"])  # file names: the folder is the device call's
        self.assertEqual(fi["lines"], [FI_HEAD.splitlines()[0]])
        self.assertEqual(fi["repeated"], ["flashinfer_ssu_b64_t1_fp32_us"])
        self.assertEqual(doc["sources"]["triton_ssu"]["lines"], [TRITON_SSU.splitlines()[0]])
        self.assertEqual(doc["sources"]["ssmv_ssu"]["lines"], [DEVICE])
        self.assertEqual(doc["sources"]["triton_chunk_scan"]["lines"], TRITON_CHUNK_SCAN.splitlines()[:2])
        with open(self.out) as f:
            text = f.read()
        self.assertEqual(text, json.dumps(doc, indent=2, sort_keys=True) + "\n")

    def test_step_log(self):
        """bench/ssu/device_run.sh's log: only ./ssu_bench's step is ssmv's (not a geometry variant's),
        the Triton script's step is not FlashInfer's, the date is the first step's."""
        variant = SSU_LOG.replace("148.64", "150.00")
        text = (step("nvidia-smi --query-gpu=name,driver_version --format=csv",
                     "name, driver_version\nNVIDIA H200, 580.159.04\n", "2026-12-06T09:59:00Z")
                + step("./ssu_bench 200", SSU_LOG) + step("./ssu_bench_g1 200", variant)
                + step("./fi_bench_nt2 200", FI_NT2) + step("./fi_bench_nt4 200", FI_NT4)
                + step("python3 scripts/triton/ssu_bench.py --iterations 200", TRITON_SSU))
        path = self.log("log", text)
        rc, err, doc = self.run_main("--ssmv-ssu", path, "--flashinfer", path, "--triton-ssu", path)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(doc["ssu_b256_t1_fp32_us"], 148.64)
        self.assertEqual(doc["flashinfer_ssu_b64_t4_fp32_us"], 48.99)
        self.assertNotIn("flashinfer_ssu_b256_t1_fp32_us", doc)
        self.assertEqual(doc["triton_ssu_b256_t1_fp32_us"], 175.74)
        self.assertEqual((doc["date"], doc["device"]), ("2026-12-06T09:59:00Z", "NVIDIA H200"))

    def test_conflict_refused_nothing_written(self):
        with open(self.out, "w") as f:
            f.write("old\n")
        other = FI_NT4.replace("40.86", "41.00")
        rc, err, doc = self.run_main("--flashinfer", self.log("nt2", FI_NT2), self.log("nt4", other))
        self.assertEqual((rc, doc), (1, "old\n"))
        self.assertIn("flashinfer_ssu_b64_t1_fp32_us: 40.86", err)
        self.assertIn("nothing written", err)
        self.assertEqual(sorted(os.listdir(self.dir.name)), ["latest.json", "nt2", "nt4"])  # no temporary left

    def test_missing_or_empty_log_refused(self):
        rc, err, doc = self.run_main("--triton-ssu", self.log("t", TRITON_SSU), "--vllm-ssu",
                                     os.path.join(self.dir.name, "absent"))
        self.assertEqual((rc, doc), (1, None))
        self.assertIn("no such log", err)
        rc, err, doc = self.run_main("--ssmv-chunk-scan", self.log("t2", TRITON_SSU))
        self.assertEqual((rc, doc), (1, None))
        self.assertIn("no rows of bench/chunk_scan/chunk_scan_bench", err)

    def test_repeated_ssu_kernel_refused(self):
        rc, err, doc = self.run_main("--ssmv-ssu", self.log("ssu", SSU_LOG + ssu_row("bf16", 256, 1, "streamed", 83.0)))
        self.assertEqual((rc, doc), (1, None))
        self.assertIn("bf16 batch 256 tokens 1: row 3 repeats kernel streamed", err)

    def test_different_gpus_refused(self):
        rc, err, doc = self.run_main("--ssmv-ssu", self.log("ssu", SSU_LOG), "--ssmv-chunk-scan",
                                     self.log("cs", CHUNK_SCAN.replace("H200", "H100 80GB HBM3")))
        self.assertEqual((rc, doc), (1, None))
        self.assertIn("different GPUs", err)


if __name__ == "__main__":
    unittest.main()
