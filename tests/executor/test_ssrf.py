"""Pure logic: the URL / address policy of http_request (SECURITY.md R1–R4).

Resolution is faked (a function from host to addresses): nothing here connects.
"""

from __future__ import annotations

import ipaddress

import pytest

from aios_protocol.errors import UrlNotAllowed
from executor.sandbox.ssrf import (
    UrlPolicy,
    address_refusal,
    check_url,
    domain_allowed,
    literal_address,
)

PUBLIC = ipaddress.ip_address("93.184.216.34")


def resolver(table: dict[str, list[str]]):
    def resolve(host: str, port: int) -> list:
        return [ipaddress.ip_address(a) for a in table.get(host, ["93.184.216.34"])]

    return resolve


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5001/",
        "http://localhost/",
        "http://[::1]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[2002:7f00:1::]/",
    ],
)
def test_r1_loopback_private_and_numeric_forms_refused(url: str) -> None:
    """R1: every loopback / private / link-local / numeric spelling is refused."""
    with pytest.raises(UrlNotAllowed) as caught:
        check_url(url, UrlPolicy(), resolver({"localhost": ["127.0.0.1", "::1"]}))
    assert caught.value.code == "url_not_allowed"


def test_r1_allow_private_hosts_lets_the_named_host_through() -> None:
    policy = UrlPolicy(allow_private_hosts=("127.0.0.1",))
    target = check_url("http://127.0.0.1:8080/x?q=1", policy, resolver({}))
    assert (target.host, target.port, target.path) == ("127.0.0.1", 8080, "/x?q=1")
    assert target.private_allowed
    with pytest.raises(UrlNotAllowed):  # another loopback name is still refused
        check_url("http://localhost:8080/", policy, resolver({"localhost": ["127.0.0.1"]}))


def test_r2_a_public_name_resolving_to_loopback_is_refused() -> None:
    """R2: an allowed-looking name whose address is private is refused (every address)."""
    table = {"rebind.example": ["93.184.216.34", "127.0.0.1"]}
    with pytest.raises(UrlNotAllowed) as caught:
        check_url("https://rebind.example/", UrlPolicy(), resolver(table))
    assert "loopback" in caught.value.message


def test_r2_peer_address_is_checked_against_the_checked_set() -> None:
    target = check_url("https://ok.example/", UrlPolicy(), resolver({}))
    target.check_peer("93.184.216.34")
    with pytest.raises(UrlNotAllowed):
        target.check_peer("127.0.0.1")


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://example.com/",
        "ftp://example.com/",
        "http://allowed.com@evil.com/",
        "http://user:pw@example.com/",
        "http:///nohost",
        "http://exa mple.com/",
        "http://example.com:99999/",
    ],
)
def test_r4_schemes_userinfo_and_malformed_urls_refused(url: str) -> None:
    """R4: `file://`, `gopher://`, `http://allowed.com@evil.com/` are refused."""
    with pytest.raises(UrlNotAllowed):
        check_url(url, UrlPolicy(), resolver({}))


def test_r4_domain_whitelist_compares_labels() -> None:
    """R4: `allowed.com.evil.com` is not `allowed.com`; subdomains are."""
    policy = UrlPolicy(domain_whitelist=("allowed.com",))
    assert check_url("https://allowed.com/", policy, resolver({})).host == "allowed.com"
    assert (
        check_url("https://api.allowed.com/", policy, resolver({})).host
        == "api.allowed.com"
    )
    for url in (
        "https://allowed.com.evil.com/",
        "https://notallowed.com/",
        "https://93.184.216.34/",
    ):
        with pytest.raises(UrlNotAllowed):
            check_url(url, policy, resolver({}))


def test_app_whitelist_restricts_further() -> None:
    policy = UrlPolicy(app_domain_whitelist=("itunes.apple.com",))
    assert check_url("https://itunes.apple.com/search", policy, resolver({}))
    with pytest.raises(UrlNotAllowed):
        check_url("https://example.com/", policy, resolver({}))


def test_domain_allowed_normalises_case_and_wildcards() -> None:
    assert domain_allowed("a.example.com", ["*.Example.COM."])
    assert not domain_allowed("badexample.com", ["example.com"])


def test_literal_address_numeric_forms() -> None:
    assert str(literal_address("2130706433")) == "127.0.0.1"
    assert str(literal_address("0x7f.1")) == "127.0.0.1"
    assert str(literal_address("::1")) == "::1"
    assert literal_address("cafe.be") is None
    assert literal_address("example.com") is None


def test_address_refusal_public_and_cgnat() -> None:
    assert address_refusal(PUBLIC) is None
    assert "CGNAT" in (address_refusal(ipaddress.ip_address("100.100.1.1")) or "")
    assert address_refusal(ipaddress.ip_address("2606:4700::1111")) is None
