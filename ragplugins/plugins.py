"""Plugin discovery and hook calls.

Plugins are distributions that register a module under the ``ragplugins``
entry-point group. Each is imported in its own try/except so a broken plugin
is reported by name and the rest still load. ``RAGPLUGINS_PLUGINS`` (a comma
separated list of entry-point names; empty means none) restricts which
plugins are imported at all.
"""

from __future__ import annotations

import difflib
import importlib.metadata as md
import inspect
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from ragplugins import hookspecs
from ragplugins.contributions import (
    METADATA_TYPES,
    SCOPES,
    STAGES,
    Contribution,
    MetadataKey,
    PluginInfo,
    component_problem,
)
from ragplugins.errors import PluginError

ENTRY_POINT_GROUP = "ragplugins"
ENV_VAR = "RAGPLUGINS_PLUGINS"


@dataclass
class PluginRecord:
    """What the core knows about one discovered plugin, loaded or not."""

    name: str
    plugin: Any = None
    info: PluginInfo | None = None
    distribution: str | None = None
    entry_point: str | None = None
    error: str | None = None
    blocked: bool = False
    hooks: list[str] = field(default_factory=list)

    @property
    def loaded(self) -> bool:
        return self.plugin is not None and self.info is not None and self.error is None

    @property
    def version(self) -> str | None:
        return self.info.version if self.info else None

    @property
    def location(self) -> str | None:
        """The folder the plugin's code is imported from: which copy runs when several are on the path (an
        editable checkout, a branch on PYTHONPATH, an installed wheel) and carry the same version."""
        module = inspect.getmodule(self.plugin) if self.plugin is not None else None
        path = getattr(module, "__file__", None)
        return str(Path(path).resolve().parent) if path else None


def _allowlist(env: dict | os._Environ) -> set[str] | None:
    raw = env.get(ENV_VAR)
    if raw is None:
        return None
    return {n.strip() for n in raw.split(",") if n.strip()}


def new_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    # Historic: plugins registered later still get to add their hookspecs.
    pm.hook.ragplugins_addhooks.call_historic(kwargs={"pluginmanager": pm})
    return pm


class PluginRegistry:
    """Owns the pluggy manager and one PluginRecord per discovered plugin."""

    def __init__(self, pm: pluggy.PluginManager | None = None):
        self.pm = pm or new_plugin_manager()
        self.records: dict[str, PluginRecord] = {}
        self.failures: list[PluginRecord] = []

    # -- discovery -----------------------------------------------------
    @classmethod
    def discover(cls, env: dict | os._Environ | None = None) -> PluginRegistry:
        registry = cls()
        allow = _allowlist(os.environ if env is None else env)
        entry_points = sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        installed = [ep.name for ep in entry_points]
        for name in sorted((allow or set()) - set(installed)):
            close = difflib.get_close_matches(name, installed, n=1)
            warnings.warn(f"ragplugins: {ENV_VAR} names '{name}', but no plugin of that name is installed"
                          + (f" (did you mean '{close[0]}'?)" if close else "")
                          + f"; installed: {', '.join(installed) or 'none'}", stacklevel=2)
        for ep in entry_points:
            dist = ep.dist.name if ep.dist else None
            if allow is not None and ep.name not in allow:
                registry.pm.set_blocked(ep.name)
                registry._remember(PluginRecord(name=ep.name, distribution=dist, entry_point=ep.value,
                                                blocked=True, error=f"left out by {ENV_VAR}"))
                continue
            try:
                module = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import failure is reported by name
                registry._fail(PluginRecord(name=ep.name, distribution=dist, entry_point=ep.value,
                                            error=f"import failed: {type(exc).__name__}: {exc}"))
                continue
            registry.register(module, name=ep.name, distribution=dist, entry_point=ep.value)
        registry.check_pending()
        return registry

    def register(self, plugin: Any, name: str | None = None, *, distribution: str | None = None,
                 entry_point: str | None = None) -> PluginRecord:
        """Register a plugin object (module or instance) and validate its info."""
        reg_name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        record = PluginRecord(name=reg_name, distribution=distribution, entry_point=entry_point)
        try:
            self.pm.register(plugin, name=reg_name)
        except Exception as exc:  # noqa: BLE001
            record.error = f"registration failed: {type(exc).__name__}: {exc}" + self._hook_arguments(exc)
            return self._fail(record)
        try:
            info = self._plugin_info(plugin, reg_name)
        except Exception as exc:  # noqa: BLE001
            self.pm.unregister(plugin)
            record.error = str(exc) if isinstance(exc, PluginError) else f"{type(exc).__name__}: {exc}"
            return self._fail(record)
        if entry_point is not None and info.name != reg_name:
            self.pm.unregister(plugin)
            record.error = (f"its entry point is named '{reg_name}' but its PluginInfo says name='{info.name}'; "
                            "make them the same (enable, RAGPLUGINS_PLUGINS and [ragplugins.<name>] all use it)")
            return self._fail(record)
        record.name, record.info, record.plugin = info.name, info, plugin
        record.hooks = sorted(h.name for h in self.pm.get_hookcallers(plugin) or [])
        undecorated = sorted(n for n in dir(plugin) if n.startswith(f"{hookspecs.PROJECT}_")
                             and callable(getattr(plugin, n, None)) and n not in record.hooks)
        if undecorated:
            warnings.warn(f"ragplugins: plugin '{info.name}' defines {', '.join(undecorated)} without "
                          "@ragplugins.hookimpl, so the core never calls it; decorate it", stacklevel=2)
        if info.name in self.records and self.records[info.name].loaded:
            other = self.records[info.name]
            self.pm.unregister(plugin)
            record.plugin = None
            record.error = (f"two plugins are named '{info.name}' "
                            f"({other.distribution or other.entry_point or 'registered first'} and "
                            f"{distribution or entry_point or reg_name}); uninstall one of them")
            return self._fail(record)
        self.records[info.name] = record
        return record

    def check_pending(self) -> None:
        """Unregister and report plugins that implement hooks nobody specifies (typos, or another
        plugin's hooks when that plugin is absent). Run once all plugins are registered, so a
        plugin may implement hooks that a plugin registered after it adds."""
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                plugin = exc.plugin
                record = next((r for r in self.records.values() if r.plugin is plugin), None)
                self.pm.unregister(plugin)
                if record is None:
                    continue
                del self.records[record.name]
                record.plugin, record.error = None, self._unknown_hook(exc)
                self._fail(record)

    def _hook_arguments(self, exc: Exception) -> str:
        """What a hook takes, when pluggy refused an implementation for an argument its spec does not have."""
        found = re.search(r"hook '([^']+)'", str(exc))
        if found is None or "can not be found in the hookspec" not in str(exc):
            return ""
        spec = getattr(getattr(self.pm.hook, found.group(1), None), "spec", None)
        if spec is None:
            return ""
        return f"; {found.group(1)} takes ({', '.join(spec.argnames)}), any of them, by these names"

    def _unknown_hook(self, exc: pluggy.PluginValidationError) -> str:
        found = re.search(r"unknown hook '([^']+)'", str(exc))
        if not found:
            return f"unknown hook: {exc}"
        hook = found.group(1)
        known = [h for h in dir(self.pm.hook) if h.startswith(f"{hookspecs.PROJECT}_")
                 and getattr(getattr(self.pm.hook, h), "spec", None) is not None]
        close = difflib.get_close_matches(hook, known, n=1)
        return (f"it implements '{hook}', which no hookspec defines"
                + (f" (did you mean '{close[0]}'?)" if close else f"; known hooks: {', '.join(known)}"))

    def _plugin_info(self, plugin: Any, reg_name: str) -> PluginInfo:
        if not self._implements(plugin, "ragplugins_plugin_info"):
            raise PluginError(reg_name, "registration", ValueError("it does not implement ragplugins_plugin_info"))
        infos = self._call_one(plugin, reg_name, "ragplugins_plugin_info", {})
        info = infos[0] if infos else None
        if not isinstance(info, PluginInfo):
            raise PluginError(reg_name, "ragplugins_plugin_info",
                              TypeError(f"returned {type(info).__name__}, expected ragplugins.PluginInfo"))
        try:  # a default outside the field's own bounds is only caught when validated explicitly
            info.config_model.model_validate(info.config_model().model_dump(by_alias=True))
        except Exception as exc:  # noqa: BLE001
            raise PluginError(info.name, f"its config model {info.config_model.__name__}",
                              ValueError(f"its defaults are not valid: {exc}")) from exc
        for key, spec in info.metadata_keys.items():
            if not isinstance(spec, MetadataKey) or spec.type not in METADATA_TYPES:
                raise PluginError(info.name, "ragplugins_plugin_info",
                                  TypeError(f"metadata key '{key}' must be a MetadataKey with a type in "
                                            f"{[t.__name__ for t in METADATA_TYPES]}"))
        return info

    def _remember(self, record: PluginRecord) -> PluginRecord:
        self.records.setdefault(record.name, record)
        return record

    def _fail(self, record: PluginRecord) -> PluginRecord:
        self.failures.append(record)
        warnings.warn(f"ragplugins: plugin '{record.name}' was not loaded: {record.error}", stacklevel=3)
        return self._remember(record)

    # -- queries -------------------------------------------------------
    def loaded(self) -> dict[str, PluginRecord]:
        return {n: r for n, r in self.records.items() if r.loaded}

    def all_records(self) -> list[PluginRecord]:
        seen = {id(r) for r in self.records.values()}
        return list(self.records.values()) + [r for r in self.failures if id(r) not in seen]

    # -- calling -------------------------------------------------------
    # Every hook is called through pluggy's hook caller, one plugin at a time (each gets its own
    # config): a subset caller without the other plugins' implementations. Hook wrappers
    # (``hookwrapper=True`` / ``wrapper=True``) of any plugin stay in, so they wrap each call and
    # see its results, and ``pm.trace`` / ``pm.add_hookcall_monitoring`` see every call, as in pytest.
    @staticmethod
    def _is_wrapper(impl: Any) -> bool:
        return bool(impl.hookwrapper or impl.wrapper)

    def _implements(self, plugin: Any, hook: str) -> bool:
        caller = getattr(self.pm.hook, hook, None)
        return caller is not None and any(i.plugin is plugin and not self._is_wrapper(i)
                                          for i in caller.get_hookimpls())

    def _call_one(self, plugin: Any, name: str, hook: str, kwargs: dict[str, Any]) -> list[Any]:
        caller = getattr(self.pm.hook, hook)
        others = {id(i.plugin): i.plugin for i in caller.get_hookimpls()
                  if i.plugin is not plugin and not self._is_wrapper(i)}
        try:
            return list(self.pm.subset_hook_caller(hook, remove_plugins=others.values())(**kwargs))
        except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
            raise PluginError(name, hook, exc) from exc

    def call(self, record: PluginRecord, hook: str, **kwargs: Any) -> list[Any]:
        """Call one plugin's implementations of ``hook`` (with the other plugins' hook wrappers
        around them); errors name the plugin. [] when it does not implement the hook."""
        if not self._implements(record.plugin, hook):
            return []
        return self._call_one(record.plugin, record.name, hook, kwargs)

    def priority(self, record: PluginRecord, hook: str) -> int:
        """0 for ``tryfirst``, 2 for ``trylast``, else 1: where ``record`` goes among plugins of the same
        stage and order (then by name), and in what order hooks with side effects run."""
        impls = [i for i in getattr(self.pm.hook, hook).get_hookimpls()
                 if i.plugin is record.plugin and not self._is_wrapper(i)]
        if any(i.tryfirst for i in impls):
            return 0
        return 2 if impls and all(i.trylast for i in impls) else 1

    def in_call_order(self, plugins: Iterable[PluginRecord], hook: str) -> list[PluginRecord]:
        """``plugins`` in the order their ``hook`` runs: tryfirst, then the rest, then trylast; by name within."""
        return sorted(plugins, key=lambda r: (self.priority(r, hook), r.name))

    def contributions(self, hook: str, plugins: Iterable[PluginRecord], *, on_error: Any = None,
                      kwargs_for: Any = None, **kwargs: Any) -> list[Contribution]:
        """Collect and sort the contributions of ``plugins`` to ``hook``: by stage, order, then
        tryfirst/trylast, then plugin name (never by registration order).

        ``kwargs_for(record)``: the hook's arguments for one plugin (its own config); else ``kwargs``.
        ``on_error(PluginError)`` decides what a failing plugin does: raise it
        again, or return to skip that plugin's contributions.
        """
        out: list[Contribution] = []
        rank: dict[str, int] = {}
        for record in plugins:
            rank[record.name] = self.priority(record, hook)
            try:
                out.extend(self._contributions_of(record, hook, kwargs_for(record) if kwargs_for else kwargs))
            except PluginError as err:
                if on_error is None:
                    raise
                on_error(err)
        stages = STAGES[hook]
        return sorted(out, key=lambda c: (stages.index(c.stage), c.order, rank.get(c.plugin, 1), c.plugin))

    def _contributions_of(self, record: PluginRecord, hook: str, kwargs: dict) -> list[Contribution]:
        stages = STAGES[hook]
        out: list[Contribution] = []
        for result in self.call(record, hook, **kwargs):
            for item in result if isinstance(result, (list, tuple)) else [result]:
                if not isinstance(item, Contribution):
                    raise PluginError(record.name, hook, TypeError(
                        f"returned {type(item).__name__}, expected ragplugins.Contribution"))
                if item.stage not in stages:
                    raise PluginError(record.name, hook, ValueError(
                        f"unknown stage '{item.stage}'; allowed: {', '.join(stages)}"))
                problem = component_problem(hook, item.component)
                if problem:
                    raise PluginError(record.name, hook, TypeError(problem))
                if item.scope not in SCOPES:
                    raise PluginError(record.name, hook, ValueError(
                        f"unknown scope '{item.scope}'; allowed: {', '.join(SCOPES)}"))
                out.append(Contribution(item.component, item.stage, item.order, record.name, item.scope))
        return out
