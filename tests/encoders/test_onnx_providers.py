"""The encoder runs on CUDA where onnxruntime-gpu offers it, else on the CPU, and logs which."""

from __future__ import annotations

import logging
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from indexer.encoders import onnx as onnx_encoder


def test_cuda_comes_first_when_onnxruntime_has_it(monkeypatch) -> None:
    gpu_build = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    monkeypatch.setattr(onnx_encoder.ort, "get_available_providers", lambda: gpu_build)
    assert onnx_encoder.providers() == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    monkeypatch.setattr(onnx_encoder.ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert onnx_encoder.providers() == ["CPUExecutionProvider"]


def test_the_session_logs_the_provider_it_runs_on(tmp_path: Path, caplog) -> None:
    tensor = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "tiny", [tensor],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = tmp_path / "tiny.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, path)
    with caplog.at_level(logging.INFO, logger="indexer.encoders.onnx"):
        onnx_encoder._session(path, threads=1)
    assert f"ONNX model {path} runs on CPUExecutionProvider" in caplog.text
