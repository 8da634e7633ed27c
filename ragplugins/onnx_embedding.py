"""The bundled all-MiniLM-L6-v2 without torch: its safetensors weights run on ONNX Runtime.

No maintained library runs these weights offline without torch (embed-anything fetches from the Hub
only, fastembed and ctranslate2 need an ONNX or converted file that only a torch export makes), so
the BERT graph is written here with ``onnx.helper``, once per process, from the weights
themselves: no exported file is shipped or cached. It computes what sentence-transformers computes
for this model (BERT encoder, mean pooling over the attention mask, L2 normalisation, the first
256 word pieces); tests/test_onnx_embedding.py holds it to the torch path within 1e-4."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import Field, PrivateAttr

OPSET = 20  # Gelu (exact, erf-based, as BERT's "gelu") is an ONNX operator from opset 20


def bert_graph(weights: dict[str, np.ndarray], config: dict[str, Any]) -> tuple[bytes, dict[str, np.ndarray]]:
    """A serialized ONNX model, (input_ids, attention_mask) int64 [batch, seq] -> unit vectors [batch, hidden],
    and the weight arrays it names as external data (serializing 90 MB into the protobuf took 1.4 s)."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    eps = config["layer_norm_eps"]
    nodes, inits, external = [], [], {}

    def const(name: str, value: np.ndarray) -> str:
        value = np.ascontiguousarray(value)
        if value.size <= 16:  # shapes, axes, scalars: inline
            inits.append(numpy_helper.from_array(value, name))
            return name
        # Declared as external data and handed to ONNX Runtime as the arrays themselves (add_external_initializers
        # in _session), which matches them by name; the location is never read.
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(value.dtype), dims=value.shape,
                             data_location=TensorProto.EXTERNAL)
        for key, val in (("location", "in-memory"), ("offset", "0"), ("length", str(value.nbytes))):
            tensor.external_data.add(key=key, value=val)
        inits.append(tensor)
        external[name] = value
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:  # torch keeps Linear weights as [out, in]
        w = const(f"{prefix}.wT", weights[f"{prefix}.weight"].T)
        return node("Add", [node("MatMul", [x, w], f"{prefix}.mm"), const(f"{prefix}.b", weights[f"{prefix}.bias"])],
                    f"{prefix}.out")

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, const(f"{prefix}.g", weights[f"{prefix}.weight"]),
                                           const(f"{prefix}.beta", weights[f"{prefix}.bias"])], out,
                    axis=-1, epsilon=eps)

    # Embeddings: word + position + token type 0 (one segment, as sentence-transformers feeds it).
    shape = node("Shape", ["input_ids"], "shape")
    seq = node("Slice", [shape, const("one", np.array([1])), const("two", np.array([2]))], "seq")
    positions = node("Slice", [const("pos", weights["embeddings.position_embeddings.weight"]),
                               const("zero", np.array([0])), seq, "zero"], "positions")
    words = node("Gather", [const("words", weights["embeddings.word_embeddings.weight"]), "input_ids"], "wordvec")
    summed = node("Add", [node("Add", [words, positions], "emb1"),
                          const("type0", weights["embeddings.token_type_embeddings.weight"][0])], "emb2")
    x = layer_norm(summed, "embeddings.LayerNorm", "h0")

    # Padding is masked out of attention by a large negative score, as in BERT.
    mask = node("Cast", ["attention_mask"], "maskf", to=TensorProto.FLOAT)
    keep_bias = node("Mul", [node("Sub", [const("onef", np.array(1.0, np.float32)), mask], "pad"),
                             const("neg", np.array(-1e9, np.float32))], "padbias")
    att_bias = node("Unsqueeze", [keep_bias, const("axes12", np.array([1, 2]))], "attbias")
    split_heads = const("heads_shape", np.array([0, 0, heads, hidden // heads]))
    merge_heads = const("merge_shape", np.array([0, 0, hidden]))
    scale = const("scale", np.array(1.0 / math.sqrt(hidden // heads), np.float32))

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        # Called within this iteration only, so the layer's x and p it reads are the current ones.
        def heads_of(name: str, perm: list[int]) -> str:
            attention = linear(x, f"{p}.attention.self.{name}")  # noqa: B023
            split = node("Reshape", [attention, split_heads], f"{p}.{name}.split")  # noqa: B023
            return node("Transpose", [split], f"{p}.{name}.t", perm=perm)  # noqa: B023

        q, k, v = heads_of("query", [0, 2, 1, 3]), heads_of("key", [0, 2, 3, 1]), heads_of("value", [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k], f"{p}.qk"), scale], f"{p}.scaled"), att_bias],
                      f"{p}.scores")
        probs = node("Softmax", [scores], f"{p}.probs", axis=-1)
        context = node("Reshape", [node("Transpose", [node("MatMul", [probs, v], f"{p}.ctx")], f"{p}.ctx.t",
                                        perm=[0, 2, 1, 3]), merge_heads], f"{p}.ctx.m")
        attended = node("Add", [linear(context, f"{p}.attention.output.dense"), x], f"{p}.res1")
        x = layer_norm(attended, f"{p}.attention.output.LayerNorm", f"{p}.h1")
        inner = node("Gelu", [linear(x, f"{p}.intermediate.dense")], f"{p}.gelu")
        x = layer_norm(node("Add", [linear(inner, f"{p}.output.dense"), x], f"{p}.res2"),
                       f"{p}.output.LayerNorm", f"{p}.h2")

    # Mean over the real tokens, then unit length (sentence-transformers' Pooling and Normalize).
    token_mask = node("Unsqueeze", [mask, const("axis2", np.array([2]))], "tokmask")
    axis1 = const("axis1", np.array([1]))
    total = node("ReduceSum", [node("Mul", [x, token_mask], "masked"), axis1], "total", keepdims=0)
    count = node("Max", [node("ReduceSum", [token_mask, axis1], "count0", keepdims=0),
                         const("tiny", np.array(1e-9, np.float32))], "count")
    mean = node("Div", [total, count], "mean")
    norm = node("Max", [node("ReduceL2", [mean, const("lastaxis", np.array([-1]))], "l2", keepdims=1),
                        const("eps", np.array(1e-12, np.float32))], "norm")
    node("Div", [mean, norm], "embedding")

    ids = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in ("input_ids", "attention_mask")
    ]
    out = [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])]
    graph = helper.make_graph(nodes, "minilm", ids, out, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]).SerializeToString(), external


class BundledOnnxEmbedding(BaseEmbedding):
    """A sentence-transformers BERT model folder (the bundled MiniLM) embedded with ONNX Runtime, no torch."""

    model_name: str = Field(description="The model folder: config.json, model.safetensors, tokenizer.json.")
    max_length: int = Field(256, description="Word pieces per text, [CLS] and [SEP] included; the rest is cut, "
                                             "as sentence-transformers' max_seq_length does.")
    embed_dim: int = Field(384, description="Vector size (the model's hidden size).")

    _session: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _weights: Any = PrivateAttr(default=None)  # the session reads them in place: they live as long as it does

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(model_name)
        config = json.loads((folder / "config.json").read_text())
        st_config = folder / "sentence_bert_config.json"
        if st_config.exists():
            kwargs.setdefault("max_length", json.loads(st_config.read_text()).get("max_seq_length", 256))
        super().__init__(model_name=str(folder), embed_dim=config["hidden_size"], **kwargs)
        model, self._weights = bert_graph(load_file(folder / "model.safetensors"), config)
        self._session = _session(model, self._weights)
        # tokenizer.json carries a 128-piece truncation and fixed padding from its export; the model's own
        # limit (max_seq_length) and padding to the longest text in the batch are what sentence-transformers uses.
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_length)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    @classmethod
    def class_name(cls) -> str:
        return "BundledOnnxEmbedding"

    def _embed(self, texts: list[str]) -> list[list[float]]:
        encodings = self._tokenizer.encode_batch([t.strip() for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (vectors,) = self._session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
        return vectors.tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)


def _session(model: bytes, weights: dict[str, np.ndarray]) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.add_external_initializers(list(weights), [onnxruntime.OrtValue.ortvalue_from_numpy(w)
                                                      for w in weights.values()])
    # ONNX Runtime sizes its thread pool by the cores, not by OMP_NUM_THREADS as torch does; honour the
    # same setting so both paths share a machine the same way.
    if (threads := os.environ.get("OMP_NUM_THREADS", "")).isdigit() and int(threads) > 0:
        options.intra_op_num_threads = int(threads)
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
