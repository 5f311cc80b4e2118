"""The errors a test sees (docs/pytest.md, "Errors").

The same classes, fields and messages as the JavaScript adapter's (docs/adapters.md), so a team
that tests in both languages reads one vocabulary. Nothing here imports pytest.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

#: Miss kinds that mean "a recording matched the method (and tool) and diverged".
MISMATCH_KINDS = frozenset({"arguments-differ", "params-differ"})


def is_mismatch(reason: Optional[Mapping[str, Any]]) -> bool:
    """True when a miss reason is a divergence from a recording rather than an absence."""
    return isinstance(reason, Mapping) and reason.get("kind") in MISMATCH_KINDS


class ReplayError(Exception):
    """A request of the test found no recorded answer.

    ``misses`` is every miss of the test, oldest first, as the miss channel reports them;
    ``reason`` is the first one's structured reason (``{"kind": …, …}``).
    """

    def __init__(self, message: str, misses: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.misses = list(misses)
        self.reason = self.misses[0].get("reason") if self.misses else None

    def __reduce__(self):  # keeps .misses across pickling (pytest-xdist sends errors home)
        return (type(self), (str(self), self.misses))


class CassetteMissError(ReplayError):
    """Nothing in the cassette answered: an unknown method or tool, an exhausted recording, …"""


class CassetteMismatchError(ReplayError):
    """A recording matched method and tool but diverged; ``changes`` is the diff.

    Each change is ``{"path": …, "recorded": …, "live": …}``; a side is absent when the member
    is missing there.
    """

    def __init__(self, message: str, misses: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message, misses)
        reason = self.reason if isinstance(self.reason, Mapping) else {}
        self.changes = list(reason.get("changes") or [])


class CassetteUnusedError(Exception):
    """Recorded answers no test of the marker's owner used (``fail_on_unused=True``).

    ``unused`` lists them as the replay reports them: ``{"line", "method", "tool"?}``, in
    cassette order.
    """

    def __init__(self, message: str, unused: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.unused = list(unused)

    def __reduce__(self):
        return (type(self), (str(self), self.unused))


def unused_to_error(
    unused: Sequence[Mapping[str, Any]], shown: str, owner: str
) -> Optional[CassetteUnusedError]:
    """The error for recordings left unused by the tests of ``owner``, or None when none were."""
    if not unused:
        return None
    listed = []
    for entry in unused[:20]:
        tool = f" {_quote(entry['tool'])}" if entry.get("tool") else ""
        listed.append(f"  unused: {entry.get('method')}{tool} (line {entry.get('line')})")
    if len(unused) > 20:
        listed.append(f"  (and {len(unused) - 20} more)")
    message = (
        f"mcp-cassette: {len(unused)} recorded answer(s) of {shown} were never used by the "
        f"tests of {owner}. Re-record the cassette, or call them again:\n" + "\n".join(listed)
    )
    return CassetteUnusedError(message, unused)


class CassetteMissWarning(UserWarning):
    """A miss under ``on_miss="warn"``: reported, but the test's verdict is left alone."""


class CassetteHandleError(Exception):
    """The handle was asked for what its transport does not have (``.url`` of a stdio cassette…)."""


class CassetteFileError(Exception):
    """The cassette cannot be opened, or is not a cassette. The message names the file."""


class ReplayServerError(Exception):
    """The replay server could not start, died, or did not answer a drain."""


class BinaryNotFoundError(Exception):
    """No ``mcp-cassette`` binary was found; the message says where it looked and the fix."""


def _quote(text: Any) -> str:
    # JSON text, as the JavaScript adapter's JSON.stringify writes it (non-ASCII kept).
    return json.dumps(text, ensure_ascii=False)


def misses_to_error(misses: Sequence[Mapping[str, Any]]) -> Optional[ReplayError]:
    """The error for one test's misses, or None when there were none.

    The first miss picks the class and the sentence; the others are counted.
    """
    if not misses:
        return None
    first = misses[0]
    message = (
        f"mcp-cassette: no recorded answer for {_quote(first.get('method'))}, "
        f"{first.get('diagnosis')}. Re-record the cassette or adjust the interaction."
    )
    if len(misses) > 1:
        message += f"\n(and {len(misses) - 1} further miss(es) in this test)"
    cls = CassetteMismatchError if is_mismatch(first.get("reason")) else CassetteMissError
    return cls(message, misses)


# Reports name the classes where users import them from: pytest_mcp_cassette.CassetteMissError.
for _cls in (
    ReplayError,
    CassetteMissError,
    CassetteMismatchError,
    CassetteMissWarning,
    CassetteUnusedError,
    CassetteHandleError,
    CassetteFileError,
    ReplayServerError,
    BinaryNotFoundError,
):
    _cls.__module__ = "pytest_mcp_cassette"
del _cls
