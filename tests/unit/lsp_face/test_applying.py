"""When an accept counts: a hunk is claimed before its edit is sent, and accepted only once
the editor's text shows the edit."""

import asyncio

from deepacp.lsp.applying import Application, InFlight, shows
from deepacp.lsp.proposal import make_proposal

BEFORE = "def add(a, b):\n    return a + b\n"
AFTER = "def add(a, b):\n    return b + a\n"


def test_the_text_shows_an_edit_exactly_or_by_which_side_it_is_closer_to() -> None:
    assert shows(BEFORE, AFTER, AFTER) and not shows(BEFORE, AFTER, BEFORE)
    typed = "# mine\n"
    assert shows(BEFORE, AFTER, typed + AFTER)  # applied, and the user typed above it
    assert not shows(BEFORE, AFTER, typed + BEFORE)  # dropped; the user typed
    # An insertion in a run of blank lines: only the whole text tells.
    blank = "a\n\n\nb\n"
    assert shows(blank, "a\n\n\n\nb\n", "a\n\n\n\nb\n") and not shows(blank, "a\n\n\n\nb\n", blank)


def test_a_claimed_hunk_is_not_pending_until_it_settles() -> None:
    change = make_proposal("p", {"u": ("/w/a.py", BEFORE, AFTER)}).files["u"]
    [hunk] = change.hunks
    assert change.claim([hunk.id]) == [hunk.id] and change.pending == []
    assert change.claim([hunk.id]) == []  # a second accept takes nothing
    assert change.open == [hunk]  # still shown
    assert change.settle([hunk.id], False) == [hunk.id] and hunk.state == "pending"
    change.claim([hunk.id])
    assert change.settle([hunk.id], True) == [hunk.id] and hunk.state == "accepted"
    assert change.settle([hunk.id], False) == []  # settled once


async def application(flight: InFlight) -> tuple[Application, object]:
    proposal = make_proposal("p", {"u": ("/w/a.py", BEFORE, AFTER)})
    change = proposal.files["u"]
    claimed = change.claim([h.id for h in change.hunks])
    sent = Application(proposal, change, claimed, BEFORE, AFTER)
    flight.add(sent)
    return sent, change.hunks[0]


async def test_an_edit_counts_when_the_text_shows_it_not_on_the_answer() -> None:
    flight = InFlight()
    sent, hunk = await application(flight)
    flight.text_seen("u", BEFORE, reported=True)  # a change before the answer: not yet
    flight.answered(sent, True, "", BEFORE)  # "applied": the text has not shown it
    assert not sent.outcome.done() and hunk.state == "applying"
    flight.text_seen("u", BEFORE, reported=True)  # the next change: still the old text
    assert await sent.outcome is False and hunk.state == "pending"
    assert "does not show it" in sent.why_not


async def test_the_editors_change_before_its_answer_settles_it() -> None:
    flight = InFlight()
    sent, hunk = await application(flight)
    flight.text_seen("u", AFTER, reported=False)  # eglot and VS Code send it first
    assert await asyncio.wait_for(sent.outcome, 1) is True and hunk.state == "accepted"
    flight.answered(sent, False, "late", AFTER)  # nothing changes after that
    assert hunk.state == "accepted"


async def test_a_refusal_or_an_unshared_document() -> None:
    flight = InFlight()
    sent, hunk = await application(flight)
    flight.answered(sent, False, "declined in Emacs", BEFORE)
    assert await sent.outcome is False and sent.why_not == "declined in Emacs"
    sent, hunk = await application(flight)
    flight.answered(sent, True, "", None)  # a document the editor does not share
    assert await sent.outcome is True and hunk.state == "accepted"
