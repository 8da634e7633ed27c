"""Errors a user can act on. Each message names the file, key, value or plugin."""

from __future__ import annotations


class RagPluginsError(Exception):
    """Base class for every error ragplugins raises on purpose."""


class ConfigError(RagPluginsError):
    """The config file or dict is invalid; the message lists every problem."""

    def __init__(self, problems: list[str], source: str = "config"):
        self.problems = list(problems)
        self.source = source
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid ragplugins config ({source}):\n{lines}")


class PluginError(RagPluginsError):
    """A plugin failed; the message names it and the hook or component."""

    def __init__(self, plugin: str, where: str, cause: BaseException):
        self.plugin = plugin
        self.where = where
        self.cause = cause
        super().__init__(
            f"plugin '{plugin}' failed in {where}: {type(cause).__name__}: {cause}"
        )


class InputError(RagPluginsError):
    """A path or document given to index cannot be used."""


class EmbedderMismatchError(RagPluginsError):
    """The index was built with a different embedding model than the one given."""


class MissingDependencyError(RagPluginsError, ImportError):
    """An optional library a command needs is not installed; the message says what to install."""


class SettingNote(UserWarning):
    """What a valid setting leaves undone (retry's confirming signal reads more candidates than ``top_k`` gives):
    said when the config is checked, indexed with or measured, not again by every ``query`` or ``read``."""


class IndexBusyError(RagPluginsError):
    """Another process is writing the same embedded index."""


class StoreError(RagPluginsError):
    """The embedded index on disk is damaged or is not a ragplugins index; the message says which
    directory and what to run."""
