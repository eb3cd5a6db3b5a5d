"""Gaps Arena's match server: WebSocket protocol, matches, storage and broker.

Depends on ``gaps`` (the rules) and never the other way round.
"""
