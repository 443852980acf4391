"""Which URLs `http_request` may reach (SECURITY.md R1–R4), decided before connecting.

Only `http` and `https`; no userinfo (`http://allowed.com@evil.com/`). The host is
normalised (lower case, IDNA, trailing dot dropped); numeric forms such as
`2130706433` or `0x7f.1` count as the address they denote. Every address the host
resolves to must be public — loopback, private, link-local, CGNAT `100.64/10`,
multicast, reserved, unspecified, and IPv4 embedded in IPv6 (mapped, 6to4, NAT64,
Teredo) are refused — unless the host is listed in
`tool_sandbox.http_allow_private_hosts`. A non-empty domain whitelist (config, and
the app's own) admits only its domains and their subdomains, compared by labels
(`allowed.com.evil.com` is not `allowed.com`). The caller connects to one of the
checked addresses and re-checks the peer address of the socket (R2).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aios_protocol.errors import AiosError, UrlNotAllowed

__all__ = [
    "IPAddress",
    "Target",
    "UrlPolicy",
    "address_refusal",
    "check_url",
    "domain_allowed",
    "literal_address",
    "normalize_host",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[IPAddress]]

_HOST_CHARS = re.compile(r"^[a-z0-9_.-]+$")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def normalize_host(host: str) -> str:
    """Lower case, IDNA-encoded, without a trailing dot or IPv6 brackets."""
    host = host.strip().strip("[]").rstrip(".").lower()
    if host and not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise UrlNotAllowed(f"host {host!r} is not a valid name") from exc
    return host


def literal_address(host: str) -> IPAddress | None:
    """The address a host denotes by itself (`127.0.0.1`, `::1`, `2130706433`, `0x7f.1`)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if re.fullmatch(r"[0-9a-fx.]+", host) and not host.endswith("."):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def address_refusal(ip: IPAddress) -> str | None:
    """Why `ip` may not be reached (None when it is a public unicast address)."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded: list[ipaddress.IPv4Address] = []
        if ip.ipv4_mapped:
            embedded.append(ip.ipv4_mapped)
        if ip.sixtofour:
            embedded.append(ip.sixtofour)
        if ip.teredo:
            embedded.extend(ip.teredo)
        if ip in _NAT64:
            embedded.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        for inner in embedded:
            reason = address_refusal(inner)
            if reason:
                return f"{reason} (embedded in {ip})"
    checks = (
        ("is_unspecified", "unspecified"),
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_private", "private"),
        ("is_reserved", "reserved"),
    )
    for attribute, label in checks:
        if getattr(ip, attribute):
            return f"{ip} is a {label} address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT:
        return f"{ip} is a shared (CGNAT) address"
    if not ip.is_global:
        return f"{ip} is not a public address"
    return None


def domain_allowed(host: str, whitelist: Iterable[str]) -> bool:
    """`host` equals a whitelisted domain or is a subdomain of one (label-wise)."""
    for entry in whitelist:
        domain = normalize_host(entry.removeprefix("*."))
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


@dataclass(frozen=True)
class UrlPolicy:
    """The whitelists in force for one app's requests."""

    domain_whitelist: tuple[str, ...] = ()
    app_domain_whitelist: tuple[str, ...] = ()
    allow_private_hosts: tuple[str, ...] = ()

    def private_allowed(self, host: str, literal: IPAddress | None) -> bool:
        allowed = {normalize_host(h) for h in self.allow_private_hosts}
        return host in allowed or (literal is not None and str(literal) in allowed)


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect and what to ask for."""

    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[IPAddress, ...]
    private_allowed: bool

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    def check_peer(self, peer: str) -> None:
        """R2: the address actually connected must be one we checked."""
        address = ipaddress.ip_address(peer.split("%", 1)[0])
        if address not in self.addresses:
            raise UrlNotAllowed(f"connected to {address}, which was not checked")
        if not self.private_allowed and address_refusal(address):
            raise UrlNotAllowed(f"refused: {address_refusal(address)}")


def system_resolver(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise AiosError(
            f"cannot resolve {host!r}: {exc}", code="connection_failed"
        ) from exc
    found: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    return found


def check_url(url: str, policy: UrlPolicy, resolve: Resolver = system_resolver) -> Target:
    """Refuse (`UrlNotAllowed`, code `url_not_allowed`) or answer where to connect."""
    if not isinstance(url, str) or any(ch in url for ch in "\x00\r\n\t "):
        raise UrlNotAllowed("url must be a string without spaces or control characters")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UrlNotAllowed(
            f"scheme {scheme or '(none)'!r} is not allowed (http/https only)"
        )
    if "@" in parts.netloc:
        raise UrlNotAllowed("URLs with user information (user@host) are not allowed")
    host = normalize_host(parts.hostname or "")
    if not host:
        raise UrlNotAllowed("url has no host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise UrlNotAllowed(f"bad port in {url!r}") from exc
    literal = literal_address(host)
    if literal is None and not _HOST_CHARS.match(host):
        raise UrlNotAllowed(f"host {host!r} is not a valid name")
    for whitelist, owner in (
        (policy.domain_whitelist, "config"),
        (policy.app_domain_whitelist, "the app's"),
    ):
        if whitelist and not domain_allowed(host, whitelist):
            raise UrlNotAllowed(f"{host} is not in {owner} http_domain_whitelist")
    private_ok = policy.private_allowed(host, literal)
    addresses = [literal] if literal is not None else resolve(host, port)
    if not addresses:
        raise AiosError(f"{host!r} has no address", code="connection_failed")
    if not private_ok:
        for address in addresses:
            reason = address_refusal(address)
            if reason:
                raise UrlNotAllowed(f"{host} refused: {reason}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(scheme, host, port, path, tuple(addresses), private_ok)
