//! The web app (`web/`, embedded in the binary by `build.rs`) served by a real server on
//! this backend, and driven in a real browser: Debian's Chromium under Playwright's test
//! runner (`tests/browser/app/*.spec.ts`; every request outside the server's origin is
//! blocked and counted, and any page error fails the spec).

use crate::common::*;
use reqwest::StatusCode;

/// Runs one Playwright configuration of tests/browser against `url`.
async fn playwright(url: &str, config: &str) {
    playwright_with(url, config, &[]).await
}

async fn playwright_with(url: &str, config: &str, env: &[(&str, &str)]) {
    let _turn = crate::common::ONE_BROWSER.lock().await;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser");
    let run = tokio::process::Command::new("node")
        .args(["node_modules/@playwright/test/cli.js", "test", "--config", config])
        .current_dir(dir)
        .env("CAIRN_URL", url)
        .envs(env.iter().copied())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(900), run)
        .await
        .expect("the browser tests ran past their 15-minute cap")
        .expect("node runs (scripts/test installs tests/browser's packages)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "browser tests failed ({config}):\n{stdout}\n{stderr}");
    // The summary: "N passed", and no "N failed" or "N skipped" line. A spec that passed
    // only on its retry ("N flaky") is printed as a warning: it is a bug to look into, but
    // a timing hiccup of a shared machine must not hide every other result.
    let summary: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| {
            let mut words = l.split(' ');
            words.next().is_some_and(|n| n.parse::<u32>().is_ok())
                && words
                    .next()
                    .is_some_and(|w| ["passed", "failed", "flaky", "skipped", "interrupted", "did"].contains(&w))
        })
        .collect();
    assert!(summary.iter().any(|l| l.contains(" passed")), "{stdout}");
    assert!(summary.iter().all(|l| l.contains(" passed") || l.contains(" flaky")), "{stdout}");
    if summary.iter().any(|l| l.contains(" flaky")) {
        eprintln!("warning: browser specs passed only on retry ({config}):\n{stdout}");
    }
}

#[tokio::test]
async fn the_app_works_in_a_browser() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    playwright(&srv.url, "playwright.config.ts").await;
    srv.stop().await;
}

/// Single sign-on as a person clicks it, through a real OpenID provider started here
/// (`tests/browser/app-sso/`): the button, the provider's form, back signed in; a refused
/// one explained on the sign-in screen, with no account made.
#[tokio::test]
async fn single_sign_on_in_a_browser() {
    let op = crate::common::oidc::Provider::start().await;
    let env = Env::new().await;
    let srv = env.start(&op.flags(&["--oidc-display-name", "Test IdP"])).await;
    playwright_with(&srv.url, "playwright.sso.config.ts", &[("CAIRN_OIDC_ISSUER", &op.issuer)]).await;
    let count = |sql: &'static str| sqlx::query_scalar::<_, i64>(sql).fetch_one(&srv.ctx.db.pool);
    assert!(count("SELECT COUNT(*) FROM users WHERE email LIKE 'sso-%'").await.unwrap() >= 1);
    assert_eq!(count("SELECT COUNT(*) FROM users WHERE email LIKE 'unverified-%'").await.unwrap(), 0);
    srv.stop().await;
}

/// The screenshots of docs/screenshots (the README shows them), taken here into a
/// temporary directory: every main screen, light and dark, is a real PNG of 1280×800.
#[tokio::test]
async fn screenshots_of_the_main_screens() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let out = tempfile::tempdir().unwrap();
    let dir = format!("{}/", out.path().display());
    playwright_with(&srv.url, "playwright.screenshots.config.ts", &[("CAIRN_SCREENSHOTS_DIR", &dir)]).await;
    srv.stop().await;
    let committed: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/screenshots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png"))
        .collect();
    assert!(committed.len() >= 12, "{committed:?}");
    for name in committed {
        let png = std::fs::read(out.path().join(&name)).unwrap_or_else(|e| panic!("{name} was not taken: {e}"));
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        // IHDR: width and height, big-endian, at bytes 16..24.
        let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        assert_eq!((size(16), size(20)), (1280, 800), "{name}");
    }
}

#[tokio::test]
async fn the_register_screen_says_when_registration_is_closed() {
    let env = Env::new().await;
    let srv = env.start(&["--disable-registration"]).await;
    playwright(&srv.url, "playwright.closed.config.ts").await;
    srv.stop().await;
}

/// `BLOCK_EXTERNAL_IMAGES=1`: the app's CSP allows images from this server only, and
/// `/api/system` says so, for the app to show a placeholder with the link instead.
#[tokio::test]
async fn external_images_can_be_blocked() {
    let env = Env::new().await;
    let srv = env.start(&["--block-external-images=1"]).await;
    let api = srv.anon();
    let index = api.send(reqwest::Method::GET, "/app/", None).await;
    let csp = index.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("img-src 'self' data: blob:;") && !csp.contains("https:"), "{csp}");
    let user = srv.user("reader@x.io").await;
    assert_eq!(user.get("/api/system").await.1["external_images"], false);
    srv.stop().await;
    let srv = env.start(&[]).await;
    let user = srv.user("reader2@x.io").await;
    assert_eq!(user.get("/api/system").await.1["external_images"], true);
    srv.stop().await;
}

/// The built files: `index.html` is revalidated on every load, hashed assets are cached
/// for a year, a missing hashed asset is a 404 (not HTML), and every page carries a CSP
/// that allows only our own scripts.
#[tokio::test]
async fn the_app_files_are_cached_by_their_hashes() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.anon();
    let index = api.send(reqwest::Method::GET, "/app/some/deep/link", None).await;
    assert_eq!(index.status, StatusCode::OK);
    assert_eq!(index.headers["cache-control"], "no-cache");
    let csp = index.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'self'") && !csp.contains("script-src"), "{csp}");
    // Images from other sites over HTTPS show by default (their hosts see the reader).
    assert!(csp.contains("img-src 'self' data: blob: https:;"), "{csp}");
    assert!(!index.text.contains("<script>"), "no inline script: {}", index.text);
    // Every asset the page names is served, typed, and cached by its hashed name.
    let assets: Vec<&str> = index.text.split('"').filter(|s| s.starts_with("/app/assets/")).collect();
    assert!(assets.iter().any(|a| a.ends_with(".js")) && assets.iter().any(|a| a.ends_with(".css")), "{assets:?}");
    for asset in assets {
        let r = api.send(reqwest::Method::GET, asset, None).await;
        assert_eq!(r.status, StatusCode::OK, "{asset}");
        assert_eq!(r.headers["cache-control"], "public, max-age=31536000, immutable", "{asset}");
        let kind = r.headers["content-type"].to_str().unwrap();
        assert!(
            kind.starts_with(if asset.ends_with(".js") { "text/javascript" } else { "text/css" }),
            "{asset}: {kind}"
        );
    }
    // First load of a page view: the scripts index.html names (the entry and what it
    // preloads; the editor, highlighter and graph load on demand) go out gzipped, and
    // stay within the budget of 150 KB compressed.
    let mut first_load_js = 0;
    for asset in index.text.split('"').filter(|s| s.starts_with("/app/assets/")) {
        let plain = api.client.get(format!("{}{asset}", srv.url)).send().await.unwrap();
        assert_eq!(plain.headers()["vary"], "accept-encoding");
        assert!(plain.headers().get("content-encoding").is_none());
        let plain = plain.bytes().await.unwrap();
        let gz =
            api.client.get(format!("{}{asset}", srv.url)).header("accept-encoding", "br, gzip").send().await.unwrap();
        // Files under 1 KiB go out as they are (build.rs: gzip would save nothing there).
        if plain.len() < 1024 {
            assert!(gz.headers().get("content-encoding").is_none(), "{asset}");
            first_load_js += if asset.ends_with(".js") { plain.len() } else { 0 };
            continue;
        }
        assert_eq!(gz.headers()["content-encoding"], "gzip", "{asset}");
        let gz = gz.bytes().await.unwrap();
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut unzipped).unwrap();
        assert_eq!(unzipped, plain, "{asset}");
        if asset.ends_with(".js") {
            first_load_js += gz.len();
        }
    }
    eprintln!("first load: {first_load_js} bytes of gzipped JavaScript");
    assert!(first_load_js <= 150_000, "{first_load_js} bytes of JavaScript on first load");
    let refused =
        api.client.get(format!("{}/app/", srv.url)).header("accept-encoding", "gzip;q=0").send().await.unwrap();
    assert!(refused.headers().get("content-encoding").is_none());
    let missing = api.send(reqwest::Method::GET, "/app/assets/index-00000000.js", None).await;
    assert_problem(&missing, 404, "route_not_found");
    let icon = api.send(reqwest::Method::GET, "/app/favicon.svg", None).await;
    assert_eq!(icon.status, StatusCode::OK);
    assert!(icon.headers["content-type"].to_str().unwrap().starts_with("image/svg+xml"));
    srv.stop().await;
}
