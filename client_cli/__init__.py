"""``gaps``: the terminal client of Gaps Arena.

Modules, one concern each: ``config`` (XDG config file, GAPS_SERVER), ``duration``
(``10m``, ``90s``), ``connection`` (the protocol client: ids, events in order, resync,
reconnect), ``match_state`` (a match as the client sees it), ``render`` (Rich cards and
grid), ``selection`` (what pointing at a cell means), ``widgets`` / ``screen`` (the
Textual match screen), ``practice`` (offline play), ``bot`` (bot players),
``http`` (replays and the match list over HTTP), ``verify`` (audit a replay) and
``cli`` (the commands). It uses ``gaps`` for the rules and never imports ``server``.
"""
