"""pytest-mcp-cassette: serve an mcp-cassette cassette to a test and fail it on a miss.

The pytest plugin itself is :mod:`pytest_mcp_cassette.plugin`, loaded through the ``pytest11``
entry point. This package also exports the error classes, the binary lookup and the
framework-free server, so other harnesses can use them. See docs/pytest.md.
"""

from .binary import BINARY_ENV, binary_path
from .errors import (
    BinaryNotFoundError,
    CassetteFileError,
    CassetteHandleError,
    CassetteMismatchError,
    CassetteMissError,
    CassetteMissWarning,
    CassetteUnusedError,
    ReplayError,
    ReplayServerError,
    is_mismatch,
    misses_to_error,
    unused_to_error,
)
from .replay import Cassette

__all__ = [
    "BINARY_ENV",
    "BinaryNotFoundError",
    "Cassette",
    "CassetteFileError",
    "CassetteHandleError",
    "CassetteMismatchError",
    "CassetteMissError",
    "CassetteMissWarning",
    "CassetteUnusedError",
    "ReplayError",
    "ReplayServerError",
    "binary_path",
    "is_mismatch",
    "misses_to_error",
    "unused_to_error",
]
