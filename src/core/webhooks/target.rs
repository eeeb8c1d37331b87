//! Where a webhook may send: the SSRF guard.
//!
//! A target must be `http(s)` and must not reach the server's own network: loopback,
//! private, link-local, unique-local, unspecified, shared (CGNAT), multicast and reserved
//! addresses are refused, in IPv4 and IPv6, including IPv6 forms that carry an IPv4
//! address (mapped, compatible, NAT64, 6to4). The check runs when the webhook is created
//! and again at every delivery, inside the HTTP client's name resolution
//! ([`GuardedResolver`]) — so the address checked is the address connected to, and a
//! name that later resolves elsewhere is caught. `WEBHOOK_ALLOW_PRIVATE=1` lifts it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::error::{Error, Result};

/// Longest accepted target URL.
const MAX_URL_LEN: usize = 2048;

/// A parsed, checked target URL (address not yet resolved).
pub(crate) fn parse(url: &str) -> Result<Url> {
    if url.len() > MAX_URL_LEN {
        return Err(Error::invalid_webhook_url(&format!("a URL has at most {MAX_URL_LEN} characters")));
    }
    let parsed = Url::parse(url.trim()).map_err(|e| Error::invalid_webhook_url(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::invalid_webhook_url("use an http:// or https:// URL"));
    }
    if parsed.host().is_none() {
        return Err(Error::invalid_webhook_url("the URL has no host"));
    }
    Ok(parsed)
}

/// Refuses a target whose host is, or resolves to, an address that is not public.
pub(crate) async fn check(url: &Url, allow_private: bool) -> Result<()> {
    if allow_private {
        return Ok(());
    }
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    for addr in resolve(host, port).await? {
        if !is_public(addr.ip()) {
            return Err(Error::webhook_target_not_allowed(host));
        }
    }
    Ok(())
}

/// At delivery: a target written as an IP address never reaches the resolver, so its
/// address is checked here; a name is checked by [`GuardedResolver`] as it connects.
pub(crate) fn literal_allowed(url: &Url, allow_private: bool) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => allow_private || is_public(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => allow_private || is_public(IpAddr::V6(ip)),
        _ => true,
    }
}

/// The addresses of `host` (an IP literal answers itself).
async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|_| Error::invalid_webhook_url(&format!("'{bare}' does not resolve")))?
        .collect();
    if addrs.is_empty() {
        return Err(Error::invalid_webhook_url(&format!("'{bare}' does not resolve")));
    }
    Ok(addrs)
}

/// Whether an address is on the public internet.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || a == 0 // "this network"
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let first = s[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated) fec0::/10
        || (first == 0x2001 && s[1] == 0x0db8) // documentation
        // Translated and tunnelled forms whose far end is not what the address says:
        || (first == 0x2001 && s[1] == 0) // Teredo 2001::/32
        || s[..3] == [0x64, 0xff9b, 1] // local-use NAT64 64:ff9b:1::/48
        || s[..6] == [0, 0, 0, 0, 0xffff, 0]) // SIIT ::ffff:0:0:0/96
}

/// The IPv4 address an IPv6 address carries: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}

/// The delivery client's name resolution: every address a name resolves to must be
/// public, or the attempt fails before connecting.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GuardedResolver {
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private && let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
                return Err(format!("'{host}' resolves to {}, which is not a public address", bad.ip()).into());
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_refused_in_every_form() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001::1",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff::808:808",
            "::ffff:0:7f00:1",
            "::ffff:0:808:808",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} must be refused");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "2002:0808:0808::"] {
            assert!(is_public(ip.parse().unwrap()), "{ip} is public");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_by_scheme_host_and_address() {
        for (url, code) in [
            ("ftp://example.com/x", "invalid_webhook_url"),
            ("not a url", "invalid_webhook_url"),
            ("http://127.0.0.1:9/hook", "webhook_target_not_allowed"),
            ("http://[::1]/hook", "webhook_target_not_allowed"),
            ("http://[::ffff:7f00:1]/hook", "webhook_target_not_allowed"),
            ("http://2130706433/hook", "webhook_target_not_allowed"),
            ("http://0x7f.1/hook", "webhook_target_not_allowed"),
            ("http://localhost:8080/hook", "webhook_target_not_allowed"),
            ("http://169.254.169.254/latest/meta-data", "webhook_target_not_allowed"),
        ] {
            let err = match parse(url) {
                Err(e) => e,
                Ok(u) => check(&u, false).await.expect_err(url),
            };
            assert_eq!(err.code.as_str(), code, "{url}");
        }
        let local = parse("http://127.0.0.1:9/hook").unwrap();
        check(&local, true).await.unwrap();
        check(&parse("http://93.184.216.34/hook").unwrap(), false).await.unwrap();
    }
}
