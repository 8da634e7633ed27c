"""Which HTML pages the reader's text changes for, against the reader of an earlier commit: every page of the
given folders read by both, the pages whose Markdown differs named (the first few per folder), and with
``--show`` the differing lines. The check behind each HTML reader change in docs/benchmarks.md (a change that
alters no page of a bench corpus cannot move its metrics).

    python bench/compare_html_reader.py 992fc93 bench/corpora-debian/postgres /usr/share/doc/git-doc [--show]
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def reader_at(ref: str):
    """The html_reader module as it was at git ``ref``, loaded beside the current one."""
    source = subprocess.run(["git", "show", f"{ref}:ragplugins/html_reader.py"], cwd=HERE.parent, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "html_reader_then.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("html_reader_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ref", help="the commit whose reader to compare with")
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--show", action="store_true", help="print the lines that differ")
    args = p.parse_args(argv)
    from ragplugins.html_reader import html_to_markdown

    then = reader_at(args.ref)
    for folder in args.folders:
        pages = sorted(f for f in folder.rglob("*") if f.suffix in (".html", ".htm") and f.is_file())
        changed = []
        for page in pages:
            html = page.read_text(encoding="utf-8", errors="replace")
            try:
                before = then.html_to_markdown(html)
            except Exception as exc:  # noqa: BLE001 - a page the earlier reader failed on reads differently now
                before = f"(not read: {type(exc).__name__})"
            after = html_to_markdown(html)
            if before != after:
                changed.append(page.relative_to(folder).as_posix())
                if args.show:
                    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), str(page), str(page),
                                                     lineterm="", n=0):
                        print(line[:200])
        print(f"{folder}: {len(pages)} pages, {len(changed)} changed {changed[:5]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
