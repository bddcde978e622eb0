"""The scanner's ONNX models run on one core each: the scanner shares the machine with the web
page and the other stage, and its speed bars are per core."""

from __future__ import annotations

from pathlib import Path


def one_core_session(model_path: str | Path, quiet: bool = False):
    """An onnxruntime session of `model_path` on the CPU, one thread; `quiet` drops
    onnxruntime's warnings."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    if quiet:
        opts.log_severity_level = 3
    return ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
