"""Every reference crossref stores for the given folders, and what a change of the code changed in them: the check
behind each extraction change in the crossref section of docs/benchmarks.md that no catalogue covers (a new user's
folder, a bench corpus whose catalogue rows do not hold the references touched).

    python bench/crossref_refs_diff.py dump before.jsonl FOLDER...    # with the code before the change
    python bench/crossref_refs_diff.py dump after.jsonl FOLDER...     # and after it
    python bench/crossref_refs_diff.py diff before.jsonl after.jsonl [--show 60]

Folders are read, split and annotated as ``bench_crossref_debian.py`` does it (the core's reader and splitter, the
default families and cap, no embedder). Each line of a dump: folder, document, the reference's text, its kind, the
document it resolved to (null: none) and the chunk of the place it names.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def dump(out: Path, folders: list[str]) -> None:
    from bench_crossref_debian import chunks_of

    from ragplugins_crossref.config import CrossrefConfig
    from ragplugins_crossref.families import BUILTIN_FAMILIES
    from ragplugins_crossref.resolve import annotate

    with out.open("w", encoding="utf-8") as f:
        for folder in folders:
            chunks, metadata, anchors = chunks_of(Path(folder))
            ann = annotate(chunks, metadata, BUILTIN_FAMILIES, max_refs=CrossrefConfig().max_refs_per_chunk,
                           anchors=anchors)
            for doc, members in sorted(chunks.items()):
                for chunk_id, _ in members:
                    for ref in ann.refs[chunk_id]:
                        f.write(json.dumps({"folder": Path(folder).name, "doc": doc, "text": ref["text"],
                                            "kind": ref.get("kind"), "target": ref["target"],
                                            "chunk": ref.get("chunk")}, ensure_ascii=False) + "\n")


def _load(path: Path) -> Counter:
    found: Counter = Counter()
    for line in path.open(encoding="utf-8"):
        ref = json.loads(line)
        found[(ref["folder"], ref["doc"], ref["text"], ref["target"])] += 1
    return found


def diff(before: Path, after: Path, show: int) -> None:
    old, new = _load(before), _load(after)
    for name, refs in (("before", old), ("after", new)):
        resolved = sum(n for key, n in refs.items() if key[3] and key[3] != key[1])
        print(f"{name}: {sum(refs.values())} references, {resolved} resolved to another document")
    gone, added = old - new, new - old
    print(f"changed: {sum(gone.values())} gone, {sum(added.values())} new")
    for sign, part in (("+", added), ("-", gone)):
        for key, n in sorted(part.items(), key=lambda kv: tuple(str(x) for x in kv[0]))[:show]:
            print(sign, n, *key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write every stored reference of the folders")
    d.add_argument("out", type=Path)
    d.add_argument("folders", nargs="+")
    c = sub.add_parser("diff", help="compare two dumps")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--show", type=int, default=60, help="lines of each side shown")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.out, args.folders)
    else:
        diff(args.before, args.after, args.show)


if __name__ == "__main__":
    main()
