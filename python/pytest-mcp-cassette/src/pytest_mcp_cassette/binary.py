"""Where the native ``mcp-cassette`` binary lives (docs/pytest.md, "Finding the binary").

In order: ``$MCP_CASSETTE_BINARY`` (the variable the npm package reads too), the binary bundled
in this distribution's platform wheel (installed into the environment's scripts directory, as
ruff's and uv's wheels do), then ``mcp-cassette`` on ``PATH``. One lookup, one error message.
"""

from __future__ import annotations

import os
import shutil
import sys
from importlib import metadata
from pathlib import Path
from typing import Mapping, Optional

from .errors import BinaryNotFoundError

#: Environment variable naming a binary to run instead of the bundled one.
BINARY_ENV = "MCP_CASSETTE_BINARY"
#: This package's distribution name on PyPI.
DISTRIBUTION = "pytest-mcp-cassette"

_EXE = "mcp-cassette.exe" if sys.platform == "win32" else "mcp-cassette"


def bundled_binary() -> Optional[Path]:
    """The binary a platform wheel installed with this distribution, if any.

    Read from the distribution's own RECORD, so a same-named script of another package (the
    unrelated ``mcp-cassette`` on PyPI installs one) is never taken for ours.
    """
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        # A wheel's scripts are recorded relative to site-packages: ../../../bin/mcp-cassette.
        if entry.name == _EXE and ".." in entry.parts:
            path = Path(str(dist.locate_file(entry))).resolve()
            if path.is_file():
                return path
    return None


def binary_path(env: Optional[Mapping[str, str]] = None) -> str:
    """The binary to run. Raises BinaryNotFoundError with the fix when there is none."""
    env = os.environ if env is None else env
    override = env.get(BINARY_ENV)
    if override:
        if not Path(override).is_file():
            raise BinaryNotFoundError(
                f'mcp-cassette: {BINARY_ENV} is set to "{override}", but no file exists there.\n'
                f"Fix: point {BINARY_ENV} at an mcp-cassette binary, or unset it to use the one "
                f"installed with {DISTRIBUTION}."
            )
        return override
    bundled = bundled_binary()
    if bundled is not None:
        return str(bundled)
    on_path = shutil.which(_EXE, path=env.get("PATH"))
    if on_path is not None:
        return on_path
    raise BinaryNotFoundError(
        f"mcp-cassette: no mcp-cassette binary found: {BINARY_ENV} is not set, this "
        f"installation of {DISTRIBUTION} bundles none (a platform wheel does; the "
        f"py3-none-any wheel does not), and there is no {_EXE} on PATH.\n"
        f"Fix: install a platform wheel of {DISTRIBUTION}, put mcp-cassette on PATH "
        f"(cargo install --locked mcp-cassette), or set {BINARY_ENV} to the path of an "
        f"mcp-cassette binary."
    )
