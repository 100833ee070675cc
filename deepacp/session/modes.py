"""A session's modes: how much the agent may do before it asks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["ask", "accept-edits", "plan", "yolo"]


@dataclass(frozen=True)
class ModeInfo:
    id: Mode
    name: str
    description: str


MODES: tuple[ModeInfo, ...] = (
    ModeInfo("ask", "Ask", "Ask before every edit and every shell command"),
    ModeInfo(
        "accept-edits",
        "Accept edits",
        "Edit files and run sandboxed commands without asking; ask before other commands",
    ),
    ModeInfo("plan", "Plan", "Read-only: explore and propose, change nothing"),
    ModeInfo("yolo", "Yolo", "Never ask: edits and commands run straight away"),
)
MODE_IDS: tuple[Mode, ...] = tuple(m.id for m in MODES)
DEFAULT_MODE: Mode = "ask"


def parse_mode(value: object) -> Mode:
    """`value` as a mode, or a ValueError naming the modes there are."""
    if value not in MODE_IDS:
        raise ValueError(f"unknown mode {value!r}; the modes are {', '.join(MODE_IDS)}")
    return value
