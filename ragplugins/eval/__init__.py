"""``ragplugins eval``: measure any feature on your own documents.

    from ragplugins.eval import Arm, bench_corpus, run_eval
    paths, gold = bench_corpus("acq+docs")
    run = run_eval(paths, gold, [Arm("off", {"enable": []}), Arm("on", {"enable": ["crossref"]})], ks=[5, 20])
    run.summary("on", 5); run.compare("off", "on", 5); run.write("results/")
"""

from ragplugins.eval.corpora import bench_corpus, bench_dir, named_corpus
from ragplugins.eval.gold import GoldRow, load_gold
from ragplugins.eval.metrics import hit, is_relevant, list_metrics, ndcg_at, norm, recall_at
from ragplugins.eval.runner import Arm, EvalRun, index_fingerprint, run_eval

__all__ = ["Arm", "EvalRun", "GoldRow", "bench_corpus", "bench_dir", "hit", "index_fingerprint", "is_relevant",
           "list_metrics", "load_gold", "named_corpus", "ndcg_at", "norm", "recall_at", "run_eval"]
