"""ProfilePart: the harness profile the user chose for the session (`auto`, `default`,
`small-local`); a change rebuilds the graph before the next turn, the thread kept."""

from __future__ import annotations

from deepacp.profile_setting import AUTO
from deepacp.session.assembly import Contributions
from deepacp.session.parts.base import Part


class ProfilePart(Part):
    def __init__(self, wanted: str | None = None) -> None:
        """`wanted`: a checked profile name (None: auto, see `choose_profile`)."""
        self.wanted = wanted

    @property
    def current(self) -> str:
        return self.wanted or AUTO

    async def contribute(self, parts: Contributions) -> None:
        parts.profile = self.wanted

    def set(self, name: str) -> None:
        """Use profile `name` (checked) from the next turn on, with the same model."""
        wanted = None if name == AUTO else name
        if wanted != self.wanted:
            self.wanted = wanted
            self.ctx.rebuild(keep_model=True)
