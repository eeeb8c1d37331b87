//! The few API calls every run makes outside its measured loops: the bench account and
//! its token, a workspace, and authenticated JSON reads.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use reqwest::Client;
use serde_json::{Value, json};

/// Registers the bench account (one argon2 hash) and trades its session for a token.
pub async fn sign_up(base: &str) -> Result<String> {
    let c = reqwest::Client::builder().timeout(Duration::from_secs(30)).build()?;
    let r = c
        .post(format!("{base}/api/auth/register"))
        .json(&json!({"email": "bench@example.com", "password": "bench-password-1234"}))
        .send()
        .await?;
    if r.status().as_u16() != 201 {
        bail!("register answered {}: {}", r.status(), r.text().await.unwrap_or_default());
    }
    let cookie = r
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .collect::<Vec<_>>()
        .join("; ");
    if cookie.is_empty() {
        bail!("register set no cookie");
    }
    let r = c
        .post(format!("{base}/api/tokens"))
        .header(reqwest::header::COOKIE, cookie)
        .json(&json!({"name": "bench"}))
        .send()
        .await?;
    if r.status().as_u16() != 201 {
        bail!("POST /api/tokens answered {}: {}", r.status(), r.text().await.unwrap_or_default());
    }
    let v: serde_json::Value = r.json().await?;
    v["token"].as_str().map(str::to_owned).context("no token in the answer of POST /api/tokens")
}

/// Creates a workspace owned by the bench account; `client` sends the token.
pub async fn create_workspace(client: &Client, base: &str, name: &str, slug: &str) -> Result<()> {
    let r = client.post(format!("{base}/api/workspaces")).json(&json!({"name": name, "slug": slug})).send().await?;
    if r.status().as_u16() != 201 {
        bail!("POST /api/workspaces answered {}: {}", r.status(), r.text().await.unwrap_or_default());
    }
    Ok(())
}

/// `GET base+path` as JSON; an error for any status but 2xx.
pub async fn get_json(client: &Client, base: &str, path: &str) -> Result<Value> {
    let r = client.get(format!("{base}{path}")).send().await.with_context(|| format!("GET {path}"))?;
    let status = r.status();
    let body = r.text().await?;
    if !status.is_success() {
        bail!("GET {path} answered {status}: {}", body.trim());
    }
    serde_json::from_str(&body).with_context(|| format!("GET {path}: not JSON"))
}
