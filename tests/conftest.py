import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def run_cli(*args, cwd=None, input=None, env=None):
    """Run the installed `hiplint` as a user would (python -m hiplint), returning CompletedProcess."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.pop("FORCE_COLOR", None)  # a CI that forces color must not color the outputs tests compare
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-m", "hiplint", *map(str, args)], cwd=cwd, input=input,
                          capture_output=True, env=e, timeout=300)


@pytest.fixture
def cli():
    return run_cli
