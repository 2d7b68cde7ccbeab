"""Control characters made visible before anything stored or received is printed in the terminal."""

from __future__ import annotations

import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible_controls(text: str) -> str:
    """Control characters made visible (an escape sequence in an answer must not drive the terminal
    or upset the live region's line count): C0 as their Unicode pictures (␛), the rest as �."""
    return _CONTROLS.sub(lambda m: chr(0x2400 + ord(m[0])) if ord(m[0]) < 0x20 else "\ufffd", text)
