"""Quantities: are two measured values the same, exactly or approximately?

Conversion goes through pint ("300 seconds" == "five minutes", "2,500 ml" == "2.5 litres",
"14 days" == "2 weeks"); :mod:`ragplugins_verifier.facts` only decides which written word
names which unit. Byte units are compared in both readings, decimal and binary, because
documentation writes "4MB" for 4096 kB (PostgreSQL) as often as for 4000 kB.

An approximate claim ("about 94 °C", "roughly 1000 MB", "nearly 9 bar") matches a value
within the larger of :data:`APPROX_RELATIVE` of that value and half a unit of the claim's
last written digit ("about 94" covers 93.5 to 94.5; "about 9 bar" covers 8.5 to 9.5). A claim
without a hedge word must match exactly (after conversion).
"""

from __future__ import annotations

import functools
import math
import re

import pint

APPROX_RELATIVE = 0.02
# Words that make the number after them approximate, in the languages the verifier reads.
HEDGES = {"about", "around", "roughly", "approximately", "approx", "nearly", "almost", "circa", "ca", "some",
          "~", "≈", "etwa", "ungefähr", "rund", "environ", "presque", "aproximadamente", "cerca",
          "casi", "alrededor"}

# The canonical unit keys of facts.UNITS, as pint names them.
PINT_NAMES = {
    "°c": "degC", "°f": "degF", "ms": "millisecond", "second": "second", "minute": "minute", "hour": "hour",
    "day": "day", "week": "week", "month": "month", "year": "year", "bar": "bar", "psi": "psi", "pa": "pascal",
    "kpa": "kilopascal", "ml": "milliliter", "l": "liter", "watt": "watt", "kw": "kilowatt", "volt": "volt",
    "ampere": "ampere", "mm": "millimeter", "cm": "centimeter", "km": "kilometer", "meter": "meter", "g": "gram",
    "kg": "kilogram", "byte": "byte", "kb": "kilobyte", "mb": "megabyte", "gb": "gigabyte", "tb": "terabyte",
    "kib": "kibibyte", "mib": "mebibyte", "gib": "gibibyte", "tib": "tebibyte",
}
_BINARY = {"kilobyte": "kibibyte", "megabyte": "mebibyte", "gigabyte": "gibibyte", "terabyte": "tebibyte"}


@functools.lru_cache(maxsize=1)
def registry() -> pint.UnitRegistry:
    return pint.UnitRegistry()


@functools.lru_cache(maxsize=256)
def _unit(key: str | None, binary: bool = False):
    name = PINT_NAMES.get(key or "")
    if name is None:
        return None
    if binary:
        name = _BINARY.get(name, name)
    return registry().parse_units(name)


def convertible(a: str | None, b: str | None) -> bool:
    """Whether values in unit keys ``a`` and ``b`` can be compared (same dimension, both known to pint)."""
    ua, ub = _unit(a), _unit(b)
    if ua is None or ub is None:
        return False
    return _is_bytes(ua) == _is_bytes(ub) and registry().Quantity(1, ua).is_compatible_with(ub)


def _is_bytes(unit) -> bool:
    return "byte" in str(unit)


def in_unit(value: float, unit: str, target: str) -> list[float]:
    """``value`` in ``unit`` expressed in ``target``: one reading, or two for byte units (decimal, binary)."""
    q = registry().Quantity
    readings = [q(value, _unit(unit)).to(_unit(target)).magnitude]
    if _is_bytes(_unit(unit)):
        readings.append(q(value, _unit(unit, binary=True)).to(_unit(target, binary=True)).magnitude)
    return readings


def last_digit_step(text: str, value: float | None = None) -> float:
    """The place value of the last written digit of the first number in ``text`` ("9.2" -> 0.1, "94" -> 1), in
    the units of ``value`` when a scale word multiplies the digits ("2.1 billion" -> 100 million)."""
    m = re.search(r"\d[\d,]*(?:\.(\d+))?", text)
    if m is None:
        return 1.0  # a number in words: "about three months"
    step = 10.0 ** -len(m.group(1) or "")
    written = float(m.group(0).replace(",", ""))
    return step * abs(value / written) if value and written else step


def close_enough(claimed: float, actual: float, step: float, approximate: bool) -> bool:
    if not approximate:
        return math.isclose(claimed, actual, rel_tol=1e-6, abs_tol=1e-9)
    return abs(claimed - actual) <= max(APPROX_RELATIVE * abs(actual), step / 2) + 1e-9
