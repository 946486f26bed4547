"""The crawl children (`python -m scrapers.crawl.child`) a process has running, read from /proc."""

from __future__ import annotations

from pathlib import Path


def crawl_children(parent: int) -> list[int]:
    """Process ids of `parent`'s crawl children still running (a reaped or zombie one is not)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"scrapers.crawl.child" in command:
                found.append(int(entry.name))
    return sorted(found)
