"""Where the project lives: the one place that names its published addresses.

Findings link to their rule's page (`url` in JSON, the checklist's links, SARIF `helpUri`). The pages
are docs/rules/CODE.md of the repository, read on GitHub. `HIPLINT_DOCS_URL` replaces the base, for a
fork or a mirror that publishes them elsewhere (with or without a trailing slash).
"""
from __future__ import annotations

REPOSITORY_URL = "https://github.com/hiplint/hiplint"
RULE_DOCS_URL = f"{REPOSITORY_URL}/blob/main/docs/rules/"
