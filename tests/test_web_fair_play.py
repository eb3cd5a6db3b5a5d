"""The fair-play fields of docs/fair-play.md in the web client: bot badges, the bots
checkboxes and the people's and bots' boards, results held, voided or suspended, a
suspended account, and a host removing a tournament entrant. The test's ``Wire`` says of
players and results what the server would.
"""

from __future__ import annotations

import re
from typing import Any

from tests.races import Connect, registered
from tests.web_support import (
    WEB,
    Message,
    Wire,
    marked_http,
    marking_bots,
    marking_removed,
    marking_reviews,
    sign_up,
)

pytest_plugins = ["tests.web_fixtures"]
pytestmark = WEB


async def test_bot_players_wear_a_badge_and_a_rematch_offer_links_to_the_new_match(
    open_page: Any, connect: Connect
) -> None:
    """Where the server says ``bot: true`` of a player (here the wire says it of robo),
    the name wears a "bot" badge: seats, ranking, replay, leaderboard, player page."""
    (robo,) = await registered(connect, "robo")
    page = await open_page()
    wire = Wire(mark=marking_bots("robo"))
    await wire.attach(page)
    await marked_http(page, marking_bots("robo"))
    await sign_up(page, "ivo")
    code = (await robo.ok("create_match", max_players=2, countdown_s=0))["match"]["code"]
    await page.goto(f"/m/{code}")
    await page.wait_for_selector("#players >> text=ivo")
    await robo.ok("ready", code=code)
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")
    await robo.event("started", match=code)
    assert (await robo.act(code, "stop"))["type"] == "action_ok"
    robo_row = page.locator("#players tr", has_text="robo")
    await robo_row.locator("text=stopped").wait_for()  # a progress event keeps the badge
    assert await robo_row.locator(".badge-bot").get_attribute("aria-label") == "(a bot)"
    ivo_row = page.locator("#players tr", has_text="ivo")
    assert await ivo_row.locator(".badge-bot").count() == 0  # no bot field: a person
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")
    ranked = page.locator("#ranking tr", has_text="robo")
    assert await ranked.locator(".badge-bot").inner_text() == "bot"
    assert await page.locator("#ranking .badge-bot").count() == 1
    assert await page.locator("#review-notes").count() == 0  # every result counts
    assert "null" not in await page.inner_text("#end")
    # Another player's rematch, on the finished match's stream (docs/protocol.md: a
    # numbered event, ``by`` a player): a link to join it.
    last = max(e["seq"] for e in robo.events if e.get("match") == code)
    wire.say({"type": "event", "match": code, "seq": last + 1, "event": "rematch_offered",
              "code": "QWERTZ", "same_seed": True,
              "by": {"player_id": robo.player_id, "name": "robo"}})
    offer = page.locator("#rematch-offer")
    await offer.locator("a").wait_for()
    assert await offer.inner_text() == "robo offered a rematch on the same deal: join match QWERTZ"
    assert await offer.locator("a").get_attribute("href") == "/m/QWERTZ"
    # An offer outside the numbered events, ``by`` a bare name, is shown as well.
    wire.say({"type": "event", "match": code, "event": "rematch_offered",
              "code": "ASDFGH", "by": "robo"})
    await page.wait_for_selector("#rematch-offer >> text=robo offered a rematch: join match ASDFGH")
    # This page's own rematch on the same deal. The server here has no ``rematch``
    # request: the page creates a match with the same options and the revealed seed.
    await page.click("#end button[data-rematch=same]")
    assert [r["same_seed"] for r in wire.requests("rematch")] == [True]
    await page.wait_for_url(re.compile(r"/m/(?!" + code + r")[A-Z0-9]{6}$"))
    await page.wait_for_selector("#match-info >> text=unrated")
    info = await page.inner_text("#match-info")
    assert info.startswith("classic") and "2 seats" in info
    rematch_code = page.url.rsplit("/", 1)[1]
    assert (await robo.ok("join_match", code=rematch_code, role="spectator"))["match"][
        "rated"] is False
    await page.goto(f"/replay/{code}")
    await page.wait_for_selector("#replay-step")
    options = await page.eval_on_selector_all("#replay-player option", "os => os.map(o => o.text)")
    names = sorted(re.sub(r"^\d+\. | \(-?\d+\)$", "", option) for option in options)
    assert names == ["ivo", "robo [bot]"]
    await page.goto("/boards?ruleset=classic&by=score&period=all")
    await page.wait_for_selector("#leaderboard >> text=ivo")
    board_row = page.locator("#leaderboard tr", has_text="robo")
    assert await board_row.locator(".badge-bot").count() == 1
    assert await page.locator("#leaderboard .badge-bot").count() == 1
    assert "bot" not in await page.inner_text("#leaderboard thead")  # not a figure
    await page.goto("/player/robo")
    await page.wait_for_selector("h1 .badge-bot")
    await page.goto("/player/ivo")
    await page.wait_for_selector("h1 >> text=ivo")
    assert await page.locator("h1 .badge-bot").count() == 0


async def test_the_create_forms_let_bots_sit_and_the_boards_switch_between_people_and_bots(
    open_page: Any,
) -> None:
    page = await open_page()
    bots_asked: list[bool] = []  # what the page's create_match said: the match view echoes it

    def echo_bots(message: Message) -> None:
        if isinstance(message.get("match"), dict) and bots_asked:
            message["match"]["bots"] = bots_asked[-1]

    wire = Wire(mark=echo_bots)
    await wire.attach(page)
    boards: list[str] = []
    page.on("request", lambda r: boards.append(r.url) if "/leaderboards/" in r.url else None)
    await sign_up(page, "xan")
    await page.goto("/lobby")
    await page.fill("#countdown", "0")
    bots_asked.append(False)
    await page.click("text=Create match")  # by default, no bot may sit
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.wait_for_selector("#match-info >> text=lobby")
    assert "bots" not in await page.inner_text("#match-info")
    await page.goto("/lobby")
    await page.get_by_label("Bots may sit").check()  # the checkbox is labelled
    bots_asked.append(True)
    await page.click("text=Create match")
    await page.wait_for_url(re.compile(r"/m/[A-Z0-9]{6}$"))
    await page.wait_for_selector("#match-info >> text=bots may sit")
    assert [r["bots"] for r in wire.requests("create_match")] == [False, True]
    await page.goto("/lobby")
    await page.wait_for_selector("#tournaments >> text=No tournament")  # loaded: focus stays
    await page.fill("#t-name", "Bots welcome")
    await page.focus("#t-bots")
    await page.keyboard.press("Space")  # by keyboard
    await page.click("text=Host tournament")
    await page.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    assert await page.get_by_label("Bots may enter").count() == 0  # left the lobby
    (created,) = wire.requests("tournament_create")
    assert created["bots"] is True and created["name"] == "Bots welcome"
    # Leaderboards: people's by default, the switch names the kind in the URL and asks it.
    await page.goto("/boards?ruleset=classic&by=score&period=all")
    await page.wait_for_selector("#leaderboard")
    assert "kind=people" in boards[-1]
    switch = page.get_by_role("navigation", name="Whose boards")
    assert await switch.get_by_role("link", name="People").get_attribute("aria-current") == "page"
    assert await switch.get_by_role("link", name="Bots").get_attribute("aria-current") is None
    await switch.get_by_role("link", name="Bots").focus()
    await page.keyboard.press("Enter")
    await page.wait_for_url(re.compile(r"kind=bots"))
    await page.wait_for_selector("h1 >> text=Leaderboards: bots")
    assert "kind=bots" in boards[-1] and "ruleset" not in boards[-1].split("?")[1]
    assert await switch.get_by_role("link", name="Bots").get_attribute("aria-current") == "page"
    await page.evaluate("window.notReloaded = true")
    await page.focus("#by")
    await page.select_option("#by", "wins")  # read again at once, in place, keeping the kind
    await page.wait_for_url(re.compile(r"by=wins"))
    assert "kind=bots" in page.url
    await page.wait_for_selector("#leaderboard th >> text=Wins")
    assert "kind=bots" in boards[-1] and "by=wins" in boards[-1]
    assert await page.evaluate("window.notReloaded") is True
    assert await page.evaluate("document.activeElement.id") == "by"  # the focus stays
    await switch.get_by_role("link", name="People").click()
    await page.wait_for_url(re.compile(r"kind=people"))
    # The page renders once its board has come: wait for the heading, not the URL.
    await page.wait_for_selector('h1:text-is("Leaderboards")')
    assert "kind=people" in boards[-1]


async def test_a_held_voided_or_suspended_result_says_so_and_a_suspended_account_is_told(
    open_page: Any, connect: Connect
) -> None:
    vic, wes = await registered(connect, "vic", "wes")
    reviews: dict[str, str | None] = {"una": "held", "vic": "suspended", "wes": "cleared"}
    suspension: list[Any] = []
    mark = marking_reviews(reviews, suspension)
    page = await open_page()
    wire = Wire(mark=mark)
    await wire.attach(page)
    await marked_http(page, mark)
    await sign_up(page, "una")
    code = (await vic.ok("create_match", max_players=3, countdown_s=0))["match"]["code"]
    await wes.ok("join_match", code=code)
    await page.goto(f"/m/{code}")
    await page.wait_for_selector("#players >> text=una")
    assert await page.is_hidden("#notice")  # not suspended: no notice
    for client in (vic, wes):
        await client.ok("ready", code=code)
    await page.click("text=Ready")
    await page.wait_for_selector(".board .cell >> nth=51")
    for client in (vic, wes):
        await client.event("started", match=code)
        assert (await client.act(code, "stop"))["type"] == "action_ok"
    await page.keyboard.press("s")
    await page.wait_for_selector("#ranking")

    async def marks(where: str) -> dict[str, str]:
        """Each ranked player's review mark on the page ('' for none)."""
        found = {}
        for name in ("una", "vic", "wes"):
            row = page.locator(f"{where} tr", has_text=name)
            shown = row.locator(".review")
            found[name] = await shown.inner_text() if await shown.count() else ""
        return found

    assert await marks("#ranking") == {"una": "under review", "vic": "suspended", "wes": ""}
    notes = (await page.inner_text("#review-notes")).splitlines()
    assert sorted(notes) == [
        "una's result is under review: it is held off the boards and ratings until an "
        "operator reviews it.",
        "vic is suspended from rated play: this result counts on no board and no rating.",
    ]
    # An operator voids una's result and clears the rest: the finished match, loaded
    # again, and its replay say so (the replay document carries ``review`` too).
    reviews.update(una="voided", vic=None, wes="cleared")
    await page.reload()
    await page.wait_for_selector("#ranking")
    assert await marks("#ranking") == {"una": "voided by an operator", "vic": "", "wes": ""}
    await page.goto(f"/replay/{code}")
    await page.wait_for_selector("#replay-step")
    options = await page.eval_on_selector_all("#replay-player option", "os => os.map(o => o.text)")
    assert [o for o in options if "voided" in o] == [
        o for o in options if re.match(r"\d\. una \(-?\d+\) · voided by an operator$", o)
    ] != []
    for index, option in enumerate(options):
        await page.select_option("#replay-player", str(index))
        if "una" in option:
            assert await page.inner_text("#replay-review") == (
                "una's result was voided by an operator: it counts on no board and no rating."
            )
        else:
            assert await page.is_hidden("#replay-review")
    # A suspended account is told as it comes back (``welcome``), the reason as text.
    suspension.append({"since": "2026-12-01T03:00:00+00:00", "reason": "<b>bot-paced</b> play"})
    await page.goto("/lobby")
    await page.wait_for_selector("#notice", state="visible")
    assert await page.inner_text("#notice") == (
        "Rated play is suspended for your account: <b>bot-paced</b> play. "
        "You can still play, but your results count on no board and no rating."
    )
    assert await page.locator("#notice b").count() == 0
    assert await page.get_attribute("#notice", "role") == "status"
    suspension.append(True)  # suspended, no reason given
    await page.reload()
    await page.wait_for_selector("#notice >> text=Rated play is suspended for your account.")
    assert await page.locator("#suspended-reason").count() == 0
    suspension.append(None)
    await page.reload()
    await page.wait_for_selector("text=Create a match")
    assert await page.is_hidden("#notice")


async def test_the_host_removes_an_entrant_with_a_reason_that_everyone_sees(
    open_page: Any, connect: Connect
) -> None:
    eve, fay = await registered(connect, "eve", "fay")
    removed: dict[str, str] = {}
    host, wall = await open_page(), await open_page()
    host_wire, wall_wire = Wire(mark=marking_removed(removed)), Wire(mark=marking_removed(removed))
    await host_wire.attach(host)
    await wall_wire.attach(wall)
    await sign_up(host, "hostess")
    await sign_up(wall, "wall")
    await host.goto("/lobby")
    await host.fill("#t-name", "Cup")
    await host.click("text=Host tournament")
    await host.wait_for_url(re.compile(r"/t/[A-Z0-9]{6}$"))
    code = host.url.rsplit("/", 1)[1]
    for client in (eve, fay):
        await client.ok("tournament_join", code=code)
    await host.wait_for_selector("#round >> text=Waiting to start · 2 entrants")
    await wall.goto(f"/t/{code}")
    await wall.wait_for_selector("#round >> text=Waiting to start · 2 entrants")
    assert await wall.locator("#entrants button").count() == 0  # only the host removes
    # Remove whoever the standings show first: once removed, they come last.
    standing = await eve.ok("tournament_standings", code=code)
    target, other = (s["name"] for s in standing["standings"])
    reason = "<i>left</i> the table"
    # Refused (a round in play, as the server would say): the message is shown.
    host_wire.refusals["tournament_remove"] = [{
        "code": "round_in_play", "message": "round 1 is being played: remove entrants after it",
        "round": 1,
    }]
    await host.get_by_role("button", name=f"Remove {target}").click()
    field = host.get_by_label(f"Why remove {target}? (everyone sees it)")
    assert await field.evaluate("f => f === document.activeElement")  # typed at once
    await host.keyboard.type(reason)
    await host.keyboard.press("Enter")
    await host.wait_for_selector(f"#status.error >> text={target} was not removed: round 1 is")
    assert [(r["code"], r["player"], r["reason"]) for r in host_wire.requests(
        "tournament_remove")] == [(code, target, reason)]
    # Accepted: the reply's view has them removed, and the server's standings too.
    events = await eve.ok("tournament_resync", code=code, since=0)
    last = events["events"][-1]["seq"]
    view = standing["tournament"]
    for entrant in view["entrants"]:
        if entrant["name"] == target:
            entrant.update(removed=True, removed_reason=reason)
    view["entrant_count"] -= 1
    host_wire.answers["tournament_remove"] = [
        lambda _: {"type": "tournament", "tournament": view, "seq": last}]
    removed[target] = reason
    await host.click("text=Confirm removal")
    line = f"{target} was removed by the host: {reason}"
    await host.wait_for_selector("#status >> text=was removed.")
    for page in (host, wall):
        if page is wall:  # every follower is told, the host's page included
            player_id = next(e["player_id"] for e in view["entrants"] if e["name"] == target)
            for wire in (host_wire, wall_wire):
                wire.say({"type": "tournament_event", "tournament": code, "seq": last + 1,
                          "event": "entrant_removed", "player_id": player_id, "name": target,
                          "reason": reason, "after_round": 0})
        await page.wait_for_selector(f"#tournament-log >> text={line}")
        await page.wait_for_function(  # the standings, asked again, show them last
            "name => { const rows = [...document.querySelectorAll('#standings tr')];"
            " return rows.length === 2 && rows[1].textContent.includes(name) }", arg=target)
        assert (await page.locator("#standings tr").nth(0).inner_text()).split("\t")[1] == other
        assert (await page.inner_text("#standings tr.removed td >> nth=1")) == (
            f"{target} · removed: {reason}")
        entries = await page.eval_on_selector_all(  # the host's buttons (Reinstate) aside
            "#entrants li", "items => items.map(item => [...item.childNodes]"
            ".filter(n => n.nodeName !== 'BUTTON').map(n => n.textContent).join('').trim())")
        assert entries[1] == f"{target} · removed: {reason}"
        assert await page.locator("#tournament-log li").count() == 1  # once, not per telling
        await page.wait_for_selector("#round >> text=Waiting to start · 1 entrant of")
        assert await page.locator("#tournament-log i, #standings i, #entrants i").count() == 0
    assert len(wall_wire.requests("tournament_standings")) >= 1
    # The host can remove only who is still in.
    assert await host.locator("#entrants button.remove").count() == 1
    assert await host.get_by_role("button", name=f"Remove {other}").count() == 1
    assert await host.get_by_role("button", name=f"Reinstate {target}").count() == 1
    assert await host.locator("#remove-entrant form").count() == 0
