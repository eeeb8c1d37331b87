//! `cairn import`: a generated Obsidian-like vault (nested folders, every link form,
//! images, front matter, name collisions, hidden, non-UTF-8 and oversized files), a second
//! import that changes nothing, a dry run, Cairn's own export zip round-tripped into a new
//! workspace, and the real binary writing its JSON report. On both backends.

use std::io::Write;
use std::path::Path;

use crate::common::process::*;
use crate::common::*;
use cairn::testing::import::{self, Options};
use cairn::testing::import::{PageAction, Report, UploadAction};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A second image (a PNG with other bytes: another upload name).
fn png2() -> Vec<u8> {
    let mut b = PNG.to_vec();
    b.extend_from_slice(b"\0second");
    b
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const HOME: &str = "---\ntitle: Welcome\ntags: [start, Guide]\n---\n\
Links: [[Getting Started]], [[Projects/Alpha|the alpha]], [[Alpha#Goals]], [[Projects/Notes]], \
[plain](Projects/Alpha.md), [[Nowhere]], [[Projects/Alpha#Goals|goals]].\n\n![[diagram.png]] ![[diagram.png|300]]\n\n\
#home `[[Not A Link]]` [[shot.png|see]]\n";

/// A third image (linked, not embedded, by Home).
fn png3() -> Vec<u8> {
    let mut b = PNG.to_vec();
    b.extend_from_slice(b"\0third");
    b
}

fn vault(root: &Path) {
    write(root, "Home.md", HOME.as_bytes());
    write(root, "Getting Started.md", b"Some text #onboarding\n\n![logo](attachments/logo.png)\n");
    write(root, "Projects/Alpha.md", b"# Alpha\n\n## Goals\n\nBack to [[Home]] and [[Notes]]; [up](../Home.md).\n");
    write(root, "Projects/Notes.md", b"project notes\n");
    write(root, "Archive/Notes.md", b"archive notes\n");
    write(root, "Archive/index.md", b"# The archive\n");
    write(root, "Archive/2023/Old.md", b"old\n");
    write(root, "Guides/README.md", b"# All the guides\n");
    write(root, "Guides/Setup.md", b"setup\n");
    // A folder without a note of its own, named as a real note deeper down: the note
    // takes the plain slug.
    write(root, "Import notes/Obsidian.md", b"obsidian\n");
    write(root, "Guides/Import notes.md", b"how we import\n");
    write(root, "attachments/shot.png", &png3());
    write(root, "attachments/diagram.png", PNG);
    write(root, "attachments/logo.png", &png2());
    write(root, "attachments/unused.png", b"\x89PNG\r\n\x1a\nnot really");
    write(root, ".obsidian/app.json", b"{}");
    write(root, ".trash/Gone.md", b"gone\n");
    write(root, ".hidden.md", b"a dot-file\n");
    write(root, "bad.md", b"\xff\xfe\0 not utf-8");
    write(root, "big.md", &vec![b'a'; 1_048_577]);
    write(root, "doc.pdf", b"%PDF-1.7\n");
}

fn upload_name(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{}.png", hex::encode(sha2::Sha256::digest(bytes)))
}

async fn run(srv: &Server, ws: &str, path: &Path, as_email: Option<&str>, dry_run: bool) -> Report {
    let opts = Options {
        path: path.to_owned(),
        workspace: ws.to_owned(),
        as_email: as_email.map(str::to_owned),
        dry_run,
        history: true,
    };
    import::import(&srv.ctx, &opts, &|_, _, _| {}).await.expect("import runs")
}

/// What most tests start from: a server, an account (ann@x.io) with its default
/// workspace, and an empty folder for the source. `_env` keeps the data directory alive.
struct Setup {
    _env: Env,
    srv: Server,
    api: Api,
    ws: String,
    dir: tempfile::TempDir,
}

async fn setup() -> Setup {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ann@x.io").await;
    let ws = default_ws(&api).await;
    Setup { _env: env, srv, api, ws, dir: tempfile::tempdir().unwrap() }
}

async fn default_ws(api: &Api) -> String {
    let (_, me) = api.get("/api/me").await;
    me["default_workspace"].as_str().unwrap().to_owned()
}

async fn page(api: &Api, ws: &str, slug: &str) -> Value {
    let (s, body) = api.get(&format!("/api/pages/{slug}?ws={ws}")).await;
    assert_eq!(s, StatusCode::OK, "{slug}: {body}");
    body
}

/// The pages an import changed: (slug, action, revisions written).
fn changed(report: &Report) -> Vec<(&str, PageAction, usize)> {
    report
        .pages
        .iter()
        .filter(|p| p.action != PageAction::Unchanged)
        .map(|p| (p.slug.as_str(), p.action, p.revisions))
        .collect()
}

fn skipped_reason<'a>(report: &'a Report, source: &str) -> &'a str {
    &report.skipped.iter().find(|s| s.source == source).unwrap_or_else(|| panic!("{source} not skipped")).reason
}

#[tokio::test]
async fn a_vault_becomes_pages_with_its_tree_links_images_tags_and_a_full_report() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    vault(dir.path());

    let report = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(report.imported_as, "ann@x.io");
    assert_eq!(report.count(PageAction::Failed), 0, "{:#?}", report.pages);

    // Pages and the tree: folders are pages; `Archive/index.md` is the archive's page.
    let slugs: Vec<(&str, &str, Option<&str>)> =
        report.pages.iter().map(|p| (p.source.as_str(), p.slug.as_str(), p.parent.as_deref())).collect();
    for expected in [
        ("Home.md", "home", None),
        ("Getting Started.md", "getting-started", None),
        ("Projects/", "projects", None),
        ("Archive/index.md", "archive", None),
        ("Archive/Notes.md", "notes", Some("archive")),
        ("Projects/Notes.md", "notes-2", Some("projects")),
        ("Projects/Alpha.md", "alpha", Some("projects")),
        ("Archive/2023/", "2023", Some("archive")),
        ("Archive/2023/Old.md", "old", Some("2023")),
        ("Guides/README.md", "guides", None),
        ("Guides/Setup.md", "setup", Some("guides")),
        ("Guides/Import notes.md", "import-notes", Some("guides")),
        ("Import notes/", "import-notes-2", None),
        ("Import notes/Obsidian.md", "obsidian", Some("import-notes-2")),
    ] {
        assert!(slugs.contains(&expected), "{expected:?} not in {slugs:?}");
    }
    assert_eq!(report.pages.len(), 14, "{slugs:?}");
    assert!(report.pages.iter().all(|p| p.action == PageAction::Created));

    // Collisions are renamed and reported; links that go nowhere too.
    let renamed: Vec<(&str, &str)> = report.renamed.iter().map(|r| (r.source.as_str(), r.slug.as_str())).collect();
    assert_eq!(renamed, [("Import notes/", "import-notes-2"), ("Projects/Notes.md", "notes-2")]);
    let broken: Vec<(&str, &str)> =
        report.broken_links.iter().map(|b| (b.source.as_str(), b.target.as_str())).collect();
    assert_eq!(broken, [("Home.md", "Nowhere")]);

    // Nothing dropped silently: each file passed over has its reason.
    assert!(skipped_reason(&report, ".obsidian/").contains("hidden"));
    assert!(skipped_reason(&report, ".trash/").contains("hidden"));
    assert!(skipped_reason(&report, ".hidden.md").contains("hidden"));
    assert!(skipped_reason(&report, "bad.md").contains("UTF-8"));
    assert!(skipped_reason(&report, "big.md").contains("1 MiB"));
    assert!(skipped_reason(&report, "doc.pdf").contains("neither markdown nor an image"));
    assert!(skipped_reason(&report, "attachments/unused.png").contains("no note references"));
    assert_eq!(report.skipped.len(), 7, "{:#?}", report.skipped);

    // Links rewritten to our slugs only where needed; images kept as uploads.
    // A rewritten link keeps the text readers saw (`[[Projects/Notes]]`); an image
    // embed keeps its size; a link to an image links to its upload.
    let diagram = upload_name(PNG);
    let logo = upload_name(&png2());
    let shot = upload_name(&png3());
    let home = page(&api, &ws, "home").await;
    let expected = format!(
        "---\ntitle: Welcome\ntags: [start, Guide]\n---\n\
Links: [[Getting Started]], [[alpha|the alpha]], [[Alpha#Goals]], [[notes-2|Projects/Notes]], \
[[alpha|plain]], [[Nowhere]], [[alpha#Goals|goals]].\n\n\
![diagram.png](/uploads/{diagram}) ![diagram.png|300](/uploads/{diagram})\n\n#home `[[Not A Link]]` \
[see](/uploads/{shot})\n"
    );
    assert_eq!(home["content"], expected.as_str());
    assert_eq!(home["title"], "Welcome");
    assert_eq!(home["tags"], json!(["guide", "home", "start"]));
    assert_eq!(home["links"], json!(["getting-started", "alpha", "notes-2", "nowhere"]));
    let gs = page(&api, &ws, "getting-started").await;
    assert_eq!(gs["title"], "Getting Started");
    assert_eq!(gs["tags"], json!(["onboarding"]));
    assert_eq!(gs["content"], format!("Some text #onboarding\n\n![logo](/uploads/{logo})\n").as_str());
    // `[[Notes]]` from Projects/Alpha: as in Obsidian, the note beside it
    // (Projects/Notes.md, `notes-2`; Archive/Notes.md took `notes`), so the link is
    // rewritten and keeps the words it showed.
    let alpha = page(&api, &ws, "alpha").await;
    // A relative link climbing out of its folder (`../Home.md`) is resolved too.
    assert_eq!(alpha["content"], "# Alpha\n\n## Goals\n\nBack to [[Home]] and [[notes-2|Notes]]; [[home|up]].\n");
    assert_eq!(alpha["parent"], "projects");
    assert_eq!(page(&api, &ws, "archive").await["title"], "The archive");
    // A folder's README.md is the folder's page.
    assert_eq!(page(&api, &ws, "guides").await["title"], "All the guides");
    assert_eq!(page(&api, &ws, "setup").await["parent"], "guides");
    assert_eq!(page(&api, &ws, "projects").await["content"], "");
    assert_eq!(page(&api, &ws, "projects").await["title"], "Projects");
    let mut names: Vec<&str> = report.uploads.iter().map(|u| u.name.as_str()).collect();
    names.sort();
    let mut want = vec![diagram.as_str(), logo.as_str(), shot.as_str()];
    want.sort();
    assert_eq!(names, want);
    assert!(report.uploads.iter().all(|u| u.action == UploadAction::Created), "{:#?}", report.uploads);
    assert!(report.summary().contains("; 3 uploads;"), "{}", report.summary());
    for name in [&diagram, &logo, &shot] {
        let r = api.send(reqwest::Method::GET, &format!("/uploads/{name}"), None).await;
        assert_eq!(r.status, StatusCode::OK, "{name}");
    }
    // Backlinks work like any page's: the write path indexed the links.
    let (_, view) = api.get(&format!("/api/pages/alpha/view?ws={ws}")).await;
    assert_eq!(view["backlinks"][0]["slug"], "home", "{view}");
    srv.stop().await;
}

#[tokio::test]
async fn importing_again_changes_nothing_and_a_changed_note_gets_one_new_revision() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    vault(dir.path());
    run(&srv, &ws, dir.path(), None, false).await;
    let head = |srv: &Server| {
        cairn::testing::git::head(&git2::Repository::open_bare(srv.ctx.workspace_dir(&ws)).unwrap()).unwrap()
    };
    let before = head(&srv);

    let again = run(&srv, &ws, dir.path(), None, false).await;
    assert!(again.pages.iter().all(|p| p.action == PageAction::Unchanged), "{:#?}", again.pages);
    assert_eq!(head(&srv), before, "a second import wrote a commit");
    // Images the workspace holds already are not counted as uploaded again.
    assert!(again.uploads.iter().all(|u| u.action == UploadAction::Unchanged), "{:#?}", again.uploads);
    assert!(again.summary().contains("; 0 uploads (3 already there);"), "{}", again.summary());

    // A changed note and a note moved to another folder: only those get revisions.
    write(dir.path(), "Projects/Alpha.md", b"# Alpha\n\nChanged.\n");
    std::fs::rename(dir.path().join("Archive/2023/Old.md"), dir.path().join("Archive/Old.md")).unwrap();
    let third = run(&srv, &ws, dir.path(), None, false).await;
    let changed = changed(&third);
    assert_eq!(changed, [("old", PageAction::Updated, 1), ("alpha", PageAction::Updated, 1)], "{:#?}", third.pages);
    assert_eq!(page(&api, &ws, "old").await["parent"], "archive");
    let (_, history) = api.get(&format!("/api/pages/alpha/history?ws={ws}")).await;
    assert_eq!(history["total"], 2, "{history}");
    srv.stop().await;
}

#[tokio::test]
async fn a_dry_run_reports_everything_and_writes_nothing() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    vault(dir.path());
    let report = run(&srv, &ws, dir.path(), Some("ann@x.io"), true).await;
    assert!(report.dry_run);
    assert_eq!(report.count(PageAction::Created), 14);
    assert_eq!(report.uploads.len(), 3);
    // The same report a real import gives: skips with reasons, renames, broken links.
    assert_eq!(report.skipped.len(), 7, "{:#?}", report.skipped);
    assert!(skipped_reason(&report, "bad.md").contains("UTF-8"));
    assert_eq!(report.renamed.len(), 2, "{:?}", report.renamed);
    assert_eq!(report.broken_links.len(), 1, "{:?}", report.broken_links);
    assert!(report.summary().starts_with("would import"), "{}", report.summary());
    let (s, _) = api.get(&format!("/api/pages/home?ws={ws}")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (_, tree) = api.get(&format!("/api/pages?ws={ws}")).await;
    assert_eq!(tree, json!([]));
    let uploads = srv.ctx.config.data_dir.join("uploads").join(&ws);
    assert!(!uploads.exists() || std::fs::read_dir(&uploads).unwrap().next().is_none());
    srv.stop().await;
}

#[tokio::test]
async fn only_a_member_may_import_and_as_names_an_existing_account() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ann@x.io").await;
    srv.user("bob@x.io").await;
    let ws = default_ws(&api).await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.md", b"a\n");
    let opts = |email: &str| Options {
        path: dir.path().to_owned(),
        workspace: ws.clone(),
        as_email: Some(email.to_owned()),
        dry_run: false,
        history: true,
    };
    let err = import::import(&srv.ctx, &opts("bob@x.io"), &|_, _, _| {}).await.unwrap_err();
    assert!(err.to_string().contains("not a member"), "{err}");
    let err = import::import(&srv.ctx, &opts("nobody@x.io"), &|_, _, _| {}).await.unwrap_err();
    assert!(err.to_string().contains("no account"), "{err}");
    let (s, _) = api.get(&format!("/api/pages/a?ws={ws}")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    srv.stop().await;
}

async fn export_zip(api: &Api, ws: &str) -> Vec<u8> {
    let res = api.client.get(format!("{}/api/workspaces/{ws}/export", api.base)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn an_export_zip_imports_into_a_new_workspace_byte_for_byte() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ann@x.io").await;
    let ws = default_ws(&api).await;
    let up = api.upload(&format!("/api/uploads?ws={ws}"), PNG, "image/png").await;
    assert_eq!(up.status, StatusCode::CREATED, "{}", up.text);
    let url = up.json()["url"].as_str().unwrap().to_owned();
    let pages = [
        (
            "guide",
            None,
            format!("---\ntags: [docs]\n---\n# The Guide\n\nSee [[Child Page]] and [[other|that]].\n\n![d]({url})\n"),
        ),
        ("child-page", Some("guide"), format!("Under the guide. #nested\n\n[[guide#the-guide]] ![deeper]({url})\n")),
        ("grandchild", Some("child-page"), "Deep. [[Missing page]]\n".to_owned()),
        ("other", None, "Other #tag with `[[code]]` and [[Guide]].\r\nCRLF kept.\n".to_owned()),
        ("bases-syntax", Some("guide"), "No heading: the title was set by hand.\n".to_owned()),
    ];
    for (slug, parent, content) in &pages {
        let (s, body) = api.post("/api/pages", json!({"slug": slug, "content": content, "parent": parent})).await;
        assert_eq!(s, StatusCode::CREATED, "{body}");
    }
    let (s, body) = api.put(&format!("/api/pages/bases-syntax?ws={ws}"), json!({"title": "Bases syntax"})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let zip = export_zip(&api, &ws).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("export.zip");
    std::fs::write(&file, &zip).unwrap();
    let (s, body) = api.post("/api/workspaces", json!({"name": "Copy", "slug": "copy"})).await;
    assert_eq!(s, StatusCode::CREATED, "{body}");

    let report = run(&srv, "copy", &file, None, false).await;
    assert_eq!(report.kind, "zip");
    assert_eq!(report.count(PageAction::Created), 5, "{:#?}", report.pages);
    assert!(report.skipped.is_empty(), "{:#?}", report.skipped);
    assert!(report.renamed.is_empty());
    assert_eq!(report.uploads.len(), 1);
    for (slug, _, _) in &pages {
        let a = page(&api, &ws, slug).await;
        let b = page(&api, "copy", slug).await;
        for field in ["content", "parent", "tags", "links", "slug", "title"] {
            assert_eq!(a[field], b[field], "{slug}.{field}");
        }
    }
    let (_, tree_a) = api.get(&format!("/api/pages?ws={ws}")).await;
    let (_, tree_b) = api.get("/api/pages?ws=copy").await;
    assert_eq!(tree_a, tree_b);
    let r = api.send(reqwest::Method::GET, &url, None).await;
    assert_eq!(r.status, StatusCode::OK);
    // And the copy exports to the same zip entries with the same bytes.
    let again = export_zip(&api, "copy").await;
    assert_eq!(entries(&zip), entries(&again));
    srv.stop().await;
}

fn entries(zip: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        out.push((f.name().unwrap().to_string(), bytes));
    }
    out.sort();
    out
}

#[tokio::test]
async fn the_cairn_binary_imports_a_zipped_vault_and_writes_a_json_report() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ann@x.io").await;
    let ws = default_ws(&api).await;
    srv.stop().await;

    // A zipped vault: everything under one folder, as a zip of a vault folder looks.
    let dir = tempfile::tempdir().unwrap();
    let zip_path = dir.path().join("vault.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        for (name, bytes) in [
            ("MyVault/Index.md", b"[[Sub Note]] ![[pic.png]]\n".to_vec()),
            ("MyVault/Folder/Sub Note.md", b"# Sub\n".to_vec()),
            ("MyVault/pic.png", PNG.to_vec()),
            ("MyVault/.obsidian/workspace.json", b"{}".to_vec()),
        ] {
            z.start_file(name, opts).unwrap();
            z.write_all(&bytes).unwrap();
        }
        z.finish().unwrap();
    }
    let report_path = dir.path().join("report.json");
    let data = env.data_dir();
    let logs = env.dir.path().join("logs");
    let vars = [
        ("DATA_DIR", data.to_str().unwrap()),
        ("LOG_DIR", logs.to_str().unwrap()),
        ("DATABASE_URL", env.db_url.as_str()),
    ];
    let (code, stdout, stderr) = run_to_end(
        &vars,
        &[
            "import",
            "--workspace",
            &ws,
            "--as",
            "ann@x.io",
            "--report",
            report_path.to_str().unwrap(),
            zip_path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // `Folder/` has no note: its page is made for it, beside the two notes.
    assert!(stdout.contains("3 pages created, 0 updated"), "{stdout}");
    // Counts agree with their nouns: the one image is "1 upload".
    assert!(stdout.contains("; 1 upload; "), "{stdout}");
    assert!(stdout.contains("created: Index.md → index"), "{stdout}");
    // Log lines go to standard error, never into the summary.
    assert!(stderr.contains("import done"), "{stderr}");
    assert!(stdout.lines().all(|l| !l.contains(" INFO ") && !l.contains("import done")), "{stdout}");
    // Not on a terminal: plain progress lines, each phase ending at 100 %.
    for phase in ["reading: 1/1 (100%)", "uploads: 1/1 (100%)", "pages: 3/3 (100%)"] {
        assert!(stderr.lines().any(|l| l == phase), "{phase} missing in:\n{stderr}");
    }
    let report: Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    assert_eq!(report["kind"], "zip");
    let sources: Vec<&str> =
        report["pages"].as_array().unwrap().iter().map(|p| p["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["Folder/", "Index.md", "Folder/Sub Note.md"], "{report}");
    assert_eq!(report["skipped"][0]["source"], ".obsidian/");
    assert_eq!(report["uploads"][0]["source"], "pic.png");

    // A second run through the binary changes nothing; an unknown account stops it.
    let (code, stdout, stderr) = run_to_end(&vars, &["import", "--workspace", &ws, zip_path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("0 pages created, 0 updated, 3 unchanged"), "{stdout}");
    let (code, _, stderr) =
        run_to_end(&vars, &["import", "--workspace", &ws, "--as", "zed@x.io", zip_path.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(stderr.contains("no account"), "{stderr}");

    let srv = env.start(&[]).await;
    let api = Api { base: srv.url.clone(), ..api };
    let index = page(&api, &ws, "index").await;
    assert_eq!(index["content"], format!("[[Sub Note]] ![pic.png](/uploads/{})\n", upload_name(PNG)).as_str());
    assert_eq!(index["links"], json!(["sub-note"]));
    assert_eq!(page(&api, &ws, "sub-note").await["parent"], "folder");
    srv.stop().await;
}

/// Commits `files` (path → content; None removes) to the working repository at `dir`
/// as `who` at `date`, with the git CLI, as a person would.
fn commit(dir: &Path, who: (&str, &str), date: &str, message: &str, files: &[(&str, Option<&str>)]) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", who.0)
            .env("GIT_AUTHOR_EMAIL", who.1)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_NAME", who.0)
            .env("GIT_COMMITTER_EMAIL", who.1)
            .env("GIT_COMMITTER_DATE", date)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    for (path, content) in files {
        match content {
            Some(c) => write(dir, path, c.as_bytes()),
            None => git(&["rm", "-q", path]),
        }
    }
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", message]);
}

fn git_init(dir: &Path) {
    let out = std::process::Command::new("git").current_dir(dir).args(["init", "-q", "-b", "main"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn git_mv(dir: &Path, from: &str, to: &str) {
    let out = std::process::Command::new("git").current_dir(dir).args(["mv", from, to]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

const ALICE: (&str, &str) = ("Alice Source", "alice@source.example");
const CAROL: (&str, &str) = ("Carol Member", "carol@x.io");

/// A small wiki's history: three authors (one of them a member of the workspace), a
/// rename, a deleted page, a page in a folder.
fn wiki_history(dir: &Path) {
    git_init(dir);
    commit(
        dir,
        ALICE,
        "2021-03-01T10:00:00Z",
        "Start the wiki",
        &[
            ("Home.md", Some("# Home\n\nSee [[Guide]].\n")),
            ("Guide.md", Some("# Guide\n\nFirst version.\n")),
            ("Old.md", Some("# Old\n\nSoon gone.\n")),
        ],
    );
    commit(
        dir,
        ("Bob Outside", "bob@elsewhere.example"),
        "2021-04-02T11:00:00Z",
        "Improve the guide",
        &[("Guide.md", Some("# Guide\n\nSecond version, by Bob.\n"))],
    );
    git_mv(dir, "Guide.md", "Handbook.md");
    commit(dir, ALICE, "2021-05-03T12:00:00Z", "Rename the guide", &[]);
    commit(
        dir,
        CAROL,
        "2021-06-04T13:00:00Z",
        "Drop the old page, extend the handbook",
        &[
            ("Old.md", None),
            ("Handbook.md", Some("# Guide\n\nSecond version, by Bob.\n\nAnd a section by Carol.\n")),
            ("Team/Setup.md", Some("# Setup\n\nBack to [[Home]].\n")),
        ],
    );
}

async fn history_of(api: &Api, ws: &str, slug: &str) -> Vec<Value> {
    let (s, h) = api.get(&format!("/api/pages/{slug}/history?ws={ws}")).await;
    assert_eq!(s, StatusCode::OK, "{h}");
    h["items"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_git_repository_is_imported_with_its_history_authors_dates_renames_and_deletions() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ann@x.io").await;
    let ws = default_ws(&api).await;
    // Carol has an account and is a member: her commit becomes hers.
    let carol = srv.user(CAROL.1).await;
    let (s, body) =
        api.post(&format!("/api/workspaces/{ws}/members"), json!({"email": CAROL.1, "role": "member"})).await;
    assert!(s.is_success(), "{body}");
    let (_, carol_me) = carol.get("/api/me").await;
    let dir = tempfile::tempdir().unwrap();
    wiki_history(dir.path());

    let report = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(report.kind, "git");
    assert_eq!(report.commits, 4, "{report:#?}");
    // git reads the repository: its own rename detection pairs the files.
    assert_eq!(report.renames_found_by.as_deref(), Some("git"));
    assert_eq!(report.followed_renames.len(), 1, "{report:#?}");
    assert_eq!(
        (report.followed_renames[0].from.as_str(), report.followed_renames[0].to.as_str()),
        ("guide", "handbook")
    );
    assert_eq!(report.trashed, ["old"]);
    assert!(report.pages.iter().all(|p| p.action != PageAction::Failed), "{:#?}", report.pages);

    // The renamed page carries the whole history of the file, oldest last, with the
    // source's dates.
    let handbook = page(&api, &ws, "handbook").await;
    assert!(handbook["content"].as_str().unwrap().ends_with("And a section by Carol.\n"), "{handbook}");
    let h = history_of(&api, &ws, "handbook").await;
    let dates: Vec<&str> = h.iter().map(|e| &e["created_at"].as_str().unwrap()[..10]).collect();
    assert_eq!(dates, ["2021-06-04", "2021-05-03", "2021-04-02", "2021-03-01"], "{h:#?}");
    // The member's commit is hers; the others are the importer's saves.
    assert_eq!(h[0]["author"]["id"], carol_me["id"], "{h:#?}");
    let (_, ann_me) = api.get("/api/me").await;
    assert_eq!(h[2]["author"]["id"], ann_me["id"], "{h:#?}");
    // The old name answers for the page at its new one (a rename keeps its addresses).
    let (s, old) = api.get(&format!("/api/pages/guide?ws={ws}")).await;
    assert_eq!((s, old["slug"].as_str()), (StatusCode::OK, Some("handbook")), "the old name leads to the new");
    // The deleted page is in the trash with its history; the new folder became a page.
    let (_, trash) = api.get(&format!("/api/trash?ws={ws}")).await;
    assert!(trash.to_string().contains("\"old\""), "{trash}");
    assert_eq!(page(&api, &ws, "setup").await["parent"], "team");

    // The commits name the source's authors and dates; the importer commits them.
    let repo = srv.ctx.workspace_dir(&ws);
    let log = git(&repo, &["log", "--format=%an <%ae>|%aI|%cn|%s", "--reverse"]);
    let bob = log.lines().find(|l| l.starts_with("Bob Outside <bob@elsewhere.example>")).expect(&log);
    assert!(bob.contains("|2021-04-02T11:00:00Z|ann@x.io|"), "{bob}");
    let messages = git(&repo, &["log", "--format=%B"]);
    assert!(messages.contains("Imported from "), "{messages}");
    assert_fsck(&repo);

    // A second import changes nothing.
    let head = || git(&repo, &["rev-parse", "HEAD"]);
    let before = head();
    let again = run(&srv, &ws, dir.path(), None, false).await;
    assert!(again.pages.iter().all(|p| p.action == PageAction::Unchanged), "{:#?}", again.pages);
    assert_eq!(head(), before, "a second import wrote a commit");

    // A new source commit: one new revision, only where it changed something.
    commit(
        dir.path(),
        ALICE,
        "2021-07-05T14:00:00Z",
        "Touch home",
        &[("Home.md", Some("# Home\n\nSee [[Handbook]].\n"))],
    );
    let third = run(&srv, &ws, dir.path(), None, false).await;
    let changed = changed(&third);
    assert_eq!(changed, [("home", PageAction::Updated, 1)], "{:#?}", third.pages);
    // Home: created, and this commit — as `git log --follow Home.md` lists it. The
    // guide's rename left Home's `[[Guide]]` as the source had it (the old name stays an
    // alias of the page, so the link still leads there).
    assert_eq!(history_of(&api, &ws, "home").await.len(), 2);

    // Rebuilding the index from the repository gives the same history.
    let before = history_of(&api, &ws, "handbook").await;
    cairn::testing::reindex::all(&srv.ctx).await.unwrap();
    assert_eq!(history_of(&api, &ws, "handbook").await, before);
    srv.stop().await;
}

#[tokio::test]
async fn no_history_imports_a_repository_as_a_folder() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    wiki_history(dir.path());
    let opts =
        Options { path: dir.path().to_owned(), workspace: ws.clone(), as_email: None, dry_run: false, history: false };
    let report = import::import(&srv.ctx, &opts, &|_, _, _| {}).await.unwrap();
    assert_eq!(report.kind, "folder");
    assert!(report.skipped.iter().any(|s| s.source == ".git/"), "{:#?}", report.skipped);
    assert_eq!(history_of(&api, &ws, "handbook").await.len(), 1);
    srv.stop().await;
}

/// `git log --follow` of `path` in the source: the subjects of the commits that changed
/// the file, newest first.
fn follow(dir: &Path, path: &str) -> Vec<String> {
    git(&dir.join(".git"), &["log", "--follow", "--format=%s", "--", path]).lines().map(str::to_owned).collect()
}

/// Notes of the same name in several folders, a folder that sorts first arriving later,
/// renames, a move to another folder, a deletion and a file that comes back.
fn languages_history(dir: &Path) {
    git_init(dir);
    // Texts of different languages share no line, so that git sees no copy between them.
    let body = |lang: &str, v: u32| match lang {
        "German" => format!("# Leinwand\n\nFassung {v}.\n\nEine Leinwand ist eine Tafel aus Karten.\n"),
        _ => format!("# Canvas\n\nVersion {v}.\n\nA canvas is a board of cards.\nCards hold notes.\n"),
    };
    let long =
        |what: &str| format!("# {what}\n\n{}\n", "This paragraph is long enough for git to see a rename. ".repeat(8));
    commit(
        dir,
        ALICE,
        "2022-01-01T10:00:00Z",
        "English canvas",
        &[
            ("en/Canvas.md", Some(body("English", 1).as_str())),
            ("en/Intro.md", Some(long("Intro").as_str())),
            ("en/Guide.md", Some(long("Guide").as_str())),
            ("en/Temp.md", Some("# Temp\n\nShort-lived.\n")),
        ],
    );
    commit(
        dir,
        ALICE,
        "2022-01-02T10:00:00Z",
        "German canvas, English v2",
        &[("de/Canvas.md", Some(body("German", 1).as_str())), ("en/Canvas.md", Some(body("English", 2).as_str()))],
    );
    commit(dir, ALICE, "2022-01-03T10:00:00Z", "English v3", &[("en/Canvas.md", Some(body("English", 3).as_str()))]);
    git_mv(dir, "en/Intro.md", "en/Introduction.md");
    commit(dir, ALICE, "2022-01-04T10:00:00Z", "Rename the intro", &[]);
    commit(
        dir,
        ALICE,
        "2022-01-05T10:00:00Z",
        "A folder that sorts first, and a removal",
        &[("a/Canvas.md", Some("Unrelated words: apples, rivers, trains.\n")), ("en/Temp.md", None)],
    );
    std::fs::create_dir(dir.join("docs")).unwrap();
    git_mv(dir, "en/Guide.md", "docs/Guide.md");
    commit(dir, ALICE, "2022-01-06T10:00:00Z", "Move the guide to docs", &[]);
    commit(
        dir,
        ALICE,
        "2022-01-07T10:00:00Z",
        "Temp is back, German v2",
        &[("en/Temp.md", Some("# Temp\n\nShort-lived.\n")), ("de/Canvas.md", Some(body("German", 2).as_str()))],
    );
}

#[tokio::test]
async fn a_history_import_keeps_each_file_on_its_own_page_as_git_log_follow_sees_it() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    languages_history(dir.path());

    let report = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(report.commits, 7);
    assert!(report.pages.iter().all(|p| p.action != PageAction::Failed), "{:#?}", report.pages);
    // The file that had the name first keeps the plain slug; later ones get suffixes.
    let slug_of = |source: &str| {
        report
            .pages
            .iter()
            .find(|p| p.source == source)
            .unwrap_or_else(|| panic!("{source}: {:#?}", report.pages))
            .slug
            .clone()
    };
    assert_eq!(slug_of("en/Canvas.md"), "canvas");
    assert_eq!(slug_of("de/Canvas.md"), "canvas-2");
    assert_eq!(slug_of("a/Canvas.md"), "canvas-3");
    assert_eq!(slug_of("docs/Guide.md"), "guide", "a file moved under the same name keeps its slug");
    assert_eq!(slug_of("en/Introduction.md"), "introduction");

    // File by file: the page holds the file's content at the head, and one revision per
    // commit `git log --follow` lists for it, with that commit's subject as its message.
    let files = git(&dir.path().join(".git"), &["ls-files"]);
    for path in files.lines() {
        let slug = slug_of(path);
        let p = page(&api, &ws, &slug).await;
        let on_disk = std::fs::read_to_string(dir.path().join(path)).unwrap();
        assert_eq!(p["content"], on_disk.as_str(), "{path} → {slug}");
        let messages: Vec<String> =
            history_of(&api, &ws, &slug).await.iter().map(|r| r["message"].as_str().unwrap().to_owned()).collect();
        assert_eq!(messages, follow(dir.path(), path), "{path} → {slug}");
    }
    assert_eq!(page(&api, &ws, "canvas").await["parent"], "en");
    assert_eq!(page(&api, &ws, "guide").await["parent"], "docs");
    // Nothing else is live or in the trash: the intro's old name was renamed, the
    // removed note came back from the trash, and `en`'s guide went with its file.
    let (_, trash) = api.get(&format!("/api/trash?ws={ws}")).await;
    assert_eq!(trash["items"], json!([]), "{trash}");
    let live: usize = files.lines().count() + 4; // and the folders a, de, docs, en
    let (_, tree) = api.get(&format!("/api/pages?ws={ws}")).await;
    fn count(nodes: &Value) -> usize {
        nodes.as_array().map_or(0, |a| a.iter().map(|n| 1 + count(&n["children"])).sum())
    }
    assert_eq!(count(&tree), live, "{tree:#}");
    assert_fsck(&srv.ctx.workspace_dir(&ws));

    // The import kept the slugs given before the last commit but one, where the next
    // import resumes.
    let checkpoint = srv.ctx.workspace_dir(&ws).join("cairn-import-slugs.json");
    let kept: Value = serde_json::from_slice(&std::fs::read(&checkpoint).unwrap()).unwrap();
    let log = git(&dir.path().join(".git"), &["log", "--first-parent", "--format=%H"]);
    assert_eq!(kept["before"].as_str(), log.lines().nth(1), "{kept}");

    // A second import starts from those slugs and writes nothing.
    let again = run(&srv, &ws, dir.path(), None, false).await;
    assert!(again.pages.iter().all(|p| p.action == PageAction::Unchanged), "{:#?}", again.pages);
    // Without them (a damaged file), the slugs are decided again from every tree, and a
    // new commit lands on the right page.
    std::fs::write(&checkpoint, b"{ not json").unwrap();
    commit(dir.path(), ALICE, "2022-01-08T10:00:00Z", "English v4", &[("en/Canvas.md", Some("# Canvas\n\nv4\n"))]);
    let third = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(changed(&third), [("canvas", PageAction::Updated, 1)], "{:#?}", third.pages);
    let kept: Value = serde_json::from_slice(&std::fs::read(&checkpoint).unwrap()).unwrap();
    let log = git(&dir.path().join(".git"), &["log", "--first-parent", "--format=%H"]);
    assert_eq!(kept["before"].as_str(), log.lines().nth(1), "kept again for the new last commit: {kept}");
    // And from kept slugs, the next commit too.
    commit(dir.path(), ALICE, "2022-01-09T10:00:00Z", "English v5", &[("en/Canvas.md", Some("# Canvas\n\nv5\n"))]);
    let fourth = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(changed(&fourth), [("canvas", PageAction::Updated, 1)], "{:#?}", fourth.pages);
    assert_fsck(&srv.ctx.workspace_dir(&ws));
    srv.stop().await;
}

#[tokio::test]
async fn an_unreadable_file_is_reported_with_its_commit_and_the_import_goes_on() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    git_init(dir.path());
    write(dir.path(), "video.mp4", b"not read: never needed");
    commit(
        dir.path(),
        ALICE,
        "2022-02-01T10:00:00Z",
        "Start",
        &[("Home.md", Some("# Home\n\nHello.\n")), ("Lost.md", Some("# Lost\n\nThis blob goes missing.\n"))],
    );
    commit(dir.path(), ALICE, "2022-02-02T10:00:00Z", "More", &[("More.md", Some("# More\n"))]);
    lose_blob(dir.path(), "Lost.md");
    lose_blob(dir.path(), "video.mp4");

    let report = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(report.commits, 2);
    // Named with the first commit that could not read it.
    let reason = skipped_reason(&report, "Lost.md");
    let first = git(&dir.path().join(".git"), &["rev-list", "--max-parents=0", "HEAD"]);
    assert!(reason.starts_with(&format!("unreadable in commit {}", first.trim())), "{reason}");
    assert!(skipped_reason(&report, "video.mp4").contains("neither markdown nor an image"));
    assert_eq!(page(&api, &ws, "more").await["title"], "More");
    assert_eq!(page(&api, &ws, "home").await["title"], "Home");
    srv.stop().await;
}

#[tokio::test]
async fn no_history_imports_a_bare_repositorys_head() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    wiki_history(dir.path());
    let bare = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--bare", dir.path().to_str().unwrap(), bare.path().join("wiki.git").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let opts = Options {
        path: bare.path().join("wiki.git"),
        workspace: ws.clone(),
        as_email: None,
        dry_run: false,
        history: false,
    };
    let report = import::import(&srv.ctx, &opts, &|_, _, _| {}).await.unwrap();
    assert_eq!(report.kind, "tree");
    assert_eq!(report.count(PageAction::Created), 4, "{:#?}", report.pages);
    assert_eq!(history_of(&api, &ws, "handbook").await.len(), 1);
    assert!(page(&api, &ws, "handbook").await["content"].as_str().unwrap().ends_with("And a section by Carol.\n"));
    srv.stop().await;
}

/// A zip entry named by an absolute path (or one climbing out of the zip) is skipped and
/// reported, never imported as a page (docs/import.md).
#[tokio::test]
async fn absolute_and_climbing_zip_entries_are_skipped() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    let zip_path = dir.path().join("slip.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        for (name, body) in
            [("/zipslip-target/ABSOLUTE.md", "# Absolute\n"), ("../Climb.md", "# Climb\n"), ("Fine.md", "# Fine\n")]
        {
            z.start_file(name, options).unwrap();
            std::io::Write::write_all(&mut z, body.as_bytes()).unwrap();
        }
        z.finish().unwrap();
    }
    let report = run(&srv, &ws, &zip_path, None, false).await;
    assert!(skipped_reason(&report, "/zipslip-target/ABSOLUTE.md").contains("unsafe path"), "{:#?}", report.skipped);
    assert!(skipped_reason(&report, "../Climb.md").contains("unsafe path"), "{:#?}", report.skipped);
    let slugs: Vec<&str> = report.pages.iter().map(|p| p.slug.as_str()).collect();
    assert_eq!(slugs, ["fine"], "{report:#?}");
    assert_eq!(api.get(&format!("/api/pages/absolute?ws={ws}")).await.0, StatusCode::NOT_FOUND);
    srv.stop().await;
}

/// The shapes of Obsidian's help repository that its real history holds: a commit that
/// removes notes and adds a video whose blob is missing (as in a partial clone), a
/// markdown blob missing where git would look for a rename, the folder note of `en/`
/// renamed into a subfolder and later removed, a subfolder's folder note renamed to a
/// plain note, two notes of one name where a link means the one beside it, an image
/// embed with a size inside a table, a rename and a move that edit their notes too, and
/// a link spelled anew that leads where it led.
/// Answers `git log --follow` of the files named in `followed`, read before the blobs
/// went missing (git itself cannot follow renames without them).
fn help_history(dir: &Path, followed: &[&str]) -> std::collections::HashMap<String, Vec<String>> {
    git_init(dir);
    let long = |what: &str| {
        format!(
            "# {what}\n\n{}\n",
            format!("{what} is described here at length, for git's rename detection. ").repeat(8)
        )
    };
    let mut first: Vec<(String, String)> = [
        ("en/Index.md", "# Obsidian Help\n\nWelcome to the help.\n".to_owned()),
        ("en/Canvas.md", long("Canvas")),
        ("en/Obsidian/Obsidian.md", long("Obsidian")),
        ("en/Obsidian/Code of conduct.md", long("Code of conduct")),
        ("en/Publish/Security and privacy.md", "# Security and privacy\n\nOf Publish.\n".to_owned()),
        ("en/Publish/Setup.md", "# Setup\n\nRead [[Security and privacy]] first.\n".to_owned()),
        ("en/Publish/Notes.md", "# Notes\n\nSee [[Publish/Security and privacy|the policy]].\n".to_owned()),
        ("en/Sync/Security and privacy.md", "# Security and privacy\n\nOf Sync.\n".to_owned()),
        (
            "en/People.md",
            "# People\n\n| Who | Picture |\n|---|---|\n| Engelbart | ![[Engelbart.png\\|100]] |\n".to_owned(),
        ),
        ("en/Old4.md", long("Lost and found")),
    ]
    .into_iter()
    .map(|(p, c)| (p.to_owned(), c))
    .collect();
    for i in 1..=3 {
        first.push((format!("en/Old{i}.md"), format!("# Old {i}\n\nRemoved with the video's arrival.\n")));
    }
    write(dir, "en/Attachments/Engelbart.png", PNG);
    let files: Vec<(&str, Option<&str>)> = first.iter().map(|(p, c)| (p.as_str(), Some(c.as_str()))).collect();
    commit(dir, ALICE, "2023-01-01T10:00:00Z", "English", &files);
    write(dir, "en/Attachments/demo.mp4", b"a video the clone does not hold");
    commit(
        dir,
        ALICE,
        "2023-01-02T10:00:00Z",
        "A video, three notes removed",
        &[("en/Old1.md", None), ("en/Old2.md", None), ("en/Old3.md", None)],
    );
    std::fs::create_dir_all(dir.join("en/Obsidian")).unwrap();
    git_mv(dir, "en/Index.md", "en/Obsidian/Index.md");
    commit(dir, ALICE, "2023-01-03T10:00:00Z", "Move the index", &[]);
    git_mv(dir, "en/Obsidian/Obsidian.md", "en/Obsidian/About Obsidian.md");
    commit(dir, ALICE, "2023-01-04T10:00:00Z", "About Obsidian", &[]);
    commit(
        dir,
        ALICE,
        "2023-01-05T10:00:00Z",
        "Drop the index; lost and found",
        &[
            ("en/Obsidian/Index.md", None),
            ("en/Old4.md", None),
            ("en/Lost.md", Some(format!("{}One line more.\n", long("Lost and found")).as_str())),
        ],
    );
    // One commit renames a note and edits it, and moves another to a subfolder and
    // edits it: one revision each, as git has one commit each.
    git_mv(dir, "en/Canvas.md", "en/Canvas view.md");
    git_mv(dir, "en/Obsidian/Code of conduct.md", "en/Publish/Code of conduct.md");
    commit(
        dir,
        ALICE,
        "2023-01-06T10:00:00Z",
        "Canvas view; the code of conduct under Publish",
        &[
            ("en/Canvas view.md", Some(format!("{}Now a view.\n", long("Canvas")).as_str())),
            ("en/Publish/Code of conduct.md", Some(format!("{}For Publish too.\n", long("Code of conduct")).as_str())),
        ],
    );
    // A link spelled anew, from the top folder, leading where it led (git has the
    // commit; the page's content, its links rewritten, stays the same).
    commit(
        dir,
        ALICE,
        "2023-01-07T10:00:00Z",
        "Links with their folders",
        &[("en/Publish/Notes.md", Some("# Notes\n\nSee [[en/Publish/Security and privacy|the policy]].\n"))],
    );
    let histories = followed.iter().map(|path| (path.to_string(), follow(dir, path))).collect();
    lose_blob(dir, "en/Attachments/demo.mp4");
    lose_blob(dir, "en/Lost.md");
    histories
}

/// Removes the blob of `path` at HEAD from the object store of the repository at `dir`,
/// as a partial clone lacks it.
fn lose_blob(dir: &Path, path: &str) {
    let id = git(&dir.join(".git"), &["rev-parse", &format!("HEAD:{path}")]);
    let id = id.trim();
    std::fs::remove_file(dir.join(".git/objects").join(&id[..2]).join(&id[2..])).unwrap();
}

#[tokio::test]
async fn folder_notes_missing_blobs_tables_and_links_nearby_import_as_the_files_are() {
    let Setup { _env, srv, api, ws, dir } = setup().await;
    let followed = [
        "en/Canvas view.md",
        "en/Publish/Code of conduct.md",
        "en/Publish/Setup.md",
        "en/People.md",
        "en/Publish/Notes.md",
    ];
    let histories = help_history(dir.path(), &followed);
    let report = run(&srv, &ws, dir.path(), None, false).await;
    assert_eq!(report.commits, 7);
    // git cannot compare a markdown blob it lacks: libgit2 finds the renames, and says why.
    let found_by = report.renames_found_by.as_deref().unwrap_or_default();
    assert!(found_by.starts_with("libgit2 (git log failed: "), "{found_by}");
    assert!(report.pages.iter().all(|p| p.action != PageAction::Failed), "{:#?}", report.pages);
    let head = git(&dir.path().join(".git"), &["rev-parse", "HEAD~2"]);
    let lost = skipped_reason(&report, "en/Lost.md");
    assert!(lost.starts_with(&format!("unreadable in commit {}", head.trim())), "{lost}");
    assert!(skipped_reason(&report, "en/Attachments/demo.mp4").contains("neither markdown nor an image"));
    let slug_of = |source: &str| {
        let entry = report.pages.iter().find(|p| p.source == source);
        entry.unwrap_or_else(|| panic!("{source}: {:#?}", report.pages)).slug.clone()
    };

    // Every note at the head is a live page under its folder's page, with its text; the
    // folders whose notes went are empty pages that keep their children.
    let en = page(&api, &ws, "en").await;
    assert_eq!(en["content"], "", "en/'s folder note moved away: its page is the folder's");
    let obsidian = page(&api, &ws, "obsidian").await;
    assert_eq!((obsidian["content"].as_str(), obsidian["parent"].as_str()), (Some(""), Some("en")));
    let under = |path: &str, parent: &str| (path.to_owned(), parent.to_owned());
    for (path, parent) in [
        under("en/Canvas view.md", "en"),
        under("en/People.md", "en"),
        under("en/Obsidian/About Obsidian.md", "obsidian"),
        under("en/Publish/Code of conduct.md", "publish"),
        under("en/Publish/Setup.md", "publish"),
        under("en/Publish/Security and privacy.md", "publish"),
        under("en/Sync/Security and privacy.md", "sync"),
    ] {
        let p = page(&api, &ws, &slug_of(&path)).await;
        assert_eq!(p["parent"], parent.as_str(), "{path}");
        if path != "en/People.md" {
            let text = std::fs::read_to_string(dir.path().join(&path)).unwrap();
            assert_eq!(p["content"], text.as_str(), "{path}");
        }
    }
    // The link means the note beside it (it needed no rewriting).
    let setup = page(&api, &ws, &slug_of("en/Publish/Setup.md")).await;
    assert_eq!(setup["links"], json!([slug_of("en/Publish/Security and privacy.md")]));
    // The image in a table keeps its cell: its pipe is escaped.
    let people = page(&api, &ws, &slug_of("en/People.md")).await;
    let png = upload_name(PNG);
    assert_eq!(
        people["content"],
        format!("# People\n\n| Who | Picture |\n|---|---|\n| Engelbart | ![Engelbart.png\\|100](/uploads/{png}) |\n")
    );
    // The removed notes, and the index that was en/'s folder note, are in the trash:
    // each on its own.
    let (_, trash) = api.get(&format!("/api/trash?ws={ws}")).await;
    let mut trashed: Vec<&str> =
        trash["items"].as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap()).collect();
    trashed.sort_unstable();
    assert_eq!(trashed, ["index", "old1", "old2", "old3", "old4"], "{trash:#}");

    // Every other page's history is its file's, as `git log --follow` lists it. The
    // files that were a folder's note and are not any more start their own page's
    // history at that commit (docs/import.md, "A git repository and its history").
    for path in followed {
        let slug = slug_of(path);
        let messages: Vec<String> =
            history_of(&api, &ws, &slug).await.iter().map(|r| r["message"].as_str().unwrap().to_owned()).collect();
        assert_eq!(messages, histories[path], "{path} → {slug}");
    }
    // The respelled link's commit is a revision of its own, though the content it leaves
    // is the one before.
    let notes = slug_of("en/Publish/Notes.md");
    let revisions = history_of(&api, &ws, &notes).await;
    let content_at = |sha: &str| {
        let url = format!("/api/pages/{notes}/history/{sha}?ws={ws}");
        let api = &api;
        async move { api.get(&url).await.1["content"].as_str().unwrap().to_owned() }
    };
    let (newest, before) = (revisions[0]["sha"].as_str().unwrap(), revisions[1]["sha"].as_str().unwrap());
    assert_eq!(content_at(newest).await, content_at(before).await);
    let about = history_of(&api, &ws, &slug_of("en/Obsidian/About Obsidian.md")).await;
    let about: Vec<&str> = about.iter().map(|r| r["message"].as_str().unwrap()).collect();
    assert_eq!(about, ["About Obsidian"]);

    // Importing again changes nothing and finds nothing wrong.
    let again = run(&srv, &ws, dir.path(), None, false).await;
    assert!(again.pages.iter().all(|p| p.action == PageAction::Unchanged), "{:#?}", again.pages);
    srv.stop().await;
}
