//! HS256 JWTs for `POST /api/token`. The key comes from `JWT_SECRET` or is generated once
//! and kept in `DATA_DIR/jwt_secret` (mode 0600), so tokens survive restarts.

use std::path::Path;

use anyhow::Context;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

pub(crate) const LIFETIME_SECS: i64 = 7 * 24 * 3600;

#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

#[derive(Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub iat: i64,
    pub exp: i64,
    pub iss: String,
    /// The user's credential generation when issued (0 in tokens of older releases).
    #[serde(default, rename = "gen")]
    pub generation: i64,
}

impl JwtKeys {
    pub fn new(secret: &[u8]) -> Self {
        Self { encoding: EncodingKey::from_secret(secret), decoding: DecodingKey::from_secret(secret) }
    }

    /// A token for `user_id` under its credential generation, issued at `now` (unix
    /// seconds, from the service's clock).
    pub fn issue(&self, user_id: i64, generation: i64, now: i64) -> anyhow::Result<String> {
        let claims =
            Claims { sub: user_id.to_string(), iat: now, exp: now + LIFETIME_SECS, iss: "cairn".into(), generation };
        Ok(jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)?)
    }

    /// The claims of a valid token issued by this instance and unexpired at `now`.
    pub fn verify(&self, token: &str, now: i64) -> Option<Claims> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&["cairn"]);
        // Expiry is checked against the service's clock below, not the library's.
        validation.validate_exp = false;
        validation.set_required_spec_claims(&["exp", "iss", "sub"]);
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation).ok()?.claims;
        (claims.exp > now).then_some(claims)
    }
}

/// The server secret: `JWT_SECRET` when set, else the one kept in `DATA_DIR/jwt_secret`
/// (made on first start). JWTs are signed with it and device cookies with a key derived
/// from it.
pub(crate) fn server_secret(configured: Option<&str>, data_dir: &Path) -> anyhow::Result<String> {
    match configured {
        Some(s) => Ok(s.to_owned()),
        None => load_or_create(&data_dir.join("jwt_secret")),
    }
}

fn load_or_create(path: &Path) -> anyhow::Result<String> {
    if let Ok(s) = std::fs::read_to_string(path) {
        let s = s.trim().to_owned();
        if s.len() >= 32 {
            return Ok(s);
        }
    }
    let secret = crate::auth::secrets::random_base62(64);
    write_private(path, &secret).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(secret)
}

fn write_private(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(content.as_bytes())?;
    f.sync_all()
}
