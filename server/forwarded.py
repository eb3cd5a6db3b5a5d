"""The address a connection comes from, seen through trusted load balancers.

Behind a load balancer every connection comes from the balancer's address, so limits kept
per address would count every player together. A balancer says whom it forwards in the
``X-Forwarded-For`` header, each proxy appending the address it received from; a client
can write anything in that header, so only hops appended by trusted proxies are believed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class BadNetwork(ValueError):
    """A trusted proxy that is no address or network (``10.0.0.0/8``, ``::1``)."""


def parse_networks(text: str) -> tuple[Network, ...]:
    """The networks of a comma-separated list such as ``127.0.0.1, 10.0.0.0/8``."""
    networks = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise BadNetwork(f"{item!r} is no IP address or network") from None
    return tuple(networks)


def _trusted(address: str, trusted: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


def client_address(peer: str, forwarded_for: str | None, *, trusted: Sequence[Network]) -> str:
    """The client's address: ``peer`` itself, unless ``peer`` is a trusted proxy; then the
    nearest hop of ``forwarded_for`` that no trusted proxy sent, read from the right (the
    hops on its left were written by whoever that hop was, and may be forged). A hop that
    is no address stops the walk at the trusted proxy that passed it on."""
    if not forwarded_for or not _trusted(peer, trusted):
        return peer
    nearest = peer
    for hop in reversed([part.strip() for part in forwarded_for.split(",")]):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return nearest
        nearest = hop
        if not _trusted(hop, trusted):
            return hop
    return nearest
