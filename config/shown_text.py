"""Text from outside (crawled, imported, a server's error) made safe to show: the one neutraliser.

Every table cell, status line, error line and mail text part that can carry a platform's text
goes through `visible` (or `one_line`, for a line that must stay one line) before it is shown. A
terminal obeys the bytes it is sent: ESC starts a sequence that can clear the screen, move the
cursor over a line already printed, set colours, retitle the window or plant a hyperlink (OSC 8);
a carriage return rewrites the line; a bidi override (U+202E) shows text reversed. So each such
character is written as an escape (`\\x1b`, `\\u202e`) that shows what was sent and drives nothing.
Both the CLI (gpuplan/) and the digest (digest/) call it, so it lives here, below both.
"""

from __future__ import annotations

import re

# C0 controls but the line feed, DEL and the C1 controls; the Arabic letter mark, zero-width and
# direction marks, line and paragraph separators, bidi embeddings, overrides and isolates,
# invisible operators, the zero-width no-break space and the interlinear annotation marks.
_UNSAFE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every character that could drive a terminal written as an escape (`\\x1b`,
    `\\u202e`); line feeds are kept (`one_line` for text that must stay on one line)."""
    return _UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """`text` on one line: each run of whitespace (line feeds, tabs, a Unicode line separator)
    one space, then `visible`."""
    return visible(" ".join(text.split()))


def is_safe(text: str) -> bool:
    """True when `visible(text)` is `text` itself."""
    return _UNSAFE.search(text) is None
