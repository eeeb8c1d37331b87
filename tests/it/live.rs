//! Co-editing sessions (`GET /api/pages/{slug}/live`) driven as a Yjs client would drive
//! them: a WebSocket speaking the sync and awareness protocols, with a document of its
//! own (yrs) that it types into.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::json;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message as Frame};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};
use yrs::encoding::read::Cursor;
use yrs::sync::{Message, MessageReader, SyncMessage};
use yrs::updates::decoder::{Decode, DecoderV1};
use yrs::updates::encoder::Encode;
use yrs::{Doc, GetString, ReadTxn, StateVector, Text, Transact, Update};

use crate::common::process::*;
use crate::common::*;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One person's editor: a Yjs document kept in step with the session.
struct Peer {
    doc: Doc,
    ws: Socket,
}

/// The session's address; `query` is `""` or `?ws=…`.
fn live_url(base: &str, slug: &str, query: &str) -> String {
    format!("{}/api/pages/{slug}/live{query}", base.replacen("http", "ws", 1))
}

impl Peer {
    /// Joins `slug`'s session with a bearer token, and syncs.
    async fn join(base: &str, token: &str, slug: &str, query: &str) -> Peer {
        Peer::join_with(base, token, slug, query, Doc::new()).await
    }

    /// Joins with a document kept from before (a browser's copy): the sync sends what
    /// the server lacks of it.
    async fn join_with(base: &str, token: &str, slug: &str, query: &str, doc: Doc) -> Peer {
        let mut req = live_url(base, slug, query).into_client_request().unwrap();
        req.headers_mut().insert("authorization", HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
        let (ws, _) = connect_async(req).await.expect("the upgrade is accepted");
        let mut peer = Peer { doc, ws };
        peer.doc.get_or_insert_text("markdown");
        peer.sync().await;
        peer
    }

    fn text(&self) -> String {
        let text = self.doc.get_or_insert_text("markdown");
        text.get_string(&self.doc.transact())
    }

    async fn send(&mut self, message: Message) {
        self.ws.send(Frame::Binary(message.encode_v1().into())).await.unwrap();
    }

    /// Sends what the document holds past `sv` (a deletion is sent whole: the state vector
    /// does not tell it).
    async fn send_since(&mut self, sv: &StateVector) {
        let update = self.doc.transact().encode_state_as_update_v1(sv);
        self.send(Message::Sync(SyncMessage::Update(update))).await;
    }

    /// Types `s` at byte `at` and sends the update.
    async fn type_at(&mut self, at: u32, s: &str) {
        let text = self.doc.get_or_insert_text("markdown");
        let before = self.doc.transact().state_vector();
        text.insert(&mut self.doc.transact_mut(), at, s);
        let update = self.doc.transact().encode_state_as_update_v1(&before);
        self.send(Message::Sync(SyncMessage::Update(update))).await;
    }

    /// Applies what a frame carries; answers whether it held a `SyncStep2`.
    fn apply(&mut self, frame: &[u8]) -> bool {
        let mut decoder = DecoderV1::new(Cursor::new(frame));
        let mut step2 = false;
        for message in MessageReader::new(&mut decoder) {
            match message.unwrap() {
                Message::Sync(SyncMessage::SyncStep2(u)) => {
                    self.doc.transact_mut().apply_update(Update::decode_v1(&u).unwrap()).unwrap();
                    step2 = true;
                }
                Message::Sync(SyncMessage::Update(u)) => {
                    self.doc.transact_mut().apply_update(Update::decode_v1(&u).unwrap()).unwrap()
                }
                _ => {}
            }
        }
        step2
    }

    /// Sends what the server lacks and asks for what it has (`SyncStep1`); returns once
    /// the answer (`SyncStep2`) arrived: everything sent before is stored.
    async fn sync(&mut self) {
        let sv = self.doc.transact().state_vector();
        self.send(Message::Sync(SyncMessage::SyncStep1(sv))).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let frame = tokio::time::timeout_at(deadline.into(), self.ws.next()).await.expect("a SyncStep2 in time");
            match frame {
                Some(Ok(Frame::Binary(bytes))) => {
                    // The server's own SyncStep1 (its first frame) asks for what it lacks.
                    let mut decoder = DecoderV1::new(Cursor::new(&bytes));
                    let asks: Vec<StateVector> = MessageReader::new(&mut decoder)
                        .filter_map(|m| match m {
                            Ok(Message::Sync(SyncMessage::SyncStep1(sv))) => Some(sv),
                            _ => None,
                        })
                        .collect();
                    for sv in asks {
                        let update = self.doc.transact().encode_state_as_update_v1(&sv);
                        self.send(Message::Sync(SyncMessage::SyncStep2(update))).await;
                    }
                    if self.apply(&bytes) {
                        return;
                    }
                }
                other => panic!("the session ended: {other:?}"),
            }
        }
    }

    /// Reads frames until the connection is closed; answers the close code.
    async fn closed(&mut self) -> Option<CloseCode> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match tokio::time::timeout_at(deadline.into(), self.ws.next()).await.expect("closed in time") {
                Some(Ok(Frame::Close(frame))) => return frame.map(|f| f.code),
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return None,
            }
        }
    }
}

/// Waits until the page's stored content is `want`.
async fn saved(api: &Api, slug: &str, want: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (s, page) = api.get(&format!("/api/pages/{slug}")).await;
        assert_eq!(s, StatusCode::OK, "{page}");
        if page["content"] == want {
            return page;
        }
        assert!(Instant::now() < deadline, "not saved: {page} (want {want:?})");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Ann, and Bob a member of her workspace: (ann, bob, the workspace, bob's membership).
async fn ann_and_bob(srv: &Server) -> (Api, Api, String, serde_json::Value) {
    let ann = srv.user("ann@x.io").await;
    let bob = srv.user("bob@x.io").await;
    let (_, me) = ann.get("/api/me").await;
    let ws = me["default_workspace"].as_str().unwrap().to_owned();
    let (s, member) = ann.post(&format!("/api/workspaces/{ws}/members"), json!({"email": "bob@x.io"})).await;
    assert!(s.is_success(), "{member}");
    (ann, bob, ws, member)
}

#[tokio::test]
async fn two_people_type_into_one_text_that_becomes_a_revision_of_both() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let (ann, bob, ws, _) = ann_and_bob(&srv).await;
    let page = ann.page("runbook", "# Runbook\n").await;
    let (ann_token, bob_token) = (ann.pat().await, bob.pat().await);

    let mut a = Peer::join(&srv.url, &ann_token, "runbook", "").await;
    let mut b = Peer::join(&srv.url, &bob_token, "runbook", &format!("?ws={ws}")).await;
    assert_eq!((a.text(), b.text()), ("# Runbook\n".to_owned(), "# Runbook\n".to_owned()));
    // Both type at the same spot at the same time.
    a.type_at(10, "Restart it.\n").await;
    b.type_at(10, "Check the logs.\n").await;
    a.sync().await;
    b.sync().await;
    a.sync().await;
    assert_eq!(a.text(), b.text(), "one text for both");
    let text = a.text();
    assert!(text.contains("Restart it.\n") && text.contains("Check the logs.\n"), "{text:?}");

    // Editing pauses: the text becomes a revision, through the core (history, links, search).
    let after = saved(&ann, "runbook", &text).await;
    assert_ne!(after["revision"], page["revision"]);
    let (_, history) = ann.get("/api/pages/runbook/history").await;
    assert_eq!(history["items"].as_array().unwrap().len(), 2, "{history}");
    // The revision is the last editor's, and names the other in a trailer.
    let repo = srv.ctx.workspace_dir(&ws);
    let message = git(&repo, &["show", "-s", "--format=%B", after["revision"].as_str().unwrap()]);
    let other = if after["updated_by"]["name"] == "ann@x.io" { "bob@x.io" } else { "ann@x.io" };
    assert!(message.contains(&format!("\nCo-authored-by: {other} <{other}>\n")), "{message}");
    assert_eq!(message.matches("Co-authored-by:").count(), 1, "{message}");
    // More typing, then everyone leaves: the last text is saved, the session ends.
    b.type_at(0, "> live\n").await;
    b.sync().await;
    drop(a);
    drop(b);
    let want = format!("> live\n{text}");
    let last = saved(&ann, "runbook", &want).await;
    // Only Bob edited since: his revision, with no one else named.
    assert_eq!(last["updated_by"]["name"], "bob@x.io");
    let message = git(&repo, &["show", "-s", "--format=%B", last["revision"].as_str().unwrap()]);
    assert!(!message.contains("Co-authored-by:"), "{message}");
    assert_fsck(&srv.ctx.workspace_dir(&ws));
    srv.stop().await;
}

#[tokio::test]
async fn a_save_through_the_api_comes_into_the_session_and_keeps_everyones_typing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let (ann, bob, ws, _) = ann_and_bob(&srv).await;
    ann.page("runbook", "# Runbook\n\nStep one.\n").await;
    let mut a = Peer::join(&srv.url, &ann.pat().await, "runbook", "").await;
    let mut b = Peer::join(&srv.url, &bob.pat().await, "runbook", &format!("?ws={ws}")).await;
    // Ann types; before it is saved, an API client saves a whole new text.
    a.type_at(0, "> draft\n").await;
    a.sync().await;
    let (s, put) = ann.put("/api/pages/runbook", json!({"content": "# Runbook\n\nStep one.\nStep two.\n"})).await;
    assert_eq!(s, StatusCode::OK, "{put}");
    // The API's change appears in both editors at once — well before the session's own
    // save, which waits for a 3 s pause — and Ann's typing stays.
    let want = "> draft\n# Runbook\n\nStep one.\nStep two.\n";
    let deadline = Instant::now() + Duration::from_secs(2);
    while b.text() != want || a.text() != want {
        assert!(Instant::now() < deadline, "{:?} / {:?}", a.text(), b.text());
        tokio::time::sleep(Duration::from_millis(50)).await;
        a.sync().await;
        b.sync().await;
    }
    drop(a);
    drop(b);
    saved(&ann, "runbook", want).await;
    srv.stop().await;
}

#[tokio::test]
async fn a_copy_edited_offline_merges_into_a_later_session_exactly() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ann = srv.user("ann@x.io").await;
    ann.page("runbook", "# Runbook\n\nStep one.\n").await;
    let token = ann.pat().await;
    // Ann edits, and her session ends (her text saved) while she keeps her copy.
    let mut a = Peer::join(&srv.url, &token, "runbook", "").await;
    a.type_at(10, "Intro.\n").await;
    a.sync().await;
    let Peer { doc, ws } = a;
    drop(ws);
    saved(&ann, "runbook", "# Runbook\nIntro.\n\nStep one.\n").await;
    // Another door saves the page while nobody edits it; Ann types offline meanwhile.
    let (s, put) =
        ann.put("/api/pages/runbook", json!({"content": "# Runbook\nIntro.\n\nStep one.\nStep two.\n"})).await;
    assert_eq!(s, StatusCode::OK, "{put}");
    doc.get_or_insert_text("markdown").insert(&mut doc.transact_mut(), 0, "> offline\n");
    // Her copy comes back to a new session: both changes, each once (not the text twice).
    let mut back = Peer::join_with(&srv.url, &token, "runbook", "", doc).await;
    back.sync().await;
    let want = "> offline\n# Runbook\nIntro.\n\nStep one.\nStep two.\n";
    assert_eq!(back.text(), want);
    drop(back);
    saved(&ann, "runbook", want).await;
    srv.stop().await;
}

#[tokio::test]
async fn a_page_deleted_during_a_session_closes_it_and_its_text_comes_back_with_the_page() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ann = srv.user("ann@x.io").await;
    ann.page("runbook", "# Runbook\n").await;
    let token = ann.pat().await;
    let mut a = Peer::join(&srv.url, &token, "runbook", "").await;
    a.type_at(10, "Typed before the delete.\n").await;
    a.sync().await;
    // Deleted before the session saved: everyone in it is told, with a close code of its own.
    let r = ann.send(reqwest::Method::DELETE, "/api/pages/runbook", None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    assert_eq!(a.closed().await, Some(CloseCode::Library(4404)));
    // Restored and opened again: the session resumes from its log and saves the text.
    let (s, restored) = ann.post("/api/trash/runbook/restore", json!({})).await;
    assert!(s.is_success(), "{restored}");
    let back = Peer::join(&srv.url, &token, "runbook", "").await;
    assert_eq!(back.text(), "# Runbook\nTyped before the delete.\n");
    drop(back);
    saved(&ann, "runbook", "# Runbook\nTyped before the delete.\n").await;
    srv.stop().await;
}

/// A page view's watcher: reads the next JSON event (the connection's text frames).
async fn next_event(ws: &mut Socket) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline.into(), ws.next()).await.expect("an event in time") {
            Some(Ok(Frame::Text(text))) => return serde_json::from_str(&text).unwrap(),
            Some(Ok(Frame::Ping(_) | Frame::Pong(_))) => {}
            other => panic!("not an event: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_watcher_sees_who_edits_who_types_each_revision_and_the_delete() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let (ann, bob, ws, _) = ann_and_bob(&srv).await;
    ann.page("runbook", "# Runbook\n").await;
    let bob_token = bob.pat().await;
    let mut req =
        format!("{}/api/pages/runbook/watch?ws={ws}", srv.url.replacen("http", "ws", 1)).into_client_request().unwrap();
    req.headers_mut().insert("authorization", HeaderValue::from_str(&format!("Bearer {bob_token}")).unwrap());
    let (mut watcher, _) = connect_async(req).await.expect("the upgrade is accepted");
    // Nobody edits it yet.
    assert_eq!(next_event(&mut watcher).await, json!({"type": "presence", "people": []}));
    // Ann opens its editor: she is named, by the server's account of her.
    let mut a = Peer::join(&srv.url, &ann.pat().await, "runbook", "").await;
    let event = next_event(&mut watcher).await;
    assert_eq!(event["people"][0]["name"], "ann@x.io", "{event}");
    assert_eq!(event["people"][0]["typing"], false, "{event}");
    // Her editor says she types.
    let mut update = yrs::sync::AwarenessUpdate { clients: Default::default() };
    update.clients.insert(
        a.doc.client_id(),
        yrs::sync::awareness::AwarenessUpdateEntry {
            clock: 1,
            json: r#"{"user":{"name":"Someone Else"},"typing":true}"#.into(),
        },
    );
    a.send(Message::Awareness(update)).await;
    let event = next_event(&mut watcher).await;
    assert_eq!(event["people"], json!([{"id": event["people"][0]["id"], "name": "ann@x.io", "typing": true}]));
    // A revision, from the session's save when she pauses.
    a.type_at(10, "Restart it.\n").await;
    a.sync().await;
    let saved = loop {
        let event = next_event(&mut watcher).await;
        if event["type"] == "saved" {
            break event;
        }
    };
    let (_, page) = ann.get("/api/pages/runbook").await;
    assert_eq!(saved["revision"], page["revision"]);
    assert_eq!(saved["slug"], "runbook");
    // She leaves; then the page is deleted: the watcher is told, and closed with 4404.
    drop(a);
    loop {
        let event = next_event(&mut watcher).await;
        if event == json!({"type": "presence", "people": []}) {
            break;
        }
    }
    let r = ann.send(reqwest::Method::DELETE, "/api/pages/runbook", None).await;
    assert_eq!(r.status, 204, "{}", r.text);
    loop {
        let event = next_event(&mut watcher).await;
        if event["type"] == "deleted" {
            break;
        }
    }
    match watcher.next().await {
        Some(Ok(Frame::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Library(4404)),
        other => panic!("not closed: {other:?}"),
    }
    srv.stop().await;
}

/// Two processes on one PostgreSQL database: people connected to different processes
/// edit one document — each one's typing reaches the other within moments — and the
/// revision holds both.
#[tokio::test]
async fn postgres_only_people_on_two_processes_share_one_session() {
    let env = Env::new().await;
    assert_eq!(backend(), "postgres", "run with CAIRN_TEST_BACKEND=postgres");
    let a = env.start(&[]).await;
    let b = env.start(&[]).await;
    let ann = a.user("ann@x.io").await;
    ann.page("runbook", "# Runbook\n").await;
    let token = ann.pat().await;
    let mut on_a = Peer::join(&a.url, &token, "runbook", "").await;
    let mut on_b = Peer::join(&b.url, &token, "runbook", "").await;
    on_a.type_at(10, "Typed on A.\n").await;
    on_a.sync().await;
    on_b.type_at(0, "> Typed on B.\n").await;
    on_b.sync().await;
    let want = "> Typed on B.\n# Runbook\nTyped on A.\n";
    let deadline = Instant::now() + Duration::from_secs(3);
    while on_a.text() != want || on_b.text() != want {
        assert!(Instant::now() < deadline, "A: {:?}, B: {:?}", on_a.text(), on_b.text());
        tokio::time::sleep(Duration::from_millis(50)).await;
        on_a.sync().await;
        on_b.sync().await;
    }
    // Only B has the session open (A's ended with its save): a save through A's API
    // comes into it all the same.
    drop(on_a);
    saved(&ann, "runbook", want).await;
    let want = format!("{want}Saved through A.\n");
    let (s, put) = ann.put("/api/pages/runbook", json!({"content": want})).await;
    assert_eq!(s, StatusCode::OK, "{put}");
    let deadline = Instant::now() + Duration::from_secs(3);
    while on_b.text() != want {
        assert!(Instant::now() < deadline, "B: {:?}", on_b.text());
        tokio::time::sleep(Duration::from_millis(50)).await;
        on_b.sync().await;
    }
    drop(on_b);
    saved(&ann, "runbook", &want).await;
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn outsiders_get_404_other_sites_403_and_a_plain_get_400() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ann = srv.user("ann@x.io").await;
    let eve = srv.user("eve@x.io").await;
    let (_, me) = ann.get("/api/me").await;
    let ws = me["default_workspace"].as_str().unwrap().to_owned();
    ann.page("runbook", "# Runbook\n").await;
    let eve_token = eve.pat().await;

    // The session, and the page view's watch: the same answers.
    for route in ["live", "watch"] {
        // Not a member: the page's 404, upgrade or not.
        let r = eve.send(reqwest::Method::GET, &format!("/api/pages/runbook/{route}?ws={ws}"), None).await;
        assert_problem(&r, 404, "workspace_not_found");
        let url = format!("{}/api/pages/runbook/{route}?ws={ws}", srv.url.replacen("http", "ws", 1));
        let mut req = url.into_client_request().unwrap();
        req.headers_mut().insert("authorization", HeaderValue::from_str(&format!("Bearer {eve_token}")).unwrap());
        match connect_async(req).await {
            Err(WsError::Http(res)) => assert_eq!(res.status(), 404, "{route}"),
            other => panic!("an outsider's upgrade of {route}: {other:?}"),
        }
        // No credentials: 401.
        let r = srv.anon().send(reqwest::Method::GET, &format!("/api/pages/runbook/{route}"), None).await;
        assert_eq!(r.status, 401, "{route}");
        // A member, but from another site's page (the cookie rides along): 403.
        let r = ann
            .client
            .get(format!("{}/api/pages/runbook/{route}", srv.url))
            .header("origin", "https://elsewhere.example")
            .header("sec-fetch-site", "cross-site")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{route}");
        // A member, without an upgrade: 400, said as a problem.
        let r = ann.send(reqwest::Method::GET, &format!("/api/pages/runbook/{route}"), None).await;
        assert_problem(&r, 400, "not_a_websocket");
        // A page that is not there: 404.
        let r = ann.send(reqwest::Method::GET, &format!("/api/pages/nothing-here/{route}"), None).await;
        assert_problem(&r, 404, "page_not_found");
    }
    srv.stop().await;
}

#[tokio::test]
async fn a_malformed_message_closes_that_connection_only() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ann = srv.user("ann@x.io").await;
    ann.page("runbook", "# Runbook\n").await;
    let token = ann.pat().await;
    let mut good = Peer::join(&srv.url, &token, "runbook", "").await;
    let mut bad = Peer::join(&srv.url, &token, "runbook", "").await;
    // A sync message whose update is no Yjs update.
    bad.ws.send(Frame::Binary(vec![0, 2, 5, 0xff, 0xff, 0xff, 0xff, 0xff].into())).await.unwrap();
    assert_eq!(bad.closed().await, Some(CloseCode::Invalid));
    // Text frames are not the protocol's.
    let mut text = Peer::join(&srv.url, &token, "runbook", "").await;
    text.ws.send(Frame::Text("hello".into())).await.unwrap();
    assert_eq!(text.closed().await, Some(CloseCode::Unsupported));
    // A flood (far past 100 messages a second) is closed as over a limit.
    let mut flood = Peer::join(&srv.url, &token, "runbook", "").await;
    let query = Message::AwarenessQuery.encode_v1();
    for _ in 0..1000 {
        if flood.ws.send(Frame::Binary(query.clone().into())).await.is_err() {
            break;
        }
    }
    assert_eq!(flood.closed().await, Some(CloseCode::Size));
    // So is an update that would make the page's text pass 1 MiB.
    let mut big = Peer::join(&srv.url, &token, "runbook", "").await;
    big.type_at(0, &"x".repeat(1_048_577)).await;
    assert_eq!(big.closed().await, Some(CloseCode::Size));
    // The others' session goes on, deletions included.
    good.type_at(10, "Still here.\nGone soon.\n").await;
    good.sync().await;
    let text = good.doc.get_or_insert_text("markdown");
    text.remove_range(&mut good.doc.transact_mut(), 22, 11);
    good.send_since(&StateVector::default()).await;
    good.sync().await;
    drop(good);
    saved(&ann, "runbook", "# Runbook\nStill here.\n").await;
    srv.stop().await;
}

#[tokio::test]
async fn a_member_removed_from_the_workspace_is_disconnected() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let (ann, bob, ws, member) = ann_and_bob(&srv).await;
    ann.page("runbook", "# Runbook\n").await;
    let mut b = Peer::join(&srv.url, &bob.pat().await, "runbook", &format!("?ws={ws}")).await;
    let (s, _) = ann.delete(&format!("/api/workspaces/{ws}/members/{}", member["id"])).await;
    assert!(s.is_success());
    let removed = Instant::now();
    assert_eq!(b.closed().await, Some(CloseCode::Policy));
    assert!(removed.elapsed() < Duration::from_secs(5), "disconnected after {:?}", removed.elapsed());
    srv.stop().await;
}

/// Sessions count against `MAX_CONNECTIONS`: while they hold every place, a newcomer is
/// answered 503; once one leaves, the next is served.
#[tokio::test]
async fn open_sessions_count_against_max_connections() {
    let env = Env::new().await;
    let srv = env.start(&["--max-connections", "3"]).await;
    let ann = srv.user("ann@x.io").await;
    ann.page("runbook", "# Runbook\n").await;
    let token = ann.pat().await;
    drop(ann);
    let mut peers = Vec::new();
    for _ in 0..3 {
        peers.push(Peer::join(&srv.url, &token, "runbook", "").await);
    }
    // One request on a connection of its own: its status (0 for none).
    let addr = srv.url.trim_start_matches("http://").to_owned();
    let health = || async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = TcpStream::connect(&addr).await.unwrap();
        let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        let mut answer = String::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut answer)).await;
        answer.get(9..12).and_then(|c| c.parse::<u16>().ok()).unwrap_or(0)
    };
    assert_eq!(health().await, 503, "three sessions hold the three places");
    drop(peers.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    while health().await != 200 {
        assert!(Instant::now() < deadline, "a place freed by a session is used again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(peers);
    srv.stop().await;
}

/// An acknowledged update survives kill -9: the restarted process takes the session up
/// from its log and saves its text.
#[tokio::test]
async fn kill_9_loses_no_acknowledged_update() {
    let env = Env::new().await;
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let ann = register(&p.url(), "ann@x.io").await;
    ann.page("runbook", "# Runbook\n").await;
    let token = ann.pat().await;
    let mut a = Peer::join(&p.url(), &token, "runbook", "").await;
    a.type_at(10, "Typed before the crash.\nNot this.\n").await;
    a.sync().await;
    // A deletion too (it leaves the state vector as it was).
    let text = a.doc.get_or_insert_text("markdown");
    text.remove_range(&mut a.doc.transact_mut(), 34, 10);
    a.send_since(&StateVector::default()).await;
    // Acknowledged: the answer to this SyncStep1 comes after the updates are stored.
    a.sync().await;
    let mut p = p;
    p.child.kill().unwrap();
    p.child.wait().unwrap();
    drop(p);

    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let ann = Api { base: p.url(), ..ann };
    saved(&ann, "runbook", "# Runbook\nTyped before the crash.\n").await;
    let (_, history) = ann.get("/api/pages/runbook/history").await;
    assert_eq!(history["items"][0]["author"]["name"], "ann@x.io", "{history}");
    drop(a);
}
