"""Polarity: what turns a sentence into its opposite without changing its words much.

- **Negation words** in English, German, French and Spanish ("not", "nicht", "ne ... pas", "no").
- **Opposites**: directions and comparatives (above/below, before/after, more/less,
  increase/decrease), antonym pairs (enable/disable, soft/hard, leading/trailing),
  bounds and quantifiers (at least/at most, minimum/maximum, all/some, few/many) and
  hedges against absolutes (typically/always).
- **Prefix opposites**: un-, in-, im-, non-, dis- ("unstable" against "stable", "non-merge"
  against "merge").
- **Restriction**: "only" and its kin narrow a claim the evidence did not narrow; "all" and
  "every" widen one the evidence restricted ("only", "except").

A clause and the evidence that says the same thing must agree on all of these. Words are
compared as written (lowercased), so each group lists the forms it means.

Languages: :func:`language` tells English, German, French and Spanish apart by their function
words and names anything else it recognises (or text in another script) so the verifier can
refuse to pass a sentence it cannot read, instead of passing it silently.
"""

from __future__ import annotations

import re
import unicodedata

import bm25s.stopwords as _stop

NEGATIONS = {
    "en": {"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "without", "n't"},
    "de": {"nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "nichts", "weder",
           "ohne"},
    "fr": {"ne", "n", "pas", "jamais", "aucun", "aucune", "rien", "sans", "ni", "guère"},
    "es": {"no", "nunca", "jamás", "ningún", "ninguno", "ninguna", "nada", "nadie", "ni", "sin", "tampoco"},
}
ALL_NEGATIONS = set().union(*NEGATIONS.values()) - {"n"}
_FOREIGN_NEGATIONS = NEGATIONS["de"] | NEGATIONS["fr"] | NEGATIONS["es"]
# Answer particles that open a reply to a yes/no question.
YES = {"yes", "yeah", "yep", "correct", "ja", "oui", "si", "sí"}
NO = {"no", "nope", "incorrect", "nein", "non"}

_FORMS = [
    # directions and comparatives
    ("above exceed exceeds exceeded exceeding beyond higher", "below lower"),
    ("before earlier prior preceding", "after later subsequent subsequently"),
    ("more greater larger bigger higher", "less fewer smaller lower"),
    ("increase increases increased increasing raise raises raised raising grow grows rise rises",
     "decrease decreases decreased decreasing reduce reduces reduced reducing lower lowers lowered lowering "
     "shrink shrinks fall falls"),
    ("largest biggest highest greatest", "smallest lowest"),
    ("longest", "shortest"), ("longer long", "shorter short"), ("oldest older", "newest newer"),
    ("leading", "trailing"), ("ascending", "descending"), ("forward forwards", "backward backwards"),
    ("left", "right"), ("upstream", "downstream"), ("inside internal", "outside external"),
    ("innermost inner", "outermost outer"), ("send sends sent sending", "receive receives received receiving"),
    ("fast faster fastest quick quicker quickly speed speeds", "slow slower slowest slowly slows"),
    ("speeds up", "slows down"),
    # antonym pairs
    ("enable enables enabled enabling", "disable disables disabled disabling"),
    ("allow allows allowed permit permits permitted", "deny denies denied forbid forbids forbidden prohibit "
                                                      "prohibits prohibited"),
    ("accept accepts accepted", "reject rejects rejected refuse refuses refused"),
    ("include includes included including", "exclude excludes excluded excluding"),
    ("add adds added", "remove removes removed delete deletes deleted drop drops dropped"),
    ("keep keeps kept leave leaves retain retains retained preserve preserves preserved",
     "remove removes removed delete deletes deleted discard discards discarded"),
    ("open opens opened", "close closes closed"),
    ("soft", "hard"), ("true", "false"), ("success succeeds successful", "failure fails failed"),
    ("public", "private"), ("explicit explicitly", "implicit implicitly"), ("static", "dynamic"),
    ("local", "remote"), ("synchronous", "asynchronous"), ("mandatory required compulsory", "optional"),
    ("same identical", "different"), ("first", "last"), ("start starts begin begins", "end ends finish finishes"),
    ("win wins", "lose loses"), ("gain gains", "loss losses"), ("cheap cheaper", "expensive"),
    ("strong stronger", "weak weaker"), ("safe safer", "unsafe dangerous"), ("read-only", "writable write"),
    # bounds, quantifiers, qualifiers
    ("least minimum min minimal", "most maximum max maximal"),
    ("all every always", "some sometimes"),
    ("few", "many hundreds thousands millions numerous lots"),
    ("exactly precisely", "between"),
    ("always exactly invariably", "typically usually normally generally often might sometimes almost nearly mostly"),
]
OPPOSITES: dict[str, set[str]] = {}
for _a, _b in _FORMS:
    for _x in _a.split():
        OPPOSITES.setdefault(_x, set()).update(_b.split())
    for _x in _b.split():
        OPPOSITES.setdefault(_x, set()).update(_a.split())
_PREFIXES = ("non-", "non", "un", "in", "im", "il", "ir", "dis")
RESTRICTIVE = {"only", "just", "solely", "exclusively", "single", "nur", "seulement", "uniquement", "solo",
               "solamente", "únicamente"}
# Idioms that contain a negation word but do not negate ("no more than 3", "not only").
_NOT_NEGATION = re.compile(r"\b(?:no|not)\s+(?:more|less|later|earlier|fewer|greater|longer than|only)\b"
                           r"|\bnot\s+only\b|\bnon-\w+|\bnicht-\w+"
                           # "zero, negative, or not specified means ...": one of the alternatives, not a negation
                           r"|\bwhether\s+or\s+not\b|(?:,|\bor)\s+not\s+\w+ed\b(?=\s*(?:,|\bor\b|\w+s\b))", re.I)
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")

# Lists of a few hundred function words each; English takes the longer of bm25s's two lists (its short one has
# 33 words, so "You pay 120 EUR per year." would count one Italian word, "per", and no English one).
_STOPWORDS = {
    "en": set(_stop.STOPWORDS_EN_PLUS), "de": set(_stop.STOPWORDS_GERMAN), "fr": set(_stop.STOPWORDS_FRENCH),
    "es": set(_stop.STOPWORDS_SPANISH), "it": set(_stop.STOPWORDS_ITALIAN), "pt": set(_stop.STOPWORDS_PORTUGUESE),
    "nl": set(_stop.STOPWORDS_DUTCH), "sv": set(_stop.STOPWORDS_SWEDISH), "da": set(_stop.STOPWORDS_DANISH),
    "no": set(_stop.STOPWORDS_NORWEGIAN), "tr": set(_stop.STOPWORDS_TURKISH),
}
READ = ("en", "de", "fr", "es")
# Letters that English does not use, as a hint for short sentences.
_LETTERS = {"de": "äöüß", "fr": "éèêëçàùâîôœ", "es": "ñ¿¡áíóú"}


def tokens(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def language(text: str) -> str:
    """'en', 'de', 'fr', 'es', another code from the stopword lists, 'other-script', or 'en' when unsure."""
    letters = [c for c in text if c.isalpha()]
    if letters and sum(1 for c in letters if not unicodedata.name(c, "").startswith("LATIN")) > len(letters) / 3:
        return "other-script"
    words = [w for w in tokens(text) if "_" not in w]
    counts = {lang: sum(1 for w in words if w in stops) for lang, stops in _STOPWORDS.items()}
    for lang, marks in _LETTERS.items():
        counts[lang] += sum(1 for c in text.lower() if c in marks)
    best = max(counts, key=lambda lang: (counts[lang], lang == "en", lang in READ))
    # Short sentences share function words across languages: leave English only when it has no function
    # word of its own, or clearly fewer.
    if best == "en" or counts[best] < 1 or counts[best] <= counts["en"] or counts["en"] and counts[best] < 2:
        return "en"
    return best


def negation_words(text: str, lang: str = "en") -> set[str]:
    words = set(tokens(_NOT_NEGATION.sub(" ", text)))
    # Short sentences are easily taken for a neighbouring language: any of the three foreign lists counts.
    found = words & (NEGATIONS["en"] if lang == "en" else _FOREIGN_NEGATIONS)
    if lang == "en" and re.search(r"n['’]t\b", text):
        found.add("n't")
    if lang == "fr":
        found |= {"ne"} if re.search(r"\bn['’]", text) else set()
    return found


def negated(text: str, lang: str = "en") -> bool:
    return bool(negation_words(text, lang))


# Verbs and adjectives that carry a negation in their meaning: "excludes" = "does not include", "is missing" =
# "is not there". Two of them, or one under a negation, cancel out ("does not exclude" = "includes"). Nouns are
# left out: "an absence of 10 days" is leave, not a negation.
INHERENT_NEGATIVES = {
    "exclude", "excludes", "excluded", "excluding", "lack", "lacks", "lacked", "lacking", "omit", "omits",
    "omitted", "omitting", "fail", "fails", "failed", "failing", "prevent", "prevents", "prevented",
    "preventing", "unable", "missing", "disable", "disables", "disabled", "forbid",
    "forbids", "forbidden", "prohibit", "prohibits", "prohibited", "refuse", "refuses", "refused", "reject",
    "rejects", "rejected", "deny", "denies", "denied", "ignore", "ignores", "ignored", "unsupported",
}


def negation_scope(text: str) -> list[str]:
    """The words an English negation bears on: those after the first negation word (or word carrying one) of
    the clause. "WAL gives more concurrency as readers do not block writers" negates "block writers", not
    "concurrency"."""
    words = tokens(_NOT_NEGATION.sub(" ", text))
    for i, w in enumerate(words):
        if w in NEGATIONS["en"] or w in INHERENT_NEGATIVES or w.endswith("n't"):
            return words[i + 1:]
    return []


def negative(text: str) -> bool:
    """Whether an English clause says something negative: a negation word or a word whose meaning holds one
    (:data:`INHERENT_NEGATIVES`), an even number of them cancelling out."""
    inherent = sum(1 for w in tokens(_NOT_NEGATION.sub(" ", text)) if w in INHERENT_NEGATIVES)
    return negated(text) != bool(inherent % 2)


def opposites(claim_words: set[str], evidence_words: set[str]) -> list[tuple[str, str]]:
    """(claimed word, evidence word) pairs where the claim uses the opposite of what the evidence says:
    the claimed word is absent from the evidence and one of its opposites is present."""
    out = []
    for w in claim_words:
        if w in evidence_words:
            continue
        hit = OPPOSITES.get(w, set()) & evidence_words
        if hit and not (OPPOSITES[w] & claim_words):
            out.append((w, sorted(hit)[0]))
            continue
        # "unstable" vs "stable", "merge" vs "non-merge"
        for p in _PREFIXES:
            if w.startswith(p) and len(w) - len(p) >= 4 and w[len(p):].lstrip("-") in evidence_words:
                out.append((w, w[len(p):].lstrip("-")))
                break
            if len(w) >= 4 and (p + w in evidence_words or f"{p}-{w}" in evidence_words):
                out.append((w, f"{p}{w}" if p + w in evidence_words else f"{p}-{w}"))
                break
    return out


EXCEPTIONS = {"except", "excluding", "außer", "sauf", "excepto", "salvo"}
UNIVERSAL = {"all", "every", "any", "each", "alle", "tous", "toutes", "todos", "todas"}


def widening(claim_words: set[str], evidence_words: set[str]) -> str | None:
    """A universal word ('all', 'every') where the evidence restricts ('only') or makes an exception
    ('except') and the claim does not."""
    limits = (RESTRICTIVE | EXCEPTIONS) & evidence_words
    if claim_words & (RESTRICTIVE | EXCEPTIONS) or not limits:
        return None
    extra = (claim_words & UNIVERSAL) - evidence_words
    return sorted(extra)[0] if extra else None


def restriction(claim_words: set[str], evidence_words: set[str]) -> str | None:
    """A restricting word ('only') the evidence does not use."""
    extra = (claim_words & RESTRICTIVE) - evidence_words
    return sorted(extra)[0] if extra else None


# Bounds on a value: "at least 8" and "8 or more" are lower bounds, "at most 8" and "up to 8" upper ones.
_UNNEGATED = r"(?<!no )(?<!not )"  # "not more than 3" is an upper bound, "more than 3" a lower one
_LOWER_BEFORE = re.compile(r"(?:\bat\s+least|\bno[t]?\s+(?:less|fewer)\s+than|" + _UNNEGATED + r"\bmore\s+than|"
                           r"\bgreater\s+than|\bover|\babove|\bminimum(?:\s+of)?|\bmin\.?|>=?|≥)\s*$", re.I)
_UPPER_BEFORE = re.compile(r"(?:\bat\s+most|\bno[t]?\s+more\s+than|\bup\s+to|" + _UNNEGATED + r"\b(?:less|fewer)"
                           r"\s+than|"
                           r"\bunder|\bbelow|\bmaximum(?:\s+of)?|\bmax\.?|<=?|≤)\s*$", re.I)
_LOWER_AFTER = re.compile(r"^\s*(?:or\s+(?:more|greater|higher|above|later|longer)|and\s+(?:more|above|up))\b", re.I)
_UPPER_AFTER = re.compile(r"^\s*(?:or\s+(?:less|fewer|lower|below|earlier|shorter)|and\s+(?:less|below|under))\b",
                          re.I)


def bound(text: str, start: int, end: int) -> str | None:
    """'lower' or 'upper' when the words around the value at ``text[start:end]`` bound it, else None."""
    before, after = text[max(0, start - 30):start], text[end:end + 20]
    lower = bool(_LOWER_BEFORE.search(before) or _LOWER_AFTER.match(after))
    upper = bool(_UPPER_BEFORE.search(before) or _UPPER_AFTER.match(after))
    return None if lower == upper else ("lower" if lower else "upper")
