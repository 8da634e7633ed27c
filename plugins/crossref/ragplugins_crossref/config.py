from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragplugins import api
from ragplugins_crossref.families import Kind, ReferenceFamily, linear_family


class FamilySpec(BaseModel):
    """A reference family declared in the config: a name, a kind and a regex, run on RE2 (linear time)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Name shown in the stored references, e.g. 'ticket'.")
    kind: Kind = Field(
        description="What the match names; decides the named groups the pattern needs (label: word, value; "
                    "section: value; identifier: id (optional volume); citation: key; document: name; link: href; "
                    "anchor: key (optional space)).")
    pattern: str = Field(description="Regex with the kind's named groups, run on RE2 (linear time; no look-around "
                                     "or back-references).")
    defines: str | None = Field(
        default=None, description="Kind anchor only: regex with group key for where a document declares a name the "
                                  "references look up (Vim's help: '\\*(?P<key>[^*\\s|]+)\\*' for "
                                  "'\\|(?P<key>[^|\\s]+)\\|'), run on RE2 too.")

    @field_validator("pattern", "defines")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc}); escape backslashes in TOML "
                             "(use '\\\\d' or a literal string '...')") from exc
        return value

    @model_validator(mode="after")
    def _has_groups(self) -> FamilySpec:
        self.build()  # names the family and the missing named group
        return self

    def build(self) -> ReferenceFamily:
        return linear_family(self.name, self.kind, self.pattern, "declared in the config", defines=self.defines)


class CrossrefConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extract: bool = Field(True, description="Annotate chunks with their references at index time.")
    hop: bool = Field(True, description="At query time, follow references from the top candidates.",
                      json_schema_extra=api.QUERY_TIME)
    max_hops: int = Field(1, ge=0, le=10,
                          description="References the hop may follow per query (best-matching first). One whose page "
                                      "the candidates already hold counts for none: that page's own pointers are "
                                      "weighed next.",
                          json_schema_extra=api.QUERY_TIME)
    chunks_per_hop: int = Field(
        2, ge=1, le=20,
        description="Chunks pulled from each pointed-at document, at most: the chunk the reference names (a "
                    "section) first; with swap, then the document's candidates below the window, then its best "
                    "matches (a list shorter than the window takes that first chunk alone); otherwise its best "
                    "matches.",
        json_schema_extra=api.QUERY_TIME)
    trigger_depth: int = Field(3, ge=1, le=100, description="Only references in this many top candidates count.",
                               json_schema_extra=api.QUERY_TIME)
    gate: float = Field(
        1.0, ge=0.0, le=2.0,
        description="Trigger: the hop follows a reference only when the pointer (its sentence, or the better of "
                    "its sentence and its passage, see `reading`) matches the query at least gate x as well "
                    "(dense cosine) as, with swap, "
                    "the chunk it would displace (in a list shorter than the window, which trades nothing, the "
                    "weakest chunk), else the best candidate. 1.0 = the pointer argues for its target at least as "
                    "strongly as the traded chunk argues for itself; lower hops more often. (Until issue 14: 0.85 x "
                    "the best candidate.)",
        json_schema_extra=api.QUERY_TIME)
    placement: Literal["swap", "after_referrer", "replace_tail", "append"] = Field(
        "swap",
        description="Where hopped chunks go: swap = into the top `window`, each in place of the lowest-ranked "
                    "chunk below the referrer that repeats a third document already represented above it, nothing "
                    "else moving (the pointed-at document's chunks outside the window are brought in, even when its "
                    "best chunk is already there; a list shorter than the window takes the lead chunk alone at its "
                    "end); no chunk to spare, no hop. "
                    "after_referrer = right after the referring chunk (the list grows by "
                    "at most max_hops x chunks_per_hop; nothing retrieved is dropped); replace_tail = there too, the "
                    "lowest-ranked candidates below the referrer making room (the list keeps its length, but a "
                    "wrong hop can displace a relevant chunk); append = after the whole list.",
        json_schema_extra=api.QUERY_TIME)
    reading: Literal["passage", "sentence"] = Field(
        "sentence",
        description="How a pointer is matched to the query for the gate and the swap: sentence = the sentence "
                    "making the reference; passage = the better of it and its passage (the sentence with its "
                    "neighbours in its paragraph, up to 240 characters either side), for pointer sentences that say "
                    "only where to look (\"See X for details.\"). The passage of a link inside a chunk that matches "
                    "the question matches it too, whatever the link points at (on BIND's manual a link to the "
                    "`named` man page traded a question's answer away), so sentence is the default since "
                    "2026-12-03.",
        json_schema_extra=api.QUERY_TIME)
    window: int = Field(
        10, ge=1, le=1000,
        description="swap placement: the top positions the hop may change (the chunks your answer is read from).",
        json_schema_extra=api.QUERY_TIME)
    max_refs_per_chunk: int = Field(16, ge=1, le=200, description="References kept per chunk (resolved ones first).")
    aliases: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Extra names for documents, keyed by document id or file name, e.g. {'07_nda.pdf' = ['NDA']}: "
                    "references and questions that use them point at that document.")
    families: list[FamilySpec] = Field(
        default_factory=list, description="Extra reference families (regexes), added to the built-in table.")
