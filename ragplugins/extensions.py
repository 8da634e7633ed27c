"""Named extensions: how a plugin lets other plugins add named parts to it (the retry plugin's
signals and strategies, decompose's decomposers, the verifier's backends).

The plugin publishes a hook of its own (``ragplugins_addhooks``); every implementation returns a
list of objects with a ``name`` or a ``{name: object}`` dict; the config selects one by name. One
rule for every such registry: a name has exactly one provider, and a second one is an error that
names both (nothing is replaced or dropped silently).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragplugins.errors import RagPluginsError

BUILTIN = "built-in"


class DuplicateExtensionError(RagPluginsError, ValueError):
    """Two providers publish an extension under the same name."""


@dataclass(frozen=True)
class Extension:
    name: str
    value: Any
    # The plugin that published it (its registered name), or "built-in".
    origin: str


def _named(result: Any, hook: str, origin: str) -> list[tuple[str, Any]]:
    if result is None:
        return []
    if isinstance(result, Mapping):
        return [(str(name), value) for name, value in result.items()]
    items = result if isinstance(result, (list, tuple)) else [result]
    out = []
    for item in items:
        name = getattr(item, "name", None)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{hook} of '{origin}' returned {type(item).__name__} without a name; return objects "
                            "with a 'name' attribute or a {name: object} dict")
        out.append((name, item))
    return out


def named_extensions(pluginmanager: Any, hook: str, *, what: str, kind: type | None = None,
                     builtins: Mapping[str, Any] | Iterable[Any] = (), **kwargs: Any) -> dict[str, Extension]:
    """Every extension published through ``hook`` by the plugins registered with ``pluginmanager``
    (``ctx.pluginmanager``; None: the built-ins only), by name. ``kwargs`` are the hook's arguments;
    ``kind``: the type each value must have; ``what`` names an extension in errors ("retry signal").
    Raises DuplicateExtensionError when two providers use one name, TypeError for a wrong value."""
    found: dict[str, Extension] = {}

    def add(name: str, value: Any, origin: str) -> None:
        if kind is not None and not isinstance(value, kind):
            raise TypeError(f"{what} '{name}' from {origin} is a {type(value).__name__}, expected a {kind.__name__}")
        if name in found:
            raise DuplicateExtensionError(
                f"two {what}s are named '{name}': one from {_label(found[name].origin)}, one from {_label(origin)}; "
                "the config selects by name, so uninstall one of them or rename its extension")
        found[name] = Extension(name, value, origin)

    for name, value in _named(builtins, "the built-ins", BUILTIN):
        add(name, value, BUILTIN)
    caller = getattr(getattr(pluginmanager, "hook", None), hook, None) if pluginmanager is not None else None
    if caller is None:
        return found
    # Oldest registration first, so an error names the providers in the order they were installed.
    for impl in caller.get_hookimpls():
        if impl.hookwrapper or impl.wrapper:
            continue
        result = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
        origin = _plugin_name(pluginmanager, impl)
        for name, value in _named(result, hook, origin):
            add(name, value, origin)
    return found


def _plugin_name(pluginmanager: Any, impl: Any) -> str:
    """The name the plugin gives itself (its PluginInfo), else the name it was registered under."""
    info_caller = getattr(pluginmanager.hook, "ragplugins_plugin_info", None)
    for info_impl in info_caller.get_hookimpls() if info_caller is not None else []:
        if info_impl.plugin is impl.plugin:
            try:
                return str(info_impl.function().name)
            except Exception:  # noqa: BLE001 - only a label for an error message
                break
    return impl.plugin_name


def _label(origin: str) -> str:
    return "the built-ins" if origin == BUILTIN else f"plugin '{origin}'"
