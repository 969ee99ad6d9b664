"""The encoder runs on CUDA where onnxruntime-gpu offers it (the float precision; int8 stays on the
CPU), else on the CPU, and logs which."""

from __future__ import annotations

import logging
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from indexer.encoders import SHIPPED_MODEL_DIR, load_encoder
from indexer.encoders import onnx as onnx_encoder
from indexer.encoders.dequantize import float_graph
from indexer.settings import EncoderSettings


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
        onnx_encoder._session(path, 1, None, onnx_encoder.providers())
    assert f"ONNX model {path} runs on CPUExecutionProvider" in caplog.text


def test_int8_stays_on_the_cpu_where_cuda_is_offered_and_float_batches_by_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an H200, onnxruntime split the int8 graph between CUDA and the CPU and its vectors moved
    (min cosine 0.987 against the CPU's): int8 must ask for the CPU alone, so an int8 bundle's
    queries get its labels' vectors on any host. Float asks for CUDA and then batches 1,024."""
    gpu_build = [onnx_encoder.CUDA, onnx_encoder.CPU]
    monkeypatch.setattr(onnx_encoder.ort, "get_available_providers", lambda: gpu_build)
    monkeypatch.setattr(onnx_encoder, "half_graph", float_graph)
    real_session = onnx_encoder.ort.InferenceSession

    class Session:
        """The real session on the CPU, reporting the providers the encoder asked for."""

        def __init__(self, model: str | bytes, options: object, providers: list[str]) -> None:
            self._real, self._asked = real_session(model, options, providers=[onnx_encoder.CPU]), providers

        def get_providers(self) -> list[str]:
            return self._asked

        def __getattr__(self, name: str) -> object:
            return getattr(self._real, name)

    monkeypatch.setattr(onnx_encoder.ort, "InferenceSession", Session)
    int8 = load_encoder(SHIPPED_MODEL_DIR, precision="int8")
    floating = load_encoder(SHIPPED_MODEL_DIR, precision="float")
    assert (int8.provider, int8.batch_size) == ("CPUExecutionProvider", 64)
    assert (floating.provider, floating.batch_size) == ("CUDAExecutionProvider", 1024)
    assert load_encoder(SHIPPED_MODEL_DIR, EncoderSettings(batch_size=256), "float").batch_size == 256
    texts = ["heart attack", "HTN", "can't hear well"]
    assert int8.encode(texts).shape == floating.encode(texts).shape == (3, 384)
