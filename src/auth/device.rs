//! Device cookies: a browser (or client) that once signed in to an account carries a
//! signed note saying so, and the failed-login ceilings across addresses spare it, so
//! guesses from elsewhere can slow an account down for strangers without locking its
//! owner out (OWASP's "device cookies"). The note names the email it was issued for and
//! when; it is signed with a key derived from the server secret, and holds no secret of
//! the user's.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How long a device note vouches for its device.
pub(crate) const LIFETIME_SECS: i64 = 180 * 24 * 3600;

#[derive(Clone)]
pub struct DeviceKey(Vec<u8>);

impl DeviceKey {
    /// A key of its own, derived from the server secret, so a device note can never pass
    /// for anything else the secret signs.
    pub fn derive(server_secret: &[u8]) -> Self {
        let mut mac = Hmac::<Sha256>::new_from_slice(server_secret).expect("HMAC takes any key length");
        mac.update(b"cairn device cookie v1");
        Self(mac.finalize().into_bytes().to_vec())
    }

    /// A note for `email` issued at `now`: `v1.<issued>.<signature>`.
    pub fn issue(&self, email: &str, now: i64) -> String {
        format!("v1.{now}.{}", URL_SAFE_NO_PAD.encode(self.sign(email, now).finalize().into_bytes()))
    }

    /// Whether `note` was issued by this key for `email` and is still in its lifetime at
    /// `now`. The signature is compared in constant time.
    pub fn vouches(&self, note: &str, email: &str, now: i64) -> bool {
        let mut parts = note.splitn(3, '.');
        let (Some("v1"), Some(issued), Some(signature)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let Ok(issued) = issued.parse::<i64>() else { return false };
        let Ok(signature) = URL_SAFE_NO_PAD.decode(signature) else { return false };
        issued <= now && now - issued < LIFETIME_SECS && self.sign(email, issued).verify_slice(&signature).is_ok()
    }

    fn sign(&self, email: &str, issued: i64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(email.as_bytes());
        mac.update(b"\0");
        mac.update(issued.to_string().as_bytes());
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_vouches_for_its_email_only_and_only_in_its_lifetime() {
        let key = DeviceKey::derive(b"server secret");
        let note = key.issue("ann@x.io", 1_000);
        assert!(key.vouches(&note, "ann@x.io", 1_000));
        assert!(key.vouches(&note, "ann@x.io", 1_000 + LIFETIME_SECS - 1));
        assert!(!key.vouches(&note, "ann@x.io", 1_000 + LIFETIME_SECS));
        assert!(!key.vouches(&note, "ann@x.io", 999), "issued in the future");
        assert!(!key.vouches(&note, "bob@x.io", 1_000));
        assert!(!DeviceKey::derive(b"another secret").vouches(&note, "ann@x.io", 1_000));
        // A note whose date was moved does not verify.
        let moved = note.replacen("v1.1000.", "v1.2000.", 1);
        assert!(!key.vouches(&moved, "ann@x.io", 2_000));
        for junk in ["", "v1", "v1.x.y", "v2.1000.abc", "v1.1000.!!!"] {
            assert!(!key.vouches(junk, "ann@x.io", 1_000), "{junk}");
        }
    }
}
