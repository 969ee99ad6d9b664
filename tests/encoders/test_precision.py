"""The GPU path's graph: an int8 model dequantised (float32) and in float16, and the encoder's
precisions ("int8" as shipped, "float" batched), which a bundle records and is served with."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from indexer.encoders import SHIPPED_MODEL_DIR, EncoderError, load_encoder
from indexer.encoders import onnx as onnx_encoder
from indexer.encoders.dequantize import float_graph, half_graph
from indexer.settings import EncoderSettings

TEXTS = [
    "heart attack",
    "Acute myocardial infarction",
    "pnemonia",
    "Displaced fracture of left talus, initial encounter for closed fracture",
    "can't hear well",
    "HTN",
]


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def _tiny_model() -> onnx.ModelProto:
    """Token ids → embedding lookup (plus a position bias) → two MatMuls: a transformer's weights."""
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.normal(size=(50, 16)).astype(np.float32), "table"),
        numpy_helper.from_array(rng.normal(size=(16,)).astype(np.float32), "bias"),
        numpy_helper.from_array(rng.normal(size=(16, 32)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.normal(size=(32, 8)).astype(np.float32), "w2"),
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "ids"], ["embedded"]),
            helper.make_node("Add", ["embedded", "bias"], ["summed"]),
            helper.make_node("MatMul", ["summed", "w1"], ["hidden"]),
            helper.make_node("Relu", ["hidden"], ["relu"]),
            helper.make_node("MatMul", ["relu", "w2"], ["out"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", "sequence", 8])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def tiny_int8(tmp_path_factory: pytest.TempPathFactory) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    directory = tmp_path_factory.mktemp("tiny")
    onnx.save(_tiny_model(), directory / "fp32.onnx")
    quantize_dynamic(
        directory / "fp32.onnx", directory / "int8.onnx", per_channel=True, weight_type=QuantType.QInt8,
        op_types_to_quantize=["Gather", "MatMul"],
    )
    return _tiny_model(), onnx.load(str(directory / "int8.onnx"))


def test_dequantising_restores_float_matmuls_and_lookups(tiny_int8) -> None:
    original, quantised = tiny_int8
    assert {"MatMulInteger", "DynamicQuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in quantised.graph.node}
    restored = float_graph(quantised)
    assert [n.op_type for n in restored.graph.node] == ["Gather", "Add", "MatMul", "Relu", "MatMul"]
    assert all(init.data_type == TensorProto.FLOAT for init in restored.graph.initializer)
    ids = np.array([[1, 7, 49], [3, 3, 0]], dtype=np.int64)
    exact, int8, dequantised = (_run(m, {"ids": ids}) for m in (original, quantised, restored))
    # Only the weights' rounding is left: the float graph is closer to the original than int8 is.
    assert np.abs(dequantised - exact).max() < np.abs(int8 - exact).max()
    assert np.allclose(dequantised, exact, rtol=0.05, atol=0.15)


def test_a_graph_that_is_not_dynamically_quantised_is_refused(tiny_int8) -> None:
    _, quantised = tiny_int8
    broken = onnx.ModelProto()
    broken.CopyFrom(quantised)
    matmul = next(n for n in broken.graph.node if n.op_type == "MatMulInteger")
    cast = next(n for n in broken.graph.node if matmul.output[0] in n.input)
    cast.op_type = "Identity"
    with pytest.raises(EncoderError, match=f"node {matmul.name}: expected one Cast after it, found \\['Identity'\\]"):
        float_graph(broken)


def test_the_shipped_model_in_float_and_half_matches_its_int8_vectors() -> None:
    int8 = load_encoder(SHIPPED_MODEL_DIR, precision="int8")
    assert (int8.precision, int8.alone) == ("int8", True)
    floating = load_encoder(SHIPPED_MODEL_DIR, precision="float")
    assert (floating.precision, floating.alone) == ("float", False)
    a, b = int8.encode(TEXTS), floating.encode(TEXTS)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.985 and cosines.mean() > 0.99
    # Batched, each text gets the vector it gets alone: no per-batch activation scale any more.
    alone = np.concatenate([floating.encode([text]) for text in TEXTS])
    assert np.allclose(alone, b, atol=1e-5)
    half = half_graph(onnx.load(str(SHIPPED_MODEL_DIR / "model.onnx")))
    float_inits = [i for i in half.graph.initializer if i.data_type == TensorProto.FLOAT16]
    assert sum(numpy_helper.to_array(i).size for i in float_inits) > 20_000_000  # all weights in float16
    assert [o.type.tensor_type.elem_type for o in half.graph.output] == [TensorProto.FLOAT]


def test_auto_picks_float_where_cuda_is_offered_else_int8(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_encoder(SHIPPED_MODEL_DIR, EncoderSettings(precision="auto")).precision == "int8"
    gpu_build = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    monkeypatch.setattr(onnx_encoder.ort, "get_available_providers", lambda: gpu_build)
    half_graphs: list[onnx.ModelProto] = []
    monkeypatch.setattr(onnx_encoder, "half_graph", lambda m: half_graphs.append(m) or float_graph(m))
    encoder = load_encoder(SHIPPED_MODEL_DIR, EncoderSettings(precision="auto"))
    assert (encoder.precision, encoder.alone, len(half_graphs)) == ("float", False, 1)
