"""`python -m ragplugins`: the `ragplugins` command, for an environment whose scripts are not on PATH."""

from ragplugins.cli import main

main()
