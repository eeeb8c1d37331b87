//! Uploads end to end: sniffed types, limits enforced while streaming, private serving,
//! path tricks, export, and OCR with the real Tesseract.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::common::{Api, BOUNDARY, Env, PNG, assert_problem, process::Proc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

async fn fetch(
    api: &Api,
    path: &str,
    if_none_match: Option<&str>,
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = api.client.get(format!("{}{path}", api.base));
    if let Some(b) = &api.bearer {
        req = req.bearer_auth(b);
    }
    if let Some(tag) = if_none_match {
        req = req.header("if-none-match", tag);
    }
    let res = req.send().await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    (status, headers, res.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn images_are_sniffed_kept_by_content_and_served_privately() {
    let env = Env::new().await;
    let server = env.start(&[]).await;
    let owner = server.user("owner@example.com").await;
    let stranger = server.user("stranger@example.com").await;

    // The client's claim is ignored: a PNG sent as text/plain is a PNG.
    let r = owner.upload("/api/uploads", PNG, "text/plain").await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let up = r.json();
    let hash = hex::encode(Sha256::digest(PNG));
    assert_eq!(up["name"], format!("{hash}.png"));
    assert_eq!(up["url"], format!("/uploads/{hash}.png"));
    assert_eq!(up["content_type"], "image/png");
    assert_eq!(up["size"], PNG.len());
    // The same bytes again: the same name, one file.
    let again = owner.upload("/api/uploads?ws=owner", PNG, "image/png").await;
    assert_eq!(again.json()["name"], up["name"]);
    let stored = env.data_dir().join("uploads/owner").join(format!("{hash}.png"));
    assert_eq!(std::fs::read(&stored).unwrap(), PNG);

    let url = up["url"].as_str().unwrap();
    let (s, h, body) = fetch(&owner, url, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(body, PNG);
    assert_eq!(h["content-type"], "image/png");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["cache-control"], "private");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("sandbox"), "{csp}");
    let etag = h["etag"].to_str().unwrap().to_owned();
    assert_eq!(etag, format!("\"{hash}\""));
    let (s, h, body) = fetch(&owner, url, Some(&etag)).await;
    assert_eq!(s, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
    assert_eq!(h["etag"], etag.as_str());

    // A token works as well as the session; no credential is 401; a stranger sees nothing.
    let token = owner.pat().await;
    assert_eq!(fetch(&owner.with_bearer(&token), url, None).await.0, StatusCode::OK);
    let (s, h, _) = fetch(&server.anon(), url, None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert!(h.contains_key("www-authenticate"));
    assert_eq!(fetch(&stranger, url, None).await.0, StatusCode::NOT_FOUND);
    assert_problem(&stranger.upload("/api/uploads?ws=owner", PNG, "image/png").await, 404, "workspace_not_found");
    assert_problem(&server.anon().upload("/api/uploads", PNG, "image/png").await, 401, "unauthorized");
    // Membership grants it.
    let (s, _) = owner.post("/api/workspaces/owner/members", json!({"email": "stranger@example.com"})).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(fetch(&stranger, url, None).await.0, StatusCode::OK);

    // Path tricks find nothing.
    std::fs::write(env.data_dir().join("secret.txt"), "top secret").unwrap();
    for trick in [
        "/uploads/..%2Fsecret.txt",
        "/uploads/..%2F..%2Fdata%2Fsecret.txt",
        "/uploads/%2e%2e%2fsecret.txt",
        &format!("/uploads/{hash}.png%00"),
        &format!("/uploads/{hash}.png%00.png"),
        "/uploads/%2Fetc%2Fpasswd",
        &format!("/uploads/owner%2F{hash}.png"),
        &format!("/uploads/{}.png", hash.to_uppercase()),
        &format!("/uploads/{hash}.svg"),
        "/uploads/.tmp",
    ] {
        let (s, _, body) = fetch(&owner, trick, None).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{trick}");
        assert!(!String::from_utf8_lossy(&body).contains("top secret"));
    }
    server.stop().await;
}

#[tokio::test]
async fn only_images_pass_and_an_svg_is_kept_sanitized() {
    let env = Env::new().await;
    let server = env.start(&[]).await;
    let api = server.user("owner@example.com").await;
    let jpeg: &[u8] = b"\xff\xd8\xff\xe0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0\xff\xd9";
    let gif: &[u8] =
        b"GIF89a\x01\0\x01\0\x80\0\0\0\0\0\xff\xff\xff!\xf9\x04\x01\0\0\0\0,\0\0\0\0\x01\0\x01\0\0\x02\x02D\x01\0;";
    let webp: &[u8] = b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0/\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0";
    let avif: &[u8] = b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miafMA1B\0\0\0\0";
    for (bytes, mime, ext) in [
        (jpeg, "image/jpeg", "jpg"),
        (gif, "image/gif", "gif"),
        (webp, "image/webp", "webp"),
        (avif, "image/avif", "avif"),
    ] {
        let r = api.upload("/api/uploads", bytes, "application/octet-stream").await;
        assert_eq!(r.status, StatusCode::CREATED, "{mime}: {}", r.text);
        assert_eq!(r.json()["content_type"], mime);
        assert!(r.json()["name"].as_str().unwrap().ends_with(&format!(".{ext}")));
        let (_, h, body) = fetch(&api, r.json()["url"].as_str().unwrap(), None).await;
        assert_eq!(h["content-type"], mime);
        assert_eq!(body, bytes);
    }
    // An SVG is kept, but only as its sanitized form, under that form's hash.
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(1)</script><circle r="4" fill="teal"/></svg>"#;
    for claimed in ["image/svg+xml", "image/png"] {
        let r = api.upload("/api/uploads", svg, claimed).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        assert_eq!(r.json()["content_type"], "image/svg+xml");
        let (_, h, body) = fetch(&api, r.json()["url"].as_str().unwrap(), None).await;
        let kept = String::from_utf8(body.clone()).unwrap();
        assert!(!kept.contains("alert") && !kept.contains("onload") && kept.contains("teal"), "{kept}");
        assert_eq!(h["content-type"], "image/svg+xml");
        assert!(h["content-security-policy"].to_str().unwrap().contains("sandbox"));
        let name = format!("{}.svg", hex::encode(Sha256::digest(&body)));
        assert_eq!(r.json()["name"], name);
    }
    for (bytes, claimed) in [
        (b"<svg><not-closed></svg>".as_slice(), "image/svg+xml"),
        (b"<?xml version=\"1.0\"?><html><script>alert(1)</script></html>".as_slice(), "image/svg+xml"),
        (b"<html><script>alert(1)</script></html>".as_slice(), "image/png"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".as_slice(), "image/png"),
        (b"just text".as_slice(), "image/jpeg"),
        (b"".as_slice(), "image/png"),
    ] {
        assert_problem(&api.upload("/api/uploads", bytes, claimed).await, 415, "upload_type_refused");
    }
    // Not multipart, or no `file` part: the body has the wrong shape.
    let r = api.send(Method::POST, "/api/uploads", Some(json!({"file": "x"}))).await;
    assert_problem(&r, 422, "invalid_body");
    let no_file =
        format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--{BOUNDARY}--\r\n");
    let res = api
        .client
        .post(format!("{}/api/uploads", api.base))
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
        .body(no_file)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    // Nothing refused was kept, not even a temporary file.
    let tmp = env.data_dir().join("uploads/.tmp");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    server.stop().await;
}

#[tokio::test]
async fn the_size_limit_holds_at_the_boundary() {
    let env = Env::new().await;
    let server = env.start(&["--upload-max-bytes", "1000"]).await;
    let api = server.user("owner@example.com").await;
    let mut exact = PNG.to_vec();
    exact.resize(1000, 0);
    let r = api.upload("/api/uploads", &exact, "image/png").await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let mut over = exact.clone();
    over.push(0);
    assert_problem(&api.upload("/api/uploads", &over, "image/png").await, 413, "upload_too_large");
    // A declared length far past the limit is refused before the body is read.
    let big = vec![0u8; 200_000];
    assert_problem(&api.upload("/api/uploads", &big, "image/png").await, 413, "upload_too_large");
    assert_eq!(std::fs::read_dir(env.data_dir().join("uploads/.tmp")).unwrap().count(), 0);
    server.stop().await;
}

/// Peak resident memory of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Sends a chunked multipart upload of `size` bytes (a PNG head, then zeros) over a raw
/// connection, without a Content-Length; answers the status line the server sent.
fn stream_upload(port: u16, cookie: &str, size: usize) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "POST /api/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nCookie: {cookie}\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut chunk = |data: &[u8]| -> bool {
        let mut out = format!("{:x}\r\n", data.len()).into_bytes();
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
        s.write_all(&out).is_ok()
    };
    let part = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.png\"\r\nContent-Type: image/png\r\n\r\n"
    );
    chunk(part.as_bytes());
    chunk(PNG);
    let zeros = vec![0u8; 64 * 1024];
    let mut sent = PNG.len();
    // The server may answer and close early: stop writing when it does.
    let mut open = true;
    while sent < size && open {
        let n = zeros.len().min(size - sent);
        open = chunk(&zeros[..n]);
        sent += n;
    }
    if open && chunk(format!("\r\n--{BOUNDARY}--\r\n").as_bytes()) {
        let _ = s.write_all(b"0\r\n\r\n");
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_body_ten_times_the_limit_is_refused_while_streaming_with_flat_memory() {
    let env = Env::new().await;
    let limit: usize = 4 * 1024 * 1024;
    let limit_s = limit.to_string();
    let vars = [("UPLOAD_MAX_BYTES", limit_s.as_str()), ("ARGON2_MEMORY_KIB", "64"), ("ARGON2_ITERATIONS", "1")];
    let proc = Proc::start(env.dir.path(), &env.db_url, &vars);
    let client = reqwest::Client::new();
    let res = client
        .post(format!("{}/api/auth/register", proc.url()))
        .json(&json!({"email": "o@example.com", "password": crate::common::PASSWORD, "name": "O"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let cookie = res.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let port = proc.port;
    // Warm up: one upload just under the limit, so allocators and pools are in use.
    let status = tokio::task::spawn_blocking({
        let cookie = cookie.clone();
        move || stream_upload(port, &cookie, limit - 64 * 1024)
    })
    .await
    .unwrap();
    assert!(status.contains("201"), "{status}");
    let before = peak_rss_kib(proc.child.id());
    let status = tokio::task::spawn_blocking(move || stream_upload(port, &cookie, 10 * limit)).await.unwrap();
    assert!(status.contains("413"), "{status}");
    let after = peak_rss_kib(proc.child.id());
    eprintln!("peak RSS {before} KiB -> {after} KiB");
    // Buffering the body would have taken 40 MiB; streaming takes a few chunks.
    assert!(after.saturating_sub(before) < 8 * 1024, "peak RSS grew from {before} KiB to {after} KiB");
    let tmp = env.data_dir().join("uploads/.tmp");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "the refused upload's temporary file is gone");
}

#[tokio::test]
async fn an_embedded_upload_is_in_the_export() {
    let env = Env::new().await;
    let server = env.start(&[]).await;
    let api = server.user("owner@example.com").await;
    let up = api.upload("/api/uploads", PNG, "image/png").await.json();
    let name = up["name"].as_str().unwrap();
    api.page("pic", &format!("# Pic\n\n![a dot](/uploads/{name})\n")).await;
    let under = json!({"slug": "under", "parent": "pic", "content": format!("![x](/uploads/{name}) [file](/uploads/{name})\n")});
    assert_eq!(api.post("/api/pages", under).await.0, StatusCode::CREATED);
    let res = api.client.get(format!("{}/api/workspaces/owner/export", api.base)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let bytes = res.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut image = Vec::new();
    zip.by_name(&format!("uploads/{name}")).unwrap().read_to_end(&mut image).unwrap();
    assert_eq!(image, PNG);
    // Linked relative to each page's file, so the zip opens as it is in other tools.
    let text = |zip: &mut zip::ZipArchive<_>, path: &str| {
        let mut s = String::new();
        zip.by_name(path).unwrap().read_to_string(&mut s).unwrap();
        s
    };
    assert_eq!(text(&mut zip, "pic.md"), format!("# Pic\n\n![a dot](uploads/{name})\n"));
    assert_eq!(text(&mut zip, "pic/under.md"), format!("![x](../uploads/{name}) [file](../uploads/{name})\n"));
    server.stop().await;
}

/// A deleted workspace takes all its uploads aside — also when it never had a page — and
/// the next workspace given its slug cannot export them by naming their file.
#[tokio::test]
async fn a_deleted_workspace_leaves_no_upload_to_the_next_owner_of_its_slug() {
    let env = Env::new().await;
    let server = env.start(&[]).await;
    let first = server.user("first@example.com").await;
    first.post("/api/workspaces", json!({"name": "Team"})).await;
    let up = first.upload("/api/uploads?ws=team", PNG, "image/png").await.json();
    let name = up["name"].as_str().unwrap().to_owned();
    let folder = env.data_dir().join("uploads/team");
    assert!(folder.join(&name).exists());
    assert_eq!(first.delete("/api/workspaces/team").await.0, StatusCode::NO_CONTENT);
    assert!(!folder.exists(), "the workspace's uploads went aside with it");
    let aside: Vec<String> = std::fs::read_dir(env.data_dir().join("deleted"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(aside.iter().any(|n| n.starts_with("team-") && n.ends_with("-uploads")), "{aside:?}");

    // Someone else takes the slug and names the old file: nothing of it comes out.
    let second = server.user("second@example.com").await;
    second.post("/api/workspaces", json!({"name": "Team"})).await;
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(&name), PNG).unwrap(); // as an older release would have left it
    let (s, _) =
        second.post("/api/pages?ws=team", json!({"slug": "pic", "content": format!("![x](/uploads/{name})")})).await;
    assert_eq!(s, StatusCode::CREATED);
    let res = second.client.get(format!("{}/api/workspaces/team/export", second.base)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let bytes = res.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    assert!(zip.by_name("pic.md").is_ok());
    assert!(zip.by_name(&format!("uploads/{name}")).is_err(), "not this workspace's upload");
    server.stop().await;
}

/// Renders `text` into a PNG with Pillow (the interop venv), as the OCR test's image.
fn render(text: &str) -> Vec<u8> {
    let py = std::env::var("CAIRN_TEST_PYTHON")
        .expect("CAIRN_TEST_PYTHON names the interop venv's python (scripts/test sets it)");
    let out = tempfile::NamedTempFile::with_suffix(".png").unwrap();
    let script = format!("{}/tests/interop/python/render_text.py", env!("CARGO_MANIFEST_DIR"));
    let status = std::process::Command::new(py).arg(script).arg(text).arg(out.path()).status().unwrap();
    assert!(status.success());
    std::fs::read(out.path()).unwrap()
}

#[tokio::test]
async fn text_in_an_uploaded_image_is_found_by_search() {
    let env = Env::new().await;
    let server = env.start(&["--ocr-uploads=1"]).await;
    let api = server.user("owner@example.com").await;
    let (_, system) = api.get("/api/system").await;
    assert_eq!(system["ocr_uploads"], true, "CI installs tesseract-ocr: {system}");

    let image = render("Quarterly zebra migration");
    let up = api.upload("/api/uploads", &image, "image/png").await;
    assert_eq!(up.status, StatusCode::CREATED, "{}", up.text);
    let name = up.json()["name"].as_str().unwrap().to_owned();
    // One page embeds the image before its text is read, one after: both are found.
    api.page("early", &format!("# Early\n\n![chart](/uploads/{name})\n")).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let found = loop {
        let (s, res) = api.get("/api/search?q=zebra&mode=keyword").await;
        assert_eq!(s, StatusCode::OK, "{res}");
        if res["total"] == 1 {
            break res;
        }
        assert!(Instant::now() < deadline, "the image's text never became searchable: {res}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(found["items"][0]["slug"], "early");
    api.page("late", &format!("# Late\n\n![same](/uploads/{name})\n")).await;
    let (_, res) = api.get("/api/search?q=migration&mode=keyword").await;
    let slugs: Vec<&str> = res["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs.len(), 2, "{res}");
    server.stop().await;
}

#[tokio::test]
async fn ocr_asked_for_without_an_engine_says_so() {
    let env = Env::new().await;
    // A PATH where no tesseract lives.
    let empty = tempfile::tempdir().unwrap();
    let mut cmd_env = vec![("OCR_UPLOADS", "1"), ("ARGON2_MEMORY_KIB", "64"), ("ARGON2_ITERATIONS", "1")];
    let path = empty.path().to_str().unwrap().to_owned();
    cmd_env.push(("PATH", path.as_str()));
    let proc = Proc::start(env.dir.path(), &env.db_url, &cmd_env);
    let api = crate::common::process::register(&proc.url(), "o@example.com").await;
    let (_, system): (StatusCode, Value) = api.get("/api/system").await;
    assert_eq!(system["ocr_uploads"], false, "{system}");
    assert!(system["notes"].to_string().contains("tesseract"), "{system}");
    // Uploads still work.
    assert_eq!(api.upload("/api/uploads", PNG, "image/png").await.status, StatusCode::CREATED);
}
