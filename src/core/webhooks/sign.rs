//! Standard Webhooks signatures (standardwebhooks.com): a `whsec_<base64>` secret, and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::{Error, Result};

const PREFIX: &str = "whsec_";
/// A generated secret's key length (the specification asks for 24–64 bytes).
const KEY_BYTES: usize = 32;
const MIN_KEY_BYTES: usize = 24;
const MAX_KEY_BYTES: usize = 64;

/// A new random secret in the `whsec_…` form.
pub(crate) fn generate_secret() -> String {
    let key: [u8; KEY_BYTES] = rand::random();
    format!("{PREFIX}{}", STANDARD.encode(key))
}

/// The key bytes of a `whsec_…` secret; 400 for anything else.
pub fn key_of(secret: &str) -> Result<Vec<u8>> {
    let encoded = secret.strip_prefix(PREFIX).ok_or_else(Error::invalid_webhook_secret)?;
    let key = STANDARD.decode(encoded).map_err(|_| Error::invalid_webhook_secret())?;
    if !(MIN_KEY_BYTES..=MAX_KEY_BYTES).contains(&key.len()) {
        return Err(Error::invalid_webhook_secret());
    }
    Ok(key)
}

/// The `webhook-signature` header value for one message.
pub fn signature(key: &[u8], msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC accepts keys of any length; `key_of` already bounds it.
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the specification's reference libraries
    /// (standard-webhooks/libraries, every language's test suite).
    #[test]
    fn the_specifications_test_vector() {
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let sig = signature(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, br#"{"test": 2432232314}"#);
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn generated_secrets_round_trip_and_bad_ones_are_refused() {
        let s = generate_secret();
        assert!(s.starts_with("whsec_"));
        assert_eq!(key_of(&s).unwrap().len(), KEY_BYTES);
        assert_ne!(generate_secret(), s);
        for bad in ["", "whsec_", "secret", "whsec_!!!", "whsec_c2hvcnQ=", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] {
            assert_eq!(key_of(bad).unwrap_err().code, crate::error::Code::InvalidWebhookSecret, "{bad}");
        }
    }
}
