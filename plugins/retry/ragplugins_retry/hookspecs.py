"""Hooks the retry plugin publishes so other plugins can add signals and strategies.

Implement them in any ragplugins plugin (mark the implementations
``@ragplugins.hookimpl(optionalhook=True)`` so your plugin also loads where
the retry plugin is not installed)::

    @ragplugins.hookimpl(optionalhook=True)
    def ragplugins_retry_signals(config):
        return [MySignal()]          # a ragplugins_retry.RetrySignal

and select it by name: ``[ragplugins.retry] signal = "my_signal"``.
"""

from ragplugins.api import hookspec


@hookspec
def ragplugins_retry_signals(config):
    """Return RetrySignal instances; ``config`` is the retry plugin's RetryConfig."""


@hookspec
def ragplugins_retry_strategies(config):
    """Return RetryStrategy instances; ``config`` is the retry plugin's RetryConfig."""
