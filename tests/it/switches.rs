//! On/off settings as docs/operations.md spells them (`DISABLE_REGISTRATION=1`), given
//! to the real binary through its environment, each checked by its effect.

use crate::common::process::*;
use crate::common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

const SWITCHES: [&str; 7] = [
    "DISABLE_REGISTRATION",
    "SEMANTIC_SEARCH",
    "RERANK",
    "OCR_UPLOADS",
    "COOKIE_SECURE",
    "TRUST_PROXY",
    "WEBHOOK_ALLOW_PRIVATE",
];

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn register(url: &str, email: &str) -> reqwest::Response {
    client()
        .post(format!("{url}/api/auth/register"))
        .json(&json!({"email": email, "password": PASSWORD}))
        .send()
        .await
        .unwrap()
}

async fn login_from(url: &str, email: &str, password: &str, forwarded_for: &str) -> StatusCode {
    client()
        .post(format!("{url}/api/auth/login"))
        .header("x-forwarded-for", forwarded_for)
        .json(&json!({"email": email, "password": password}))
        .send()
        .await
        .unwrap()
        .status()
}

async fn system(url: &str, token: &str) -> Value {
    let r = client().get(format!("{url}/api/system")).bearer_auth(token).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.unwrap()
}

/// A session cookie turned into a JWT, so later requests need no cookie jar.
async fn jwt(url: &str, set_cookie: &str) -> String {
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let r = client().post(format!("{url}/api/token")).header("cookie", cookie).send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    body["access_token"].as_str().unwrap().to_owned()
}

/// Every switch but `DISABLE_REGISTRATION` set to `1` at once, each seen doing its work.
#[tokio::test]
async fn every_switch_set_to_1_takes_effect() {
    let env = Env::new().await;
    let on: Vec<(&str, &str)> = SWITCHES[1..].iter().map(|s| (*s, "1")).chain([("LOGIN_MAX_FAILURES", "1")]).collect();
    let p = Proc::start(env.dir.path(), &env.db_url, &on);
    let url = p.url();

    // COOKIE_SECURE=1: the session cookie is Secure.
    let r = register(&url, "ann@x.io").await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("; Secure"), "{cookie}");

    // SEMANTIC_SEARCH=1, RERANK=1: requested, reported, and (with no model here) said to
    // be unresolved. OCR_UPLOADS=1: on, with the Tesseract CI installs (its absence is
    // tests/it/uploads.rs's). WEBHOOK_ALLOW_PRIVATE=1 reported.
    let report = system(&url, &jwt(&url, &cookie).await).await;
    let notes = report["notes"].to_string();
    for name in ["SEMANTIC_SEARCH=1", "RERANK=1"] {
        assert!(notes.contains(name), "{name} not in {notes}");
    }
    assert_eq!(report["ocr_uploads"], true, "{report}");
    assert_eq!(report["webhook_allow_private"], true, "{report}");
    assert_eq!(report["registration_open"], true, "{report}");

    // TRUST_PROXY=1: the limiter counts the X-Forwarded-For address, so one address's
    // failure does not lock out another (both come from the same peer here).
    assert_eq!(login_from(&url, "ann@x.io", "wrong password", "203.0.113.7").await, StatusCode::UNAUTHORIZED);
    assert_eq!(login_from(&url, "ann@x.io", PASSWORD, "203.0.113.7").await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(login_from(&url, "ann@x.io", PASSWORD, "198.51.100.9").await, StatusCode::OK);
    assert_eq!(p.terminate(), 0);
}

/// `DISABLE_REGISTRATION` in each accepted spelling; the "off" spellings leave it open.
#[tokio::test]
async fn disable_registration_in_every_spelling() {
    let env = Env::new().await;
    let cases = [
        ("1", true),
        ("true", true),
        ("TRUE", true),
        ("yes", true),
        ("On", true),
        ("0", false),
        ("false", false),
        ("No", false),
        ("off", false),
        ("", false),
    ];
    for (i, (value, closed)) in cases.into_iter().enumerate() {
        let p = Proc::start(env.dir.path(), &env.db_url, &[("DISABLE_REGISTRATION", value)]);
        let r = register(&p.url(), &format!("u{i}@x.io")).await;
        if closed {
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "DISABLE_REGISTRATION={value:?}");
            let body: Value = r.json().await.unwrap();
            assert_eq!(body["code"], "registration_closed");
        } else {
            assert_eq!(r.status(), StatusCode::CREATED, "DISABLE_REGISTRATION={value:?}");
        }
        assert_eq!(p.terminate(), 0);
    }
}

/// The "off" spellings really are off: no notes, no Secure cookie, no private targets.
#[tokio::test]
async fn switches_set_to_0_are_off() {
    let env = Env::new().await;
    let off: Vec<(&str, &str)> =
        SWITCHES.iter().zip(["0", "false", "no", "off", "", "0", "OFF"]).map(|(s, v)| (*s, v)).collect();
    let p = Proc::start(env.dir.path(), &env.db_url, &off);
    let url = p.url();
    let r = register(&url, "bo@x.io").await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(!cookie.contains("Secure"), "{cookie}");
    let report = system(&url, &jwt(&url, &cookie).await).await;
    assert_eq!(report["notes"], json!([]), "{report}");
    assert_eq!(report["webhook_allow_private"], false);
    assert_eq!(report["registration_open"], true);
    assert_eq!(p.terminate(), 0);
}

/// Any other value stops start-up with one line naming the setting.
#[test]
fn a_bad_switch_value_stops_start_up() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let logs = tmp.path().join("logs");
    for name in SWITCHES {
        for bad in ["maybe", "2", "enable"] {
            let vars = [("DATA_DIR", data.to_str().unwrap()), ("LOG_DIR", logs.to_str().unwrap()), (name, bad)];
            let (code, _, stderr) = run_to_end(&vars, &[]);
            assert_eq!(code, 2, "{name}={bad}: {stderr}");
            let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            assert_eq!(lines.len(), 1, "{name}={bad}: {stderr}");
            assert!(lines[0].contains(name), "{name} not named in: {}", lines[0]);
        }
    }
}
