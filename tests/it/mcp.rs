//! The MCP door (docs/mcp.md) spoken raw, as any JSON-RPC client would: the handshake
//! without a credential, protocol revisions, auth, transport rules, the 27 tools and
//! their failures, resources and completion. The official SDKs are run against the
//! server in `tests/it/mcp_interop.rs`.

use crate::common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

const ACCEPT: &str = "application/json, text/event-stream";

pub struct Mcp {
    url: String,
    client: reqwest::Client,
    bearer: Option<String>,
}

impl Mcp {
    pub fn new(srv: &Server, bearer: Option<&str>) -> Mcp {
        Mcp { url: format!("{}/api/mcp", srv.url), client: reqwest::Client::new(), bearer: bearer.map(str::to_owned) }
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", ACCEPT)
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        req
    }

    pub async fn raw(&self, body: &Value) -> Reply {
        let res = self.post(body).send().await.expect("sent");
        let status = res.status();
        let headers = res.headers().clone();
        Reply { status, headers, text: res.text().await.unwrap_or_default() }
    }

    /// A request's JSON-RPC answer (the whole object).
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let r = self.raw(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})).await;
        assert_eq!(r.status, StatusCode::OK, "{method}: {}", r.text);
        let ct = r.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
        assert!(ct.starts_with("application/json"), "{method}: content-type {ct}");
        r.json()
    }

    /// `tools/call` of `name`: the result object.
    pub async fn call(&self, name: &str, args: Value) -> Value {
        let answer = self.rpc("tools/call", json!({"name": name, "arguments": args})).await;
        answer["result"].clone()
    }

    /// A successful tool result's structured content, checked to equal its text.
    pub async fn ok(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args).await;
        assert_eq!(r["isError"], false, "{name}: {r}");
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, r["structuredContent"], "{name}: text and structuredContent differ");
        r["structuredContent"].clone()
    }

    /// A failed tool result's problem.
    pub async fn fails(&self, name: &str, args: Value) -> Value {
        let r = self.call(name, args).await;
        assert_eq!(r["isError"], true, "{name}: {r}");
        assert!(r.get("structuredContent").is_none(), "an error carries no structuredContent: {r}");
        serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap()
    }
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

#[tokio::test]
async fn initialize_needs_no_credential_and_negotiates() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let anon = Mcp::new(&srv, None);
    // The smallest request shape, nothing more.
    let r = anon
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["result"]["serverInfo"]["version"], env!("CARGO_PKG_VERSION"), "{}", r.text);
    assert_eq!(r.json()["result"]["serverInfo"]["name"], "cairn");
    for (asked, agreed) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
    ] {
        let r = anon.raw(&initialize(asked)).await;
        assert_eq!(r.status, StatusCode::OK, "{asked}: {}", r.text);
        let result = &r.json()["result"];
        assert_eq!(result["protocolVersion"], agreed, "{asked}: {result}");
        assert!(result["capabilities"]["tools"].is_object() && result["capabilities"]["resources"].is_object());
    }
    // 2026-07-28: discovery without a session or a credential.
    let discover = json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let res = anon
        .post(&discover)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .send()
        .await
        .unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap_or_default();
    assert_eq!(status, StatusCode::OK, "{body}");
    let versions = body["result"]["supportedVersions"].as_array().unwrap_or_else(|| panic!("{body}"));
    for v in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        assert!(versions.contains(&json!(v)), "{v} missing: {body}");
    }
    // The notification that ends a handshake is accepted without a credential too.
    let r = anon.raw(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    srv.stop().await;
}

#[tokio::test]
async fn everything_else_needs_a_bearer_token() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ada@x.io").await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    // The challenge names where an OAuth client learns how to get a token (RFC 9728).
    let challenge = format!("Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/api/mcp\"", srv.url);
    let r = Mcp::new(&srv, None).raw(&list).await;
    assert_problem(&r, 401, "unauthorized");
    assert_eq!(r.headers["www-authenticate"], challenge.as_str());
    let r = Mcp::new(&srv, Some("svc_not-a-token")).raw(&list).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(r.headers["www-authenticate"], challenge.as_str());
    // A session cookie alone is not enough: MCP is for programs.
    let res = api
        .client
        .post(format!("{}/api/mcp", srv.url))
        .header("accept", ACCEPT)
        .header("content-type", "application/json")
        .body(list.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    // A ping, a batch or garbage is no way around it.
    for body in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]),
    ] {
        assert_eq!(Mcp::new(&srv, None).raw(&body).await.status, StatusCode::UNAUTHORIZED, "{body}");
    }
    // A PAT and a JWT both work.
    let pat = api.pat().await;
    let tools = Mcp::new(&srv, Some(&pat)).rpc("tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 27);
    let (s, jwt) = api.post("/api/token", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{jwt}");
    let jwt = jwt["access_token"].as_str().unwrap().to_owned();
    let me = Mcp::new(&srv, Some(&jwt)).ok("whoami", json!({})).await;
    assert_eq!(me["email"], "ada@x.io");
    srv.stop().await;
}

#[tokio::test]
async fn transport_rules() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let pat = srv.user("ada@x.io").await.pat().await;
    let mcp = Mcp::new(&srv, Some(&pat));
    let client = reqwest::Client::new();
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let res =
            client.request(method.clone(), &mcp.url).bearer_auth(&pat).header("accept", ACCEPT).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(res.headers()["allow"], "POST");
    }
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    // A web page of another origin, or a name that is not this server (DNS rebinding).
    let res = mcp.post(&list).header("origin", "http://evil.example").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "origin_not_allowed");
    let res = mcp.post(&initialize("2025-11-25")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert_eq!(res.json::<Value>().await.unwrap()["code"], "host_not_allowed");
    // The server's own origin passes.
    let own = srv.url.clone();
    let res = mcp.post(&list).header("origin", own).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    // Oversized bodies are refused before anything is read into a tool.
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_page", "arguments": {"title": "Big", "content": "x".repeat(9 * 1024 * 1024)}}});
    let r = mcp.raw(&huge).await;
    assert_problem(&r, 413, "body_too_large");
    // JSON nested deeper than any message is no JSON the server reads: said as such.
    let deep = format!("{}{}", "[".repeat(2000), "]".repeat(2000));
    let res = mcp.post(&list).body(deep).send().await.unwrap();
    let r = Reply { status: res.status(), headers: res.headers().clone(), text: res.text().await.unwrap() };
    assert_problem(&r, 422, "invalid_body");
    // A Host with user info is no host, whatever it starts with.
    let port = srv.url.rsplit(':').next().unwrap().to_owned();
    let res = mcp.post(&list).header("host", format!("localhost:{port}@evil.example")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    srv.stop().await;

    // A configured host list is what real deployments use.
    let srv = env.start(&["--mcp-allowed-hosts=wiki.example.com"]).await;
    let pat = srv.user("bo@x.io").await.pat().await;
    let mcp = Mcp::new(&srv, Some(&pat));
    let res = mcp.post(&list).header("host", "wiki.example.com").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let res = mcp.post(&list).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::FORBIDDEN, "127.0.0.1 is no longer listed");
    srv.stop().await;
}

#[tokio::test]
async fn tools_act_as_the_token_user() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ada = srv.user("ada@x.io").await;
    let mcp = Mcp::new(&srv, Some(&ada.pat().await));

    let page =
        mcp.ok("create_page", json!({"title": "Runbook", "content": "# Runbook\n\nRoll back first. #ops\n"})).await;
    assert_eq!(page["slug"], "runbook");
    let rev = page["revision"].as_str().unwrap().to_owned();
    // What the HTTP route answers, the tool answers.
    let (_, http) = ada.get("/api/pages/runbook").await;
    assert_eq!(mcp.ok("get_page", json!({"slug": "runbook"})).await, http);

    // Failures are results with the problem, never protocol errors.
    let stale =
        mcp.fails("update_page", json!({"slug": "runbook", "content": "x", "base_revision": "0".repeat(40)})).await;
    assert_eq!(stale["code"], "stale_revision");
    assert_eq!(stale["current_revision"], rev);
    assert!(stale["detail"].as_str().unwrap().contains("changed"), "{stale}");
    assert_eq!(mcp.fails("get_page", json!({"slug": "nope"})).await["code"], "page_not_found");
    let big = mcp.fails("append_to_page", json!({"slug": "runbook", "text": "y".repeat(1024 * 1024 + 1)})).await;
    assert_eq!(big["code"], "content_too_large");
    // A merge conflict carries the merged text.
    let base = rev.clone();
    mcp.ok("update_page", json!({"slug": "runbook", "content": "# Runbook\n\nRoll forward.\n", "base_revision": base}))
        .await;
    let conflict = mcp
        .fails("update_page", json!({"slug": "runbook", "content": "# Runbook\n\nRoll sideways.\n", "base_revision": base, "merge": true}))
        .await;
    assert_eq!(conflict["code"], "merge_conflict");
    assert!(conflict["merged"].as_str().unwrap().contains("<<<<<<<"), "{conflict}");

    // append_to_page adds after a blank line.
    let appended = mcp.ok("append_to_page", json!({"slug": "runbook", "text": "Call the on-call."})).await;
    assert!(appended["content"].as_str().unwrap().ends_with("Roll forward.\n\nCall the on-call.\n"), "{appended}");

    // Unknown tools and arguments of the wrong shape are JSON-RPC errors.
    let e = mcp.rpc("tools/call", json!({"name": "no_such_tool", "arguments": {}})).await;
    assert_eq!(e["error"]["code"], -32602, "{e}");
    let e = mcp.rpc("tools/call", json!({"name": "get_page", "arguments": {"slug": 7}})).await;
    assert_eq!(e["error"]["code"], -32602, "{e}");
    let e = mcp.rpc("tools/call", json!({"name": "get_page", "arguments": {"slug": "runbook", "colour": "red"}})).await;
    assert_eq!(e["error"]["code"], -32602, "{e}");

    // Another user's workspace is "not found"; a member cannot do an owner's work.
    let bo = srv.user("bo@x.io").await;
    let bo_mcp = Mcp::new(&srv, Some(&bo.pat().await));
    let ada_ws = page["workspace"].as_str().unwrap();
    let hidden = bo_mcp.fails("get_page", json!({"slug": "runbook", "workspace": ada_ws})).await;
    assert_eq!(hidden["status"], 404, "{hidden}");
    assert_eq!(bo_mcp.fails("list_pages", json!({"workspace": ada_ws})).await["code"], "workspace_not_found");
    let (s, _) = ada.post(&format!("/api/workspaces/{ada_ws}/members"), json!({"email": "bo@x.io"})).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(bo_mcp.ok("get_page", json!({"slug": "runbook", "workspace": ada_ws})).await["slug"], "runbook");

    // The rest of the tools, once each.
    mcp.ok("create_page", json!({"title": "Deploy", "content": "See [[runbook]]. #ops #ci\n", "parent": "runbook"}))
        .await;
    let kids = mcp.ok("list_children", json!({"slug": "runbook"})).await;
    assert_eq!(kids["items"][0]["slug"], "deploy");
    assert_eq!(mcp.ok("get_backlinks", json!({"slug": "runbook"})).await["items"][0]["slug"], "deploy");
    let tags = mcp.ok("list_tags", json!({})).await;
    // The runbook lost its #ops when it was rewritten; most used first, then by name.
    assert_eq!(tags["items"], json!([{"tag": "ci", "count": 1}, {"tag": "ops", "count": 1}]), "{tags}");
    assert_eq!(mcp.ok("list_pages", json!({})).await["items"][0]["children"][0]["slug"], "deploy");
    assert_eq!(mcp.ok("list_recent_pages", json!({"tag": "ci"})).await["total"], 1);
    assert!(mcp.ok("list_workspaces", json!({})).await["total"].as_i64().unwrap() >= 1);
    let found = mcp.ok("search", json!({"query": "roll"})).await;
    assert_eq!(found["items"][0]["slug"], "runbook", "{found}");
    assert_eq!(mcp.fails("search", json!({"query": " "})).await["code"], "empty_query");
    let history = mcp.ok("get_page_history", json!({"slug": "runbook"})).await;
    assert_eq!(history["total"], 3);
    // Every list tool pages alike: a window of the list with the whole list's total; a
    // window out of range is the tool's failure, a field of the wrong type or one no tool
    // knows is the caller's protocol error.
    let window = mcp.ok("get_page_history", json!({"slug": "runbook", "limit": 1, "offset": 1})).await;
    assert_eq!((window["items"].as_array().unwrap().len(), &window["total"]), (1, &json!(3)), "{window}");
    assert_eq!(window["items"][0]["sha"], history["items"][1]["sha"]);
    assert_eq!(mcp.ok("search", json!({"query": "roll", "offset": 1})).await["items"], json!([]));
    assert_eq!(mcp.fails("list_trash", json!({"limit": 0})).await["code"], "invalid_paging");
    assert_eq!(mcp.fails("list_workspaces", json!({"offset": -1})).await["code"], "invalid_paging");
    for args in [json!({"limit": "ten"}), json!({"tag": "ci", "colour": "red"}), json!({"offset": 1.5})] {
        let e = mcp.rpc("tools/call", json!({"name": "list_recent_pages", "arguments": args})).await;
        assert_eq!(e["error"]["code"], -32602, "{args}: {e}");
    }
    let first = history["items"][2]["sha"].as_str().unwrap();
    assert!(
        mcp.ok("get_page_revision", json!({"slug": "runbook", "sha": first})).await["content"]
            .as_str()
            .unwrap()
            .contains("Roll back")
    );
    let latest = history["items"][0]["sha"].as_str().unwrap();
    let diff = mcp.ok("diff_page_revisions", json!({"slug": "runbook", "sha": latest, "against": first})).await;
    assert!(diff["unified"].as_str().unwrap().contains("+Call the on-call."), "{diff}");
    let restored = mcp.ok("restore_page_revision", json!({"slug": "runbook", "sha": first})).await;
    assert!(restored["content"].as_str().unwrap().contains("Roll back"));
    mcp.ok("move_page", json!({"slug": "deploy"})).await;
    assert_eq!(mcp.ok("rename_page", json!({"slug": "deploy", "new_slug": "shipping"})).await["slug"], "shipping");
    for tool in ["suggest_links", "suggest_tags", "summarize_page"] {
        assert!(mcp.ok(tool, json!({"slug": "runbook"})).await["mode"].is_string(), "{tool}");
    }
    assert!(mcp.ok("get_insights", json!({})).await["orphans"].is_array());
    assert!(mcp.ok("get_graph", json!({})).await["nodes"].is_array());
    assert_eq!(mcp.ok("delete_page", json!({"slug": "shipping"})).await, json!({"slug": "shipping", "trashed": true}));
    assert_eq!(mcp.ok("list_trash", json!({})).await["items"][0]["slug"], "shipping");
    mcp.ok("restore_from_trash", json!({"slug": "shipping"})).await;
    mcp.ok("delete_page", json!({"slug": "shipping"})).await;
    assert_eq!(
        mcp.ok("purge_from_trash", json!({"slug": "shipping"})).await,
        json!({"slug": "shipping", "purged": true})
    );
    assert_eq!(mcp.ok("list_trash", json!({})).await["total"], 0);
    srv.stop().await;
}

/// A renamed page's old slug still names it (CONTRACT §5): every tool given it acts on
/// the page where it is now, and its result says the slug the page has now.
#[tokio::test]
async fn tools_given_an_old_slug_act_on_the_renamed_page() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ada = srv.user("ada@x.io").await;
    let mcp = Mcp::new(&srv, Some(&ada.pat().await));
    mcp.ok(
        "create_page",
        json!({"title": "Incident Response", "content": "# Incident Response\n\nPage the on-call.\n"}),
    )
    .await;
    mcp.ok("rename_page", json!({"slug": "incident-response", "new_slug": "incident-management"})).await;
    mcp.ok("rename_page", json!({"slug": "incident-management", "new_slug": "incidents"})).await;

    let says_where = |r: &Value| {
        let notes: Vec<&str> = r["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect();
        assert!(notes.iter().any(|t| t.contains("'incidents'")), "{r}");
    };
    for old in ["incident-response", "incident-management"] {
        let r = mcp.call("get_page", json!({"slug": old})).await;
        assert_eq!(
            (r["isError"].as_bool(), r["structuredContent"]["slug"].as_str()),
            (Some(false), Some("incidents")),
            "{r}"
        );
        says_where(&r);
    }
    let r = mcp.call("append_to_page", json!({"slug": "incident-response", "text": "Then write it up."})).await;
    assert_eq!(r["structuredContent"]["slug"], "incidents", "{r}");
    assert!(r["structuredContent"]["content"].as_str().unwrap().ends_with("Then write it up.\n"));
    says_where(&r);
    let r = mcp.call("get_page_history", json!({"slug": "incident-response"})).await;
    assert_eq!(r["structuredContent"]["total"], 4, "{r}");
    says_where(&r);
    // A page's resource read at an old slug's URI: its contents, under its URI now.
    let ws = mcp.ok("get_page", json!({"slug": "incidents"})).await["workspace"].as_str().unwrap().to_owned();
    let old_uri = format!("cairn://pages/{ws}/incident-response");
    let read = mcp.rpc("resources/read", json!({"uri": old_uri})).await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], format!("cairn://pages/{ws}/incidents"), "{read}");
    assert!(contents["text"].as_str().unwrap().contains("Then write it up."), "{read}");
    let r = mcp.call("delete_page", json!({"slug": "incident-management"})).await;
    assert_eq!(r["structuredContent"], json!({"slug": "incidents", "trashed": true}), "{r}");
    // In the trash, the old slug is the page's no more than the new one.
    let gone = mcp.fails("get_page", json!({"slug": "incident-response"})).await;
    assert_eq!((gone["code"].as_str(), gone["trashed"]["slug"].as_str()), (Some("page_not_found"), Some("incidents")));
    srv.stop().await;
}

#[tokio::test]
async fn pages_are_resources_with_completion() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ada = srv.user("ada@x.io").await;
    for slug in ["alpha", "alps", "beta"] {
        ada.page(slug, &format!("# {slug}\n\nText of {slug}.\n")).await;
    }
    let mcp = Mcp::new(&srv, Some(&ada.pat().await));
    let listed = mcp.rpc("resources/list", json!({})).await;
    let resources = listed["result"]["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 3, "{listed}");
    let uri = resources[0]["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("cairn://pages/") && uri.ends_with("/alpha"), "{uri}");
    let read = mcp.rpc("resources/read", json!({"uri": uri})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "# alpha\n\nText of alpha.\n");
    assert_eq!(read["result"]["contents"][0]["mimeType"], "text/markdown");
    let missing = mcp.rpc("resources/read", json!({"uri": uri.replace("alpha", "gamma")})).await;
    assert!(missing["error"]["code"].is_i64(), "{missing}");
    let templates = mcp.rpc("resources/templates/list", json!({})).await;
    assert_eq!(templates["result"]["resourceTemplates"][0]["uriTemplate"], "cairn://pages/{workspace}/{slug}");
    let done = mcp
        .rpc(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "cairn://pages/{workspace}/{slug}"},
            "argument": {"name": "slug", "value": "al"}}),
        )
        .await;
    assert_eq!(done["result"]["completion"]["values"], json!(["alpha", "alps"]), "{done}");
    // Another user sees none of it.
    let bo = Mcp::new(&srv, Some(&srv.user("bo@x.io").await.pat().await));
    assert_eq!(bo.rpc("resources/list", json!({})).await["result"]["resources"], json!([]));
    assert!(bo.rpc("resources/read", json!({"uri": uri})).await["error"].is_object());
    srv.stop().await;
}

/// `tools/list` as agents see it: names, descriptions, schemas and annotations. Any
/// change shows in review as a change to `tests/snapshots/mcp__tools_list.snap`.
#[tokio::test]
async fn tools_list_snapshot() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let pat = srv.user("ada@x.io").await.pat().await;
    let tools = Mcp::new(&srv, Some(&pat)).rpc("tools/list", json!({})).await["result"]["tools"].clone();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 27);
    // Kept where the web app's type generator and build.rs read it: tests/snapshots/.
    insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("mcp__tools_list", serde_json::to_string_pretty(&tools).unwrap());
    });
    srv.stop().await;
}

/// A plain `tools/call` is answered by `mcp/direct.rs`; the same call with `_meta` goes
/// through rmcp. Both must answer the same bytes, for results, tool failures and
/// protocol errors alike, with and without a protocol-version header.
#[tokio::test]
async fn direct_tool_calls_answer_what_rmcp_answers() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("direct@example.com").await;
    api.page("alpha", "# Alpha\n\nSome *text* with \"quotes\" and ünïcode.\n").await;
    let mcp = Mcp::new(&srv, Some(&api.pat().await));
    let calls = [
        json!({"name": "get_page", "arguments": {"slug": "alpha"}}),
        json!({"name": "get_page", "arguments": {"slug": "missing"}}),
        json!({"name": "get_page", "arguments": {"slug": 5}}),
        json!({"name": "no_such_tool", "arguments": {}}),
        json!({"name": "list_pages"}),
    ];
    for version in [None, Some("2025-06-18"), Some("2025-11-25")] {
        for (i, params) in calls.iter().enumerate() {
            let mut with_meta = params.clone();
            with_meta["_meta"] = json!({});
            let mut answers = Vec::new();
            for p in [params, &with_meta] {
                let mut req = mcp.post(&json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p}));
                if let Some(v) = version {
                    req = req.header("mcp-protocol-version", v);
                }
                let res = req.send().await.unwrap();
                assert_eq!(res.status(), StatusCode::OK);
                let ct = res.headers()["content-type"].to_str().unwrap().to_owned();
                answers.push((ct, res.text().await.unwrap()));
            }
            assert_eq!(answers[0], answers[1], "{version:?} {params}");
        }
    }
    srv.stop().await;
}
