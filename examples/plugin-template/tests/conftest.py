# Opt into the ragplugins.testing fixtures (bundled_embed_model, tiny_corpus, fake_llm, ...);
# `-p ragplugins.testing` in [tool.pytest.ini_options] addopts does the same.
from ragplugins.testing import *  # noqa: F401,F403
