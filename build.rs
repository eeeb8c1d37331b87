//! Builds the web app (`web/`, TypeScript and Vite) and embeds its files in the binary,
//! so the one `cairn` binary serves the current app — `cargo run --release` on a fresh
//! clone included.
//!
//! `npm ci` runs when `web/node_modules` is missing or older than the lock file, then
//! `npm run build` writes the app into the target directory, kept by a hash of the
//! app's inputs, so that every build of the same app (check, clippy, test, another
//! feature set) finds it built. Cargo re-runs this only when the app's sources change. Text files are also gzipped here, once, at the best level, so the
//! server sends them compressed without compressing on every request. `CAIRN_WEB_DIST=<dir>` embeds an already built app instead (for
//! packagers who build it separately, or a machine without Node.js).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// What a change to re-build the app on: its sources and build settings, not `node_modules`.
const WEB_INPUTS: &[&str] =
    &["src", "public", "tools", "index.html", "package.json", "package-lock.json", "vite.config.ts", "tsconfig.json"];

/// The server's OpenAPI document as the tests keep it: the app's API types are generated
/// from it, and the app's build refuses to run while they are stale.
const API_SNAPSHOT: &str = "tests/snapshots/system__openapi.snap";

fn main() {
    pack_relocations();
    println!("cargo::rerun-if-env-changed=CAIRN_WEB_DIST");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dist = match env::var_os("CAIRN_WEB_DIST") {
        Some(dir) => PathBuf::from(dir),
        None => build_web(&out),
    };
    let mut files = Vec::new();
    collect(&dist, &dist, &mut files);
    files.sort();
    assert!(
        files.iter().any(|(name, _)| name == "index.html"),
        "the built web app in {} has no index.html",
        dist.display()
    );
    let gz_dir = out.join("web-gz");
    let mut table = String::from("/// The built web app (`Asset` is defined where this is included).\n");
    table.push_str("pub(crate) const WEB_ASSETS: &[Asset] = &[\n");
    for (name, path) in &files {
        let kind = content_type(name);
        let gz = match gzip(path, &gz_dir.join(format!("{name}.gz")), kind) {
            Some(gz) => format!("Some(include_bytes!({:?}))", gz.display()),
            None => "None".to_owned(),
        };
        table.push_str(&format!("    ({name:?}, {kind:?}, include_bytes!({:?}), {gz}),\n", path.display()));
    }
    table.push_str("];\n");
    fs::write(out.join("web_assets.rs"), table).expect("write web_assets.rs");
}

fn build_web(out: &Path) -> PathBuf {
    let web = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("web");
    for input in WEB_INPUTS {
        println!("cargo::rerun-if-changed=web/{input}");
    }
    println!("cargo::rerun-if-changed={API_SNAPSHOT}");
    // Built once for each state of the app's inputs: a `cargo check`, a `cargo clippy`
    // and a build with other features each run this script in a directory of their
    // own, and find the app the first of them built (nothing of npm runs again).
    let built = built_apps(out).join(format!("{:016x}", inputs_hash(&web)));
    if built.join("index.html").is_file() {
        return built;
    }
    let lock = web.join("package-lock.json");
    let installed = web.join("node_modules/.package-lock.json");
    if modified(&installed) < modified(&lock) {
        npm(&web, &["ci", "--no-audit", "--no-fund"]);
    }
    let building = built.with_extension(format!("building-{}", std::process::id()));
    let dist_arg = building.to_str().expect("the target directory's path is UTF-8");
    npm(&web, &["run", "build", "--", "--outDir", dist_arg, "--emptyOutDir"]);
    // Another build that finished the same app first is as good as this one.
    if fs::rename(&building, &built).is_err() && built.join("index.html").is_file() {
        let _ = fs::remove_dir_all(&building);
    }
    built
}

/// Where built apps are kept: beside the build scripts' directories of this profile
/// (`OUT_DIR` is `<target>/<profile>/build/<package>-<hash>/out`).
fn built_apps(out: &Path) -> PathBuf {
    out.ancestors().nth(3).unwrap_or(out).join("web-app")
}

/// A hash of every input of the app's build (`WEB_INPUTS`, the API snapshot): names and
/// bytes. It only names a directory of the target directory (std's hasher is stable
/// within one toolchain, which builds the whole target directory). Apps built for
/// earlier states of the inputs stay there until `cargo clean` (about 1 MB each).
fn inputs_hash(web: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut files = Vec::new();
    for input in WEB_INPUTS {
        let path = web.join(input);
        if path.is_dir() {
            collect(&path, &path, &mut files);
        } else if path.is_file() {
            files.push((String::new(), path));
        }
    }
    let mut paths: Vec<PathBuf> = files.into_iter().map(|(_, path)| path).collect();
    let root = web.parent().expect("web/ is in the crate");
    paths.push(root.join(API_SNAPSHOT));
    paths.sort();
    // By their names in the crate, so that two checkouts of the same app share it.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for path in paths {
        path.strip_prefix(root).unwrap_or(&path).hash(&mut hasher);
        fs::read(&path).unwrap_or_default().hash(&mut hasher);
    }
    hasher.finish()
}

/// Gzips a text file worth compressing into `to`; answers `to` when it is smaller.
fn gzip(from: &Path, to: &Path, kind: &str) -> Option<PathBuf> {
    use std::io::Write;
    let text = kind.starts_with("text/") || kind.contains("json") || kind.contains("svg");
    let bytes = fs::read(from).expect("read a built file");
    if !text || bytes.len() < 1024 {
        return None;
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&bytes).expect("gzip in memory");
    let gz = encoder.finish().expect("gzip in memory");
    if gz.len() >= bytes.len() {
        return None;
    }
    fs::create_dir_all(to.parent().expect("a parent")).expect("create the gzip directory");
    fs::write(to, gz).expect("write a gzipped file");
    Some(to.to_owned())
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn npm(dir: &Path, args: &[&str]) {
    let status = Command::new("npm").args(args).current_dir(dir).status().unwrap_or_else(|e| {
        panic!(
            "building the web app needs Node.js and npm on PATH (`npm {}` in {} failed to start: {e}); \
             install them, or set CAIRN_WEB_DIST to an already built web app",
            args.join(" "),
            dir.display()
        )
    });
    assert!(status.success(), "`npm {}` in {} failed: {status}", args.join(" "), dir.display());
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let name = path.strip_prefix(root).expect("under root").to_str().expect("UTF-8 name").replace('\\', "/");
            files.push((name, path));
        }
    }
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        "webmanifest" => "application/manifest+json",
        _ => "application/octet-stream",
    }
}

/// Links the server with its relative relocations packed (`DT_RELR`, glibc 2.36 and GNU
/// ld 2.38 or later): a position-independent binary of this size otherwise carries
/// 1.3 MB of them, which the loader reads in full at every start and which then stay in
/// the process's resident memory (measured in commit 89bcd07). The
/// binary keeps its address randomisation. A linker that does not know the option warns
/// and links as before; GNU ld adds the packed form only when glibc supports it.
fn pack_relocations() {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
