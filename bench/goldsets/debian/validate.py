"""Check a Debian-corpus gold set and reference catalogue against the extracted documents.

    python bench/goldsets/debian/validate.py git [postgres python]

Not a retrieval run: it only reads the files named in each row. Checks: required fields, unique
ids, each expected substring (whitespace collapsed, lowercased) inside every expected_sources
file (for HTML, inside the page's text with the tags stripped too), paraphrase_of pointing at a
row of the same split, and the dev/test balance per kind. Exit 1 on any problem.
"""

from __future__ import annotations

import html
import json
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from ragplugins.eval.metrics import norm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from debian_corpora import corpus_dir  # noqa: E402

GOLD_FIELDS = ("id", "corpus", "query", "expected", "match", "expected_sources", "dimensions")
REF_FIELDS = ("id", "corpus", "from", "line", "cue", "to", "family")
KINDS = ("factoid", "pointer", "paraphrase")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def page_texts(path: Path) -> list[str]:
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        parser = _Text()
        parser.feed(raw)
        return [norm(html.unescape(raw)), norm("".join(parser.parts))]
    return [norm(raw)]


def read_rows(path: Path, fields: tuple[str, ...], problems: list[str]) -> list[dict]:
    """The JSONL rows of ``path``; a missing file, a missing field or a repeated id is a problem."""
    if not path.is_file():
        problems.append(f"{path.name}: missing")
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    seen: set[str] = set()
    for row in rows:
        rid = row.get("id", "?")
        problems.extend(f"{rid}: no '{key}'" for key in fields if key not in row)
        if rid in seen:
            problems.append(f"{rid}: duplicate id")
        seen.add(rid)
    return rows


def check_gold(corpus: str, root: Path, problems: list[str]) -> None:
    path = HERE / f"{corpus}.jsonl"
    rows = read_rows(path, GOLD_FIELDS, problems)
    by_id = {row.get("id", "?"): row for row in rows}
    texts: dict[str, list[str]] = {}
    for row in rows:
        rid, dims = row.get("id", "?"), row.get("dimensions", {})
        if dims.get("kind") not in KINDS:
            problems.append(f"{rid}: dimensions.kind must be one of {KINDS}")
        if dims.get("split") not in ("dev", "test"):
            problems.append(f"{rid}: dimensions.split must be dev or test")
        for source in row.get("expected_sources", []):
            file = root / source
            if not file.is_file():
                problems.append(f"{rid}: expected source '{source}' is not in the corpus")
                continue
            texts.setdefault(source, page_texts(file))
            for expected in row.get("expected", []):
                for text in texts[source]:
                    if norm(expected) not in text:
                        problems.append(f"{rid}: '{expected}' not found in {source}")
                        break
        anchor = row.get("anchor_doc")
        if anchor and not (root / anchor).is_file():
            problems.append(f"{rid}: anchor_doc '{anchor}' is not in the corpus")
        parent = row.get("paraphrase_of")
        if dims.get("kind") == "paraphrase":
            if parent not in by_id:
                problems.append(f"{rid}: paraphrase_of '{parent}' is not a row")
            elif by_id[parent]["dimensions"].get("split") != dims.get("split"):
                problems.append(f"{rid}: not in the same split as {parent}")
    counts = Counter((r["dimensions"].get("kind"), r["dimensions"].get("split")) for r in rows)
    print(f"{corpus}: {len(rows)} questions; " + ", ".join(
        f"{kind} dev {counts[(kind, 'dev')]} / test {counts[(kind, 'test')]}" for kind in KINDS))


def check_refs(corpus: str, root: Path, problems: list[str]) -> None:
    path = HERE / f"{corpus}.refs.jsonl"
    rows = read_rows(path, REF_FIELDS, problems)
    for row in rows:
        rid = row.get("id", "?")
        source = root / str(row.get("from"))
        if not source.is_file():
            problems.append(f"{rid}: 'from' file '{row.get('from')}' is not in the corpus")
        elif norm(str(row.get("cue", ""))) not in " ".join(page_texts(source)):
            problems.append(f"{rid}: cue '{row.get('cue')}' not found in {row.get('from')}")
        if row.get("to") is not None and not (root / row["to"]).is_file():
            problems.append(f"{rid}: 'to' file '{row['to']}' is not in the corpus")
    inside = sum(1 for r in rows if r.get("to") is not None)
    print(f"{corpus}: {len(rows)} references ({inside} to documents in the corpus) "
          f"from {len({r.get('from') for r in rows})} files")


def main(argv: list[str]) -> int:
    problems: list[str] = []
    for corpus in argv or ["git", "postgres", "python"]:
        root = corpus_dir(corpus)
        check_gold(corpus, root, problems)
        check_refs(corpus, root, problems)
    for problem in problems:
        print("PROBLEM", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
