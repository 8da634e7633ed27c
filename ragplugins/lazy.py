"""Module attributes imported when first used (PEP 562): ``import ragplugins`` and the plugin API
cost nothing until a name is read."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(module: str, table: dict[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module``: a name in ``table`` (name -> module that
    defines it) is imported on first use and kept in ``namespace`` (the module's globals())."""

    def getattr_(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted([*namespace, *table])

    return getattr_, dir_
