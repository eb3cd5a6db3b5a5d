from __future__ import annotations

import pytest

from server.forwarded import BadNetwork, client_address, parse_networks

BALANCERS = parse_networks("127.0.0.1, 10.0.0.0/8")


def test_a_connection_from_an_untrusted_peer_is_its_own_address_whatever_it_claims() -> None:
    assert client_address("203.0.113.9", "198.51.100.1", trusted=BALANCERS) == "203.0.113.9"


def test_a_trusted_balancer_s_connection_is_the_client_it_forwards() -> None:
    assert client_address("127.0.0.1", "198.51.100.7", trusted=BALANCERS) == "198.51.100.7"


def test_hops_written_by_the_client_itself_are_not_believed() -> None:
    # The client sent "X-Forwarded-For: 1.2.3.4"; the balancer appended the real address.
    forwarded = "1.2.3.4, 198.51.100.7"
    assert client_address("127.0.0.1", forwarded, trusted=BALANCERS) == "198.51.100.7"


def test_a_chain_of_trusted_proxies_is_walked_to_the_first_untrusted_hop() -> None:
    forwarded = "198.51.100.7, 10.1.2.3"
    assert client_address("127.0.0.1", forwarded, trusted=BALANCERS) == "198.51.100.7"


def test_a_hop_that_is_no_address_stops_at_the_proxy_that_passed_it_on() -> None:
    assert client_address("127.0.0.1", "nonsense, 10.1.2.3", trusted=BALANCERS) == "10.1.2.3"
    assert client_address("127.0.0.1", "nonsense", trusted=BALANCERS) == "127.0.0.1"


def test_without_trusted_proxies_the_header_is_ignored() -> None:
    assert client_address("127.0.0.1", "198.51.100.7", trusted=()) == "127.0.0.1"


def test_ipv6_balancers_and_clients_are_understood() -> None:
    trusted = parse_networks("::1")
    assert client_address("::1", "2001:db8::5", trusted=trusted) == "2001:db8::5"


def test_a_trusted_proxy_that_is_no_network_is_named_in_the_error() -> None:
    with pytest.raises(BadNetwork, match="'10.0.0.300'"):
        parse_networks("127.0.0.1, 10.0.0.300")
    assert parse_networks(" , ") == ()
