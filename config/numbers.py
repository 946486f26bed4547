"""Numbers as people write them in settings and in their files: ASCII digits only.

Python's `float()` and `int()` read far more than people mean: `4_8` (a digit group separator) and
the fullwidth `４８` or Arabic-Indic `٤٨` digits all read as 48, so a slip of the keyboard or a
pasted value passes as a figure. A setting or a file value is a number when it is written with
ASCII digits, an optional sign, decimal point and exponent (`48`, `-2`, `0.5`, `1e9`), with space
around it; anything else is refused by the caller, naming it.
"""

from __future__ import annotations

import re

_DECIMAL = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*", re.ASCII)
_WHOLE = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


def decimal(text: str) -> float:
    """`text` as a number (ValueError unless ASCII digits, as above). `nan`/`inf` are not numbers."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not a number written with ASCII digits: {text!r}")
    return float(text)


def whole(text: str) -> int:
    """`text` as a whole number (ValueError unless ASCII digits with an optional sign)."""
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"not a whole number written with ASCII digits: {text!r}")
    return int(text)
