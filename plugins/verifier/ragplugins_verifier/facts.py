"""Exact facts in a sentence: numbers with their units, dates, codes and named entities.

These are what an answer must not get wrong and what an embedding cannot check:
"28 days" and "23 days" embed almost identically. Each fact is normalised
(``$45 million`` == ``$45,000,000``, ``93.5 °C`` == ``93.5 degrees Celsius``,
``five`` == ``5``, ``January 28, 2025`` == ``28 January 2025``) so a paraphrase
passes and a changed value does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ragplugins_verifier.quantities import HEDGES
from ragplugins_verifier.text import STOPWORDS, stem

MONTHS = {m: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for m in names}
_MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DATE_PATTERNS = [
    # March 1, 2025 / March 1 / March 2025
    re.compile(rf"\b(?P<month>{_MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{{4}}))?\b", re.I),
    # 1 March 2024 / 31 March
    re.compile(
        rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH})(?:,?\s+(?P<year>\d{{4}}))?\b", re.I
    ),
    re.compile(rf"\b(?P<month>{_MONTH})\s+(?P<year>\d{{4}})\b", re.I),
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    # 2/8/25: kept as written (day/month order is ambiguous), compared as a code.
]

CARDINALS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
CARDINALS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
                  "hundred": 100, "dozen": 12})
# Ordinals count as their number when found in evidence ("third birthday" supports "turns three"),
# but are not claims of their own: "first" is too often not a quantity.
ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
            "ninth": 9, "tenth": 10, "twelfth": 12}

_SCALES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mm": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
           "billion": 1e9, "trillion": 1e12}
_CURRENCY = {"$": "$", "usd": "$", "us$": "$", "€": "€", "eur": "€", "£": "£", "gbp": "£"}

# Canonical units: equal keys are the same dimension, different keys are a wrong unit.
UNITS: dict[str, str] = {}
for _key, _names in {
    "%": "% percent percentage pct",
    "°c": "°c ºc celsius centigrade",
    "°f": "°f ºf fahrenheit",
    "degree": "degree degrees deg",
    "ms": "ms millisecond milliseconds msec",
    "second": "s sec secs second seconds",
    "minute": "min mins minute minutes",
    "hour": "h hr hrs hour hours",
    "day": "day days",
    "week": "week weeks wk wks",
    "month": "month months mo mos",
    "year": "year years yr yrs",
    "quarter": "quarter quarters",
    "bar": "bar bars",
    "psi": "psi",
    "pa": "pa pascal pascals",
    "kpa": "kpa",
    "ppm": "ppm",
    "ml": "ml milliliter milliliters millilitre millilitres",
    "l": "l liter liters litre litres",
    "watt": "w watt watts",
    "kw": "kw kilowatt kilowatts",
    "volt": "v volt volts",
    "ampere": "a amp amps ampere amperes",
    "mm": "mm millimeter millimeters millimetre millimetres",
    "cm": "cm centimeter centimeters centimetre centimetres",
    "km": "km kilometer kilometers kilometre kilometres",
    "meter": "meter meters metre metres",
    "g": "g gram grams",
    "kg": "kg kilogram kilograms",
    "kb": "kb kilobyte kilobytes",
    "mb": "mb megabyte megabytes",
    "gb": "gb gigabyte gigabytes",
    "tb": "tb terabyte terabytes",
    "kib": "kib kibibyte kibibytes",
    "mib": "mib mebibyte mebibytes",
    "gib": "gib gibibyte gibibytes",
    "tib": "tib tebibyte tebibytes",
    "byte": "byte bytes",
    "token": "token tokens",
    "character": "character characters char chars",
    "word": "word words",
    "page": "page pages",
    "times": "times x",
}.items():
    for _n in _names.split():
        UNITS[_n] = _key
_UNIT_WORDS = sorted((u for u in UNITS if u not in {"%", "°c", "°f", "ºc", "ºf"}), key=len, reverse=True)
# "degrees Celsius" is one unit; bare "degrees" is the generic one.
_DEGREES = re.compile(r"^\s*(?:degrees?|deg)\s+(celsius|centigrade|fahrenheit)\b", re.I)

_NUMBER = re.compile(
    r"(?P<cur>US\$|[$€£])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|mm|[kKmMbB])(?![A-Za-z]))?"
    r"(?P<pct>\s?%)?")
_CODE = re.compile(r"(?<![\w/.-])(?=[\w/.:-]*[A-Za-z])(?=[\w/.:-]*\d|[\w.:-]*_|[A-Z0-9]*[A-Z]{2,}_)"
                   r"[A-Za-z0-9][\w/.:-]*[A-Za-z0-9](?![\w/-])|(?<![\w/])\d+(?:/\d+)+(?:,\d{3})*(?![\w/])")
_PRODUCT = re.compile(r"(?<![\w.])(\d+)\s*[*×]\s*(\d+)(?![\w.])")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9&'’.-]*[A-Za-z0-9]|[A-Za-z]|&")
ENTITY_JOINERS = {"&", "of", "de", "-"}
ANSWER_PARTICLES = {"yes", "no", "yeah", "nope", "correct", "incorrect"}
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}


@dataclass(frozen=True)
class Fact:
    kind: str            # "number", "date", "code", "entity"
    # The normalised value, its type set by kind: float, (year, month, day) or a lowercase string.
    value: Any
    unit: str | None     # canonical unit ("%", "day", "$") or None
    unit_word: str | None  # the stemmed word after a unit-less number ("3 separate blocks" -> "separ")
    text: str
    start: int
    end: int
    approximate: bool = False  # "about 94 °C": a hedge word right before the number


    def describe(self) -> str:
        return f"{self.kind} '{self.text}'"


def extract(text: str, *, claims: bool = True) -> list[Fact]:
    """Facts in ``text`` in order. ``claims=False`` also reads ordinals and 'one' (evidence side)."""
    facts: list[Fact] = []
    taken = [False] * (len(text) + 1)

    def free(s: int, e: int) -> bool:
        return not any(taken[s:e])

    def take(fact: Fact) -> None:
        facts.append(fact)
        for i in range(fact.start, fact.end):
            taken[i] = True

    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            g = m.groupdict()
            month = MONTHS[g["month"].lower().rstrip(".")] if g.get("month") else int(g["mnum"])
            day = int(g["day"]) if g.get("day") else None
            year = int(g["year"]) if g.get("year") else None
            if day is not None and not 1 <= day <= 31:
                continue
            take(Fact("date", (year, month, day), None, None, m.group(0), m.start(), m.end()))
    for m in _PRODUCT.finditer(text):
        # "1024 * 1024" (documentation's way of writing 1 MiB) is the one number it computes.
        unit, unit_word, end = _unit_after(text, m.end())
        take(Fact("number", float(m.group(1)) * float(m.group(2)), unit, unit_word, text[m.start():end],
                  m.start(), end))
    for m in _NUMBER.finditer(text):
        s, e = (m.start("cur") if m.group("cur") else m.start("num")), m.end()
        if not free(s, e) or _part_of_code(text, m.start("num"), m.end("num")):
            continue
        take(_number_fact(text, m, s, e))
    for m in _CODE.finditer(text):
        if free(m.start(), m.end()) and not _is_plain_number(m.group(0)):
            value = m.group(0).lower().rstrip(".:")
            take(Fact("code", value, None, None, m.group(0), m.start(), m.start() + len(value)))
    for m in re.finditer(r"\b[A-Za-z]+\b", text):
        word = m.group(0).lower()
        number: float | None = CARDINALS.get(word)
        if number is None and not claims:
            number = ORDINALS.get(word, 1 if word == "one" else None)
        if number is None or not free(m.start(), m.end()):
            continue
        scale = re.match(r"\s+(thousand|million|billion|trillion)\b", text[m.end():], re.I)
        if scale:  # "twenty million bytes"
            number *= _SCALES[scale.group(1).lower()]
        unit, unit_word, end = _unit_after(text, m.end() + (scale.end() if scale else 0))
        if word == "one" and claims and unit is None and not scale:
            continue  # "one of the options" is no quantity; "one minute" is
        take(Fact("number", float(number), unit, unit_word, text[m.start():end], m.start(), end))
    facts.extend(_entities(text, taken))
    return [_hedged(text, f) for f in _share_range_units(text, sorted(facts, key=lambda f: f.start))]


_HEDGE_BEFORE = re.compile(r"(?:^|[\s(])(" + "|".join(sorted((re.escape(h) for h in HEDGES), key=len, reverse=True))
                           + r")\.?\s*(?:of\s+|de\s+)?$", re.I)


def _hedged(text: str, fact: Fact) -> Fact:
    if fact.kind != "number" or not _HEDGE_BEFORE.search(text[max(0, fact.start - 24):fact.start]):
        return fact
    return Fact(fact.kind, fact.value, fact.unit, fact.unit_word, fact.text, fact.start, fact.end, True)


def _share_range_units(text: str, facts: list[Fact]) -> list[Fact]:
    """'20-30%' and '$6.2M to $8.7M': the first number of a range takes the unit of the second."""
    out = list(facts)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if a.kind == b.kind == "number" and a.unit is None and b.unit is not None and \
                re.fullmatch(r"\s*(?:-|–|to|and|or)\s*", text[a.end:b.start]):
            out[i] = Fact("number", a.value, b.unit, None, a.text, a.start, a.end)
    return out


def _is_plain_number(token: str) -> bool:
    return re.fullmatch(r"[\d.,]+", token) is not None


def _part_of_code(text: str, s: int, e: int) -> bool:
    """Digits inside 'MG-311', 'E42', 'v3', '17/456,789' or '2/8/25' belong to a code, not a number."""
    before = text[max(0, s - 2):s]
    after = text[e:e + 2]
    if before[-1:].isalpha() or before[-1:] in ("_", "/") or re.fullmatch(r"[A-Za-z][-.:]|\d[.:]", before or ""):
        return True
    # "17/456", "3.5:4b", "MG-3B"; but "20-30%" is a range and "36-month" a number with its unit.
    if re.match(r"/\d|[.:][A-Za-z0-9]|-[A-Za-z]+\d|-\d+[A-Za-z]", after + text[e + 2:e + 8]):
        return True
    return after[:1].isalpha() and not _unit_glued(text, e) and after[:1] not in "kKmMbB"


def _unit_glued(text: str, e: int) -> bool:
    """A unit written against the number: '93.5°C', '200ml', '4000ms'."""
    rest = re.match(r"[A-Za-z°º]+", text[e:])
    return rest is not None and rest.group(0).lower() in UNITS


def _number_fact(text: str, m: re.Match, s: int, e: int) -> Fact:
    value = float(m.group("num").replace(",", ""))
    scale = m.group("scale")
    unit: str | None = None
    if scale:
        value *= _SCALES[scale.lower()]
    if m.group("cur"):
        unit = _CURRENCY[m.group("cur").lower()]
    unit_word = None
    if m.group("pct"):
        unit = "%"
    elif unit is None:
        unit, unit_word, e = _unit_after(text, e)
    else:
        cur = re.match(r"\s*(usd|eur|gbp)\b", text[e:], re.I)
        if cur:
            e += cur.end()
    return Fact("number", value, unit, unit_word, text[s:e], s, e)


def _unit_after(text: str, e: int) -> tuple[str | None, str | None, int]:
    """The canonical unit after a number, else the first content word within two words."""
    rest = text[e:]
    deg = _DEGREES.match(rest)
    if deg:
        return ("°f" if deg.group(1).lower() == "fahrenheit" else "°c"), None, e + deg.end()
    sym = re.match(r"\s?[°º]\s?([cCfF])\b", rest)
    if sym:
        return "°" + sym.group(1).lower(), None, e + sym.end()
    # "36-month", "days'", and a few describing words before the unit ("5 unused annual leave days").
    m = re.match(r"[-\s]?([A-Za-z]+)['’]?((?:\s+[A-Za-z]+['’]?){0,3})", rest)
    if not m:
        return None, None, e
    first = m.group(1).lower()
    if first in _CURRENCY:
        return _CURRENCY[first], None, e + m.end(1)
    # One-letter units only when written as units: "75 W", "200ml"; not "5 a".
    if first in UNITS and (len(first) > 1 or rest[:1] != " " or m.group(1).isupper()):
        return UNITS[first], None, e + m.end(1) + (1 if rest[m.end(1):m.end(1) + 1] in "'’" else 0)
    if first in STOPWORDS:
        return None, None, e
    offset = m.end(1)
    for w in re.finditer(r"\s+([A-Za-z]+)['’]?", m.group(2)):
        word = w.group(1).lower()
        if word in STOPWORDS:
            break
        if word in UNITS and len(word) > 1:
            return UNITS[word], None, e + offset + w.end()
    return None, stem(first), e


def _entities(text: str, taken: list[bool]) -> list[Fact]:
    """Capitalised names: 'Morrison & Associates', 'Head of People Operations', 'FTC', 'MegaCorp'."""
    out: list[Fact] = []
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]
    i = 0
    while i < len(tokens):
        s, e, tok = tokens[i]
        if not _capitalised(tok) or any(taken[s:e]) or tok.lower() in _WEEKDAYS or tok.lower() in MONTHS:
            i += 1
            continue
        j = i + 1
        end = e
        while j < len(tokens):
            s2, e2, t2 = tokens[j]
            gap = text[end:s2]
            if "\n" in gap or not all(w.lower() in ENTITY_JOINERS for w in gap.split()):
                break
            if _capitalised(t2) and not any(taken[s2:e2]):
                end, j = e2, j + 1
                continue
            if t2.lower() in ENTITY_JOINERS:
                j += 1
                continue
            break
        name = re.sub(r"['’]s?$", "", text[s:end]).strip()
        words = name.split()
        initial = _sentence_initial(text, s)
        # A lone capitalised word opening a sentence is usually just the opener ("Descale ...");
        # keep it only when it looks like a name anyway (MegaCorp, FTC, Atlas).
        keep = len(words) > 1 or not initial or _name_shaped(words[0])
        if words and words[0].lower() in STOPWORDS | ANSWER_PARTICLES and initial:
            name = " ".join(words[1:])
            keep = bool(name) and (len(words) > 2 or _name_shaped(words[1]))
        if keep and name and name.lower() not in ANSWER_PARTICLES:
            ns = text.index(name, s)
            out.append(Fact("entity", name.lower(), None, None, name, ns, ns + len(name)))
        i = max(j, i + 1)
    return out


def _capitalised(tok: str) -> bool:
    return tok[:1].isupper()


def _name_shaped(word: str) -> bool:
    """CamelCase, ALLCAPS or internal capitals: a name even at the start of a sentence."""
    core = word.strip("'’.")
    return len(core) > 1 and (core.isupper() or any(c.isupper() for c in core[1:]))


def _sentence_initial(text: str, pos: int) -> bool:
    before = text[:pos].rstrip(" \"'“‘(*")
    return not before or before[-1] in ".!?:;\n" or before.endswith(("- ", "•"))
