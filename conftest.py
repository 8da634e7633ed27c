# The ragplugins.testing fixtures for this repository's tests (the pytest plugin is opt-in).
from ragplugins.testing import *  # noqa: F401,F403
