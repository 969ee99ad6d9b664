"""The float graph of a dynamically quantised (int8) ONNX model, for GPUs and batched encoding.

``onnxruntime.quantization.quantize_dynamic`` turns each weight matrix into int8 codes with a
scale and zero point per column, and each ``MatMul`` into ``DynamicQuantizeLinear`` (of the
activations) → ``MatMulInteger`` → ``Cast`` → ``Mul`` (by the two scales); embedding tables
become int8 codes read by ``Gather`` → ``DequantizeLinear``. :func:`float_graph` undoes both
patterns: the weights become the float matrices the codes stand for, the activations stay float.
The result computes what the int8 model computes without rounding its activations, so it needs
no per-batch scale (texts can share a batch) and runs on CUDA, which has no fast path for
``MatMulInteger``. :func:`half_graph` stores it in float16 for the GPU.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np
import onnx
from onnx import numpy_helper

from indexer.encoders.base import EncoderError


def float_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` with its int8 weights dequantised; raises :class:`EncoderError` when a
    quantised node is not one of the two patterns above."""
    model = _copy(model)
    graph = model.graph
    nodes = list(graph.node)  # one set of node objects, so that id() names each node throughout
    weights = {init.name: init for init in graph.initializer}
    producer = {out: node for node in nodes for out in node.output}
    consumers: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for node in nodes:
        for name in node.input:
            consumers[name].append(node)

    replaced: dict[int, onnx.NodeProto] = {}  # id of the node whose output a new node now writes
    dequantised: dict[str, onnx.TensorProto] = {}
    for node in nodes:
        if node.op_type == "MatMulInteger":
            activations, codes, _, zero_point = node.input
            quantise = producer.get(activations)
            cast = _only(consumers[node.output[0]], "Cast", node)
            scale = _only(consumers[cast.output[0]], "Mul", node)
            scales = producer.get(next(i for i in scale.input if i != cast.output[0]))
            if quantise is None or quantise.op_type != "DynamicQuantizeLinear" or scales is None:
                raise EncoderError(f"node {node.name}: not a dynamically quantised MatMul")
            weight_scale = next(i for i in scales.input if i in weights)
            matrix = _dequantise(weights, codes, weight_scale, zero_point)
            dequantised[matrix.name] = matrix
            replaced[id(scale)] = onnx.helper.make_node(
                "MatMul", [quantise.input[0], matrix.name], list(scale.output), name=f"{scale.output[0]}_float"
            )
        elif node.op_type == "DequantizeLinear" and node.input[0] not in weights:
            gather = producer.get(node.input[0])
            if (
                gather is None
                or gather.op_type != "Gather"
                or gather.input[0] not in weights
                or numpy_helper.to_array(weights[node.input[1]]).size != 1
            ):
                raise EncoderError(f"node {node.name}: not a quantised embedding lookup with one scale")
            table = _dequantise(weights, gather.input[0], node.input[1], node.input[2])
            dequantised[table.name] = table
            replaced[id(node)] = onnx.helper.make_node(
                "Gather", [table.name, gather.input[1]], list(node.output), name=f"{node.output[0]}_float",
                axis=next((a.i for a in gather.attribute if a.name == "axis"), 0),
            )
        elif node.op_type == "DequantizeLinear":
            raise EncoderError(f"node {node.name}: dequantises a weight outside a lookup")

    graph.initializer.extend(dequantised.values())
    _keep_used(graph, [replaced.get(id(node), node) for node in nodes])
    return model


def half_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """:func:`float_graph` in float16, inputs and outputs as before (token ids in, float32 out)."""
    from onnxruntime.transformers.float16 import convert_float_to_float16

    return convert_float_to_float16(float_graph(model), keep_io_types=True, disable_shape_infer=True)


def _dequantise(weights: dict[str, onnx.TensorProto], codes: str, scale: str, zero_point: str) -> onnx.TensorProto:
    """The float matrix of int8 ``codes``, with one scale and zero point in all or one a column."""
    values = numpy_helper.to_array(weights[codes]).astype(np.float32)
    s = numpy_helper.to_array(weights[scale]).astype(np.float32).reshape(1, -1)
    z = numpy_helper.to_array(weights[zero_point]).astype(np.float32).reshape(1, -1)
    name = codes.removesuffix("_quantized") + "_dequantized"
    return numpy_helper.from_array((values - z) * s, name)


def _only(nodes: Iterable[onnx.NodeProto], op_type: str, of: onnx.NodeProto) -> onnx.NodeProto:
    found = list(nodes)
    if len(found) != 1 or found[0].op_type != op_type:
        raise EncoderError(f"node {of.name}: expected one {op_type} after it, found {[n.op_type for n in found]}")
    return found[0]


def _keep_used(graph: onnx.GraphProto, nodes: list[onnx.NodeProto]) -> None:
    """Keep the nodes and initializers the graph's outputs depend on, in their order."""
    producer = {out: node for node in nodes for out in node.output}
    needed = {o.name for o in graph.output}
    used: set[int] = set()
    stack = list(needed)
    while stack:
        node = producer.get(stack.pop())
        if node is None or id(node) in used:
            continue
        used.add(id(node))
        for name in node.input:
            needed.add(name)
            stack.append(name)
    kept = [node for node in nodes if id(node) in used]
    del graph.node[:]
    graph.node.extend(kept)
    initializers = [init for init in graph.initializer if init.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(initializers)


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    return copy

