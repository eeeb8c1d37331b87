//! A real OpenID provider for the single sign-on tests: `tests/browser/oidc-provider.mjs`
//! (the npm package oidc-provider, a certified implementation) started on loopback by the
//! test, and a person signing in through it as a browser would — following the
//! redirects, filling the provider's sign-in form — with a plain HTTP client.

use reqwest::redirect::Policy;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The provider's settings for a Cairn server, as flags.
pub const CLIENT: [&str; 4] = ["--oidc-client-id", "cairn", "--oidc-client-secret", "cairn-secret"];

pub struct Provider {
    pub issuer: String,
    _child: tokio::process::Child,
}

impl Provider {
    pub async fn start() -> Provider {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/oidc-provider.mjs");
        let mut child = tokio::process::Command::new("node")
            .arg(script)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (scripts/test installs tests/browser's packages)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the provider starts within 30 s")
            .unwrap()
            .expect("the provider prints its issuer");
        let issuer = serde_json::from_str::<Value>(&first).unwrap()["issuer"].as_str().unwrap().to_owned();
        // The rest of its output is read and dropped: a closed pipe would end the provider.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Provider { issuer, _child: child }
    }

    /// Flags that set this provider up for a Cairn server, with `extra` after them.
    pub fn flags<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut flags = vec!["--oidc-issuer", self.issuer.as_str()];
        flags.extend(CLIENT);
        flags.extend(extra);
        flags
    }

    async fn control(&self, what: &str, body: Value) {
        let res = Client::new().post(format!("{}/__test/{what}", self.issuer)).json(&body).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::NO_CONTENT);
    }

    /// The next ID token is spoiled: `signature`, `audience` or `expired`.
    pub async fn spoil(&self, how: &str) {
        self.control("spoil", json!({"how": how})).await;
    }

    /// What a login name stands for from now on (its subject, email, verification).
    pub async fn set_account(&self, login: &str, account: Value) {
        let mut body = account;
        body["login"] = json!(login);
        self.control("account", body).await;
    }
}

/// A browser of one person: cookies kept, redirects followed by hand.
pub struct Browser {
    pub client: Client,
    pub cairn: String,
}

/// Where a sign-in ended: Cairn's answer to the provider's return.
pub struct Ended {
    pub status: StatusCode,
    pub location: String,
}

impl Browser {
    pub fn new(cairn: &str) -> Browser {
        let client = Client::builder().cookie_store(true).redirect(Policy::none()).build().unwrap();
        Browser { client, cairn: cairn.to_owned() }
    }

    async fn get(&self, url: &str) -> reqwest::Response {
        self.client.get(url).send().await.unwrap()
    }

    fn location(res: &reqwest::Response, base: &str) -> String {
        let to = res.headers().get("location").unwrap_or_else(|| panic!("a redirect: {res:?}")).to_str().unwrap();
        reqwest::Url::parse(base).unwrap().join(to).unwrap().to_string()
    }

    /// Clicks "Sign in with …" (`start`'s query appended), signs in at the provider as
    /// `login`, and stops at Cairn's callback address, not yet visited.
    pub async fn to_callback(&self, query: &str) -> String {
        self.to_callback_as("ada", query).await
    }

    pub async fn to_callback_as(&self, login: &str, query: &str) -> String {
        let res = self.get(&format!("{}/api/auth/oidc/start{query}", self.cairn)).await;
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "{:?}", res.text().await);
        let mut url = Self::location(&res, &self.cairn);
        // The provider: its authorization endpoint, the sign-in form, then the way back.
        for _ in 0..10 {
            if url.starts_with(&self.cairn) {
                return url;
            }
            let res = self.get(&url).await;
            if res.status().is_redirection() {
                url = Self::location(&res, &url);
                continue;
            }
            assert_eq!(res.status(), StatusCode::OK, "{url}");
            let page = res.text().await.unwrap();
            let action = page.split("action=\"").nth(1).and_then(|s| s.split('"').next()).expect("a form");
            let form = [("prompt", "login"), ("login", login), ("password", "any password")];
            let target = reqwest::Url::parse(&url).unwrap().join(action).unwrap();
            let res = self
                .client
                .post(target)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(serde_urlencoded::to_string(form).unwrap())
                .send()
                .await
                .unwrap();
            assert!(res.status().is_redirection(), "{}", res.text().await.unwrap());
            url = Self::location(&res, &url);
        }
        panic!("the provider never sent the browser back");
    }

    /// Visits Cairn's callback address.
    pub async fn finish(&self, callback: &str) -> Ended {
        let res = self.get(callback).await;
        let status = res.status();
        let location = res.headers().get("location").map(|l| l.to_str().unwrap().to_owned()).unwrap_or_default();
        Ended { status, location }
    }

    /// Signs in as `login` from the start to Cairn's answer.
    pub async fn sign_in(&self, login: &str) -> Ended {
        let callback = self.to_callback_as(login, "").await;
        self.finish(&callback).await
    }

    /// `GET /api/me` with this browser's cookies.
    pub async fn me(&self) -> (StatusCode, Value) {
        let res = self.get(&format!("{}/api/me", self.cairn)).await;
        let status = res.status();
        (status, res.json().await.unwrap_or(Value::Null))
    }
}

impl Ended {
    /// The sign-in screen's `sso_error`, when refused.
    pub fn refusal(&self) -> Option<String> {
        let url = reqwest::Url::parse("http://x").unwrap().join(&self.location).ok()?;
        (url.path() == "/app/login")
            .then(|| url.query_pairs().find(|(k, _)| k == "sso_error").map(|(_, v)| v.into_owned()).unwrap_or_default())
    }
}
