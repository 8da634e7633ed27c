"""Markdown files are read as their pages show them: no HTML comments outside code, front matter written as the
page's title and description (ragplugins.markdown_reader, through the reader every index uses)."""

from __future__ import annotations

import gzip
import json

from ragplugins.anchors import PAGE_ANCHORS_KEY
from ragplugins.readers import read_documents

DOCKER_PAGE = """---
title: Dockerfile reference
description: "Dockerfiles use a simple DSL to automate building an image."
keywords: "builder, docker, automation"
redirect_from:
- /reference/builder/
---
<!-- This file is maintained within the docker/cli GitHub
     repository. Make all pull requests against that repo.
-->

Docker can build images automatically by reading the instructions from a `Dockerfile`.
"""


def _read(tmp_path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_documents([tmp_path / name]).documents[0].text


def test_front_matter_gives_the_page_its_title_and_description_and_its_settings_are_not_read(tmp_path):
    text = _read(tmp_path, "builder.md", DOCKER_PAGE)
    assert text.startswith("# Dockerfile reference\n\nDockerfiles use a simple DSL to automate building an image.\n\n")
    assert "Docker can build images automatically" in text
    for unread in ("keywords", "builder, docker", "redirect_from", "/reference/builder/", "---", "maintained within"):
        assert unread not in text


def test_a_page_with_its_own_top_heading_keeps_it_and_gets_no_second_title(tmp_path):
    text = _read(tmp_path, "run.md", '---\ntitle: "run"\ndescription: "The run command"\n---\n# docker run\n\nRuns.\n')
    assert text == "The run command\n\n# docker run\n\nRuns.\n"


def test_toml_front_matter_as_hugo_writes_it(tmp_path):
    text = _read(tmp_path, "page.markdown", '+++\ntitle = "Backups"\nweight = 3\n+++\n\nCopy the data folder.\n')
    assert text == "# Backups\n\nCopy the data folder.\n"


def test_a_page_that_opens_with_a_rule_is_not_taken_for_front_matter(tmp_path):
    page = "---\n\nA paragraph between two rules, not a table of fields.\n\n---\n\nMore.\n"
    assert _read(tmp_path, "rules.md", page) == page
    broken = "---\ntitle: [unclosed\n---\nText.\n"
    assert _read(tmp_path, "broken.md", broken) == broken


def test_comments_are_dropped_but_code_that_shows_one_keeps_it(tmp_path):
    page = (
        "# Excerpts\n\n"
        "Put `<!-- more -->` where the excerpt ends. <!-- a note to editors --> Then build.\n\n"
        "<!-- YAML\nadded: v10.0.0\n-->\n\n"
        "```html\n<!-- shown in the example -->\n```\n\n"
        "    <!-- an indented example -->\n"
    )
    text = _read(tmp_path, "excerpts.md", page)
    assert "`<!-- more -->`" in text
    assert "<!-- shown in the example -->" in text and "<!-- an indented example -->" in text
    for unread in ("a note to editors", "YAML", "added: v10.0.0"):
        assert unread not in text
    assert "where the excerpt ends.  Then build." in text


def test_only_markdown_is_read_this_way_and_compressed_markdown_too(tmp_path):
    assert "<!-- kept -->" in _read(tmp_path, "notes.txt", "Plain text <!-- kept -->\n")
    with gzip.open(tmp_path / "page.md.gz", "wt", encoding="utf-8") as f:
        f.write("---\ntitle: Compressed\n---\nBody <!-- gone -->\n")
    text = read_documents([tmp_path / "page.md.gz"]).documents[0].text
    assert text == "# Compressed\n\nBody \n"


def test_empty_anchors_are_the_pages_places_not_its_words(tmp_path):
    page = ('---\ntitle: run\n---\n### <a name="tmpfs"></a> Mount tmpfs (--tmpfs)\n\nMounts a tmpfs.\n\n'
            "<a id='ERR_X'></a>\n### `ERR_X`\n\nAn error.\n\n```html\n<a name=\"example\"></a>\n```\n")
    (tmp_path / "run.md").write_text(page, encoding="utf-8")
    document = read_documents([tmp_path / "run.md"]).documents[0]
    assert "### Mount tmpfs (--tmpfs)" in document.text and "<a id='ERR_X'>" not in document.text
    assert '<a name="example"></a>' in document.text       # an example in code is the page's text
    anchors = json.loads(document.metadata[PAGE_ANCHORS_KEY])
    assert set(anchors) == {"tmpfs", "ERR_X"}
    for name, words in (("tmpfs", "Mount tmpfs (--tmpfs)"), ("ERR_X", "\n### `ERR_X`")):
        offset, lead = anchors[name]
        assert document.text[offset:].startswith(words) and lead.startswith(words)
