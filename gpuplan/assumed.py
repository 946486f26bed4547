"""What a sizing assumed, in the one line a command prints under its answer.

`sizing.assumptions.describe` says every assumption with its source (a dozen long lines); the
plans and size commands print them with `--explain`. Without it they print `brief`: the four
settings that move the numbers most (framework, sequence, ZeRO stage, how MFU is counted) and
where the rest is, so the answer stays on the last screen.
"""

from __future__ import annotations

from rich.console import Console

from gpuplan import display
from sizing.planner import Sizing


def brief(sizing: Sizing, explained: int) -> str:
    """'assumes llamafactory, seq 2048, least ZeRO, Megatron-Core MFU; all 14: --explain' (80
    columns): "least ZeRO" is the smallest stage that fits, and MFU counts model FLOPs as
    Megatron-Core does. `explained`: how many lines --explain prints."""
    s = sizing.setup
    zero = "least ZeRO" if s.zero_stage is None else f"ZeRO-{s.zero_stage}"
    mfu = f"MFU {s.mfu:.0%} as given" if s.mfu is not None else "Megatron-Core MFU"
    return f"assumes {s.framework}, seq {s.seq_len}, {zero}, {mfu}; all {explained}: --explain"


def print_assumptions(out: Console, sizing: Sizing, lines: list[str], *, explain: bool) -> None:
    """Every assumption, one item each (`explain`), else the one line of `brief`."""
    if not explain:
        display.say(out, brief(sizing, len(lines)), style="dim")
        return
    out.print("Assumptions:", highlight=False)
    for line in lines:
        out.print(f"  - {line}", highlight=False)
