"""Hooks the crossref plugin publishes for other plugins (added through ``ragplugins_addhooks``)."""

from ragplugins.api import hookspec


@hookspec
def ragplugins_crossref_families():
    """Return a list of ``ragplugins_crossref.ReferenceFamily`` to add to the reference table,
    e.g. ``family("ticket", "identifier", r"\\b(?P<id>JIRA-\\d{1,7})\\b")``."""
