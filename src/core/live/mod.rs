//! Real-time co-editing: everyone who opens a page's editor joins its session, where the
//! page's raw markdown is one shared text (a Yjs document whose root `Y.Text` is named
//! `markdown`), kept in step with the Yjs sync and awareness protocols (`yrs::sync`).
//!
//! - A session is keyed by the page's stable id, not its slug: a rename or a move while
//!   people edit changes nothing for them, and the session saves to the page wherever it
//!   is then.
//! - **Durable before acknowledged.** Each update a client sends is applied, then stored
//!   in the session's update log ([`log`]) before the connection's next message is read
//!   and before it is passed to the others. The protocol's own exchange is the
//!   acknowledgement: a client that sends `SyncStep1` after its updates gets `SyncStep2`
//!   only once every update it sent before is in the database. The log's first row is
//!   the text the session began with, so replaying it after a restart rebuilds the same
//!   document and the session goes on from there.
//! - **Git stays the history.** The shared text becomes an ordinary save through the core
//!   (revision, index, links, webhooks) when editing pauses for [`PAUSE`], at least every
//!   [`AT_LEAST`] while it goes on, and when the last person leaves. The save is made as
//!   the person who edited last, against the revision the session last saved or began
//!   from, merged three-way when another door saved the page meanwhile; the merged text
//!   comes back into the session as an ordinary edit. Then the log is compacted to one
//!   row holding the whole document.
//! - **One document for good.** A session nobody has open ends, but its document stays
//!   (the compacted row): the next session goes on from it, a save another door made
//!   meanwhile coming in as an edit. So a browser's copy of the document — edits made
//!   offline, kept across a reload — merges into whichever session is open when it comes
//!   back, exactly, instead of doubling the text. Purging the page erases it.

mod log;
pub(crate) mod relay;
pub(crate) mod watch;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, broadcast};
use yrs::encoding::read::Cursor;
use yrs::sync::{Awareness, AwarenessUpdate, Message, MessageReader, SyncMessage};
use yrs::updates::decoder::{Decode, DecoderV1};
use yrs::updates::encoder::Encode;
use yrs::{Doc, GetString, ReadTxn, StateVector, Text, TextRef, Transact, Update};

use super::Ctx;
use crate::core::pages::rows::Row;
use crate::core::pages::{self, PageUpdate};
use crate::core::users::User;
use crate::core::workspaces::{self, Access};
use crate::error::{Error, Result};
use crate::ids::Slug;
use crate::store::Backend;

/// The name of the shared text, the document's root `Y.Text`.
pub(crate) const TEXT: &str = "markdown";
/// Editing that pauses this long becomes a revision.
pub(crate) const PAUSE: Duration = Duration::from_secs(3);
/// While editing goes on, a revision at least this often.
pub(crate) const AT_LEAST: Duration = Duration::from_secs(60);
/// The largest message a connection may send (a page is at most 1 MiB of markdown; an
/// update carrying all of it is a little more).
pub(crate) const MAX_MESSAGE: usize = 2 * 1024 * 1024;
/// Messages a connection may send per second, on average over [`BURST`] messages.
const PER_SECOND: f64 = 100.0;
const BURST: f64 = 400.0;
/// Messages waiting for a slow connection before it is closed (it resyncs on reconnect).
const BACKLOG: usize = 1024;

/// The open sessions, by workspace id and page id.
pub struct Sessions {
    open: tokio::sync::Mutex<HashMap<(i64, String), Arc<Session>>>,
    /// How many are open: a batch of saves looks for theirs only when some are.
    count: AtomicUsize,
    /// Who follows which page without editing it (the page view).
    pub(crate) watchers: watch::Watchers,
    /// This process among those sharing the database (its notes are not its to take in).
    process: u64,
    /// The pages whose session is open in other processes sharing the database, and in
    /// which (a save of one here is announced to them).
    elsewhere: Mutex<HashMap<(i64, String), HashSet<u64>>>,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions {
            open: Default::default(),
            count: AtomicUsize::new(0),
            watchers: Default::default(),
            process: rand::random(),
            elsewhere: Default::default(),
        }
    }
}

/// One page's session.
pub(crate) struct Session {
    ws_id: i64,
    uid: String,
    /// Access to the page's workspace, for reading the page (its workspace id is all
    /// that is used).
    reader: Access,
    /// Another door saved the page: its saver takes the change in.
    outside: AtomicBool,
    state: Mutex<State>,
    out: broadcast::Sender<Outgoing>,
    /// Wakes the session's saver (a change, a connection gone).
    wake: Notify,
}

struct State {
    awareness: Awareness,
    /// The text of the revision the session began from or last saved, and that revision.
    committed: String,
    base: String,
    /// When the text first changed since `committed`, and when it last changed.
    dirty: Option<(Instant, Instant)>,
    /// Who edited last, as they connected (the session's next revision is theirs).
    last_editor: Option<(User, Access)>,
    /// Everyone who edited since the last save, in the order they first did: (user id,
    /// `Name <email>`, the number of the change they made last). The others than the
    /// saver are the revision's co-authors.
    contributors: Vec<(i64, String, u64)>,
    /// Changes applied so far (numbers the contributors' last changes).
    changes: u64,
    /// The log rows whose updates the document holds: a compaction drops exactly these
    /// (an update applied and not yet stored, or stored by another process and not yet
    /// taken in, keeps its row).
    applied: Vec<i64>,
    /// Its connections, in the order they joined: whose each is, and whether its editor
    /// says its person is typing.
    present: Vec<watch::Present>,
    /// The session ended: its page was trashed, or its saver stopped.
    closed: bool,
}

/// A message for every connection but the one it came from.
#[derive(Clone)]
pub(crate) struct Outgoing {
    from: u64,
    pub bytes: Arc<Vec<u8>>,
    /// The session's page left (trashed or purged): its connections are closed.
    pub gone: bool,
}

impl Outgoing {
    fn new(from: u64, bytes: Vec<u8>) -> Self {
        Outgoing { from, bytes: Arc::new(bytes), gone: false }
    }

    /// Whether the connection `id` sent it (and so does not get it back).
    pub(crate) fn from(&self, id: u64) -> bool {
        self.from == id
    }
}

/// Why a connection is closed by the server.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A message that is no Yjs message, or an update that does not apply.
    Malformed(String),
    /// More messages than [`PER_SECOND`] allows, or a text over the page size limit.
    Limit(String),
    /// The update could not be stored: it was not acknowledged.
    Unavailable,
}

impl Session {
    fn lock(&self) -> MutexGuard<'_, State> {
        crate::sync::lock(&self.state)
    }

    fn text(state: &State) -> TextRef {
        state.awareness.doc().get_or_insert_text(TEXT)
    }

    /// The text's length in bytes, read without copying it (the document counts UTF-8
    /// bytes, yrs's default).
    fn length(state: &State) -> usize {
        let text = Session::text(state);
        let txn = state.awareness.doc().transact();
        text.len(&txn) as usize
    }

    /// Tells the other processes sharing the database (PostgreSQL), without waiting, that
    /// the session opened here (`o`), ended (`e`), or that the page was saved (`s`).
    fn tell_processes(&self, ctx: &Ctx, kind: char) {
        if ctx.db.backend == Backend::Postgres {
            announce(ctx, relay::about(kind, ctx.live.process, self.ws_id, &self.uid));
        }
    }

    /// Tells the other processes sharing the database (PostgreSQL) of a presence change
    /// here, without waiting.
    fn announce(&self, ctx: &Ctx, update: &AwarenessUpdate) {
        // Only where another process has the session open (a cursor moves with every
        // keystroke: one statement each for nobody would be waste). One that opens it
        // later is sent everyone's presence then.
        if ctx.db.backend != Backend::Postgres || !ctx.live.is_open_elsewhere(self.ws_id, &self.uid) {
            return;
        }
        if let Some(payload) = relay::presence(ctx.live.process, self.ws_id, &self.uid, &update.encode_v1()) {
            announce(ctx, payload);
        }
    }

    /// Takes in log rows another process stored: applied (a row already held changes
    /// nothing) and passed to this process's connections. It does not make the text
    /// this process's to save: the process whose connection sent it saves it.
    fn take(&self, rows: Vec<(i64, Vec<u8>)>) {
        for (id, body) in rows {
            let Ok(update) = Update::decode_v1(&body) else { continue };
            let changed = {
                let mut state = self.lock();
                if state.applied.contains(&id) {
                    continue;
                }
                let doc = state.awareness.doc().clone();
                let before = doc.transact().state_vector();
                let mut txn = doc.transact_mut();
                if txn.apply_update(update).is_err() {
                    continue;
                }
                let deleted = !txn.delete_set().is_empty();
                drop(txn);
                state.applied.push(id);
                deleted || doc.transact().state_vector() != before
            };
            if changed {
                let _ = self.out.send(Outgoing::new(0, Message::Sync(SyncMessage::Update(body)).encode_v1()));
            }
        }
    }

    /// Tells the page's watchers who is in the session now.
    fn tell_presence(&self, ctx: &Ctx) {
        if ctx.live.watchers.watched(self.ws_id, &self.uid) {
            let people = watch::people(&self.lock().present);
            ctx.live.watchers.tell(self.ws_id, &self.uid, watch::Event::Presence { people });
        }
    }

    /// The whole document as one update, and the highest log row it covers.
    fn snapshot(state: &State) -> (Vec<u8>, Vec<i64>) {
        (state.awareness.doc().transact().encode_state_as_update_v1(&StateVector::default()), state.applied.clone())
    }

    /// Notes that the log row `id` holds an update the document has.
    fn stored(&self, id: i64) {
        self.lock().applied.push(id);
    }

    /// After a compaction: the rows it dropped are gone, its own row holds them.
    fn compacted(&self, dropped: &[i64], row: i64) {
        let mut state = self.lock();
        state.applied.retain(|id| !dropped.contains(id));
        state.applied.push(row);
    }

    /// The page left (trashed or purged): the session ends with its log as it is (the
    /// text typed since its last save is resumed if the page comes back), and everyone in
    /// it is told.
    fn left(&self) {
        tracing::info!(page = %self.uid, "a co-edited page left (trashed or purged); its session ends with its log kept");
        {
            let mut state = self.lock();
            state.closed = true;
            state.dirty = None;
        }
        let _ = self.out.send(Outgoing { from: 0, bytes: Arc::new(Vec::new()), gone: true });
    }

    fn current(state: &State) -> String {
        let text = Session::text(state);
        let txn = state.awareness.doc().transact();
        text.get_string(&txn)
    }
}

/// Opens (or joins) the session of the live page `row` (`pages::row`), for a caller with
/// `access`.
pub(crate) async fn join(ctx: &Ctx, access: &Access, user: &User, row: Row) -> Result<Connection> {
    let key = (access.workspace_id(), row.uid.clone());
    let mut open = ctx.live.open.lock().await;
    let session = match open.get(&key) {
        Some(s) if !s.lock().closed => s.clone(),
        _ => {
            let s = start(ctx, access, &row.uid, row.content, row.revision).await?;
            s.tell_processes(ctx, 'o');
            if open.insert(key, s.clone()).is_none() {
                ctx.live.count.fetch_add(1, Ordering::Relaxed);
            }
            tokio::spawn(saver(ctx.clone(), s.clone()));
            s
        }
    };
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    session.lock().present.push(watch::Present {
        connection: id,
        user: user.id,
        name: user.name.clone(),
        typing: false,
    });
    drop(open);
    session.tell_presence(ctx);
    Ok(Connection {
        id,
        session,
        ctx: ctx.clone(),
        user: user.clone(),
        access: access.clone(),
        clients: HashSet::new(),
        tokens: BURST,
        refilled: Instant::now(),
    })
}

/// A session from its log, or, without one, from the page's text (stored as the log's
/// first row before anyone is let in).
async fn start(ctx: &Ctx, access: &Access, uid: &str, content: String, revision: String) -> Result<Arc<Session>> {
    let ws_id = access.workspace_id();
    let logged = log::read(ctx, ws_id, uid).await?;
    let doc = Doc::new();
    let text = doc.get_or_insert_text(TEXT);
    let mut applied = Vec::new();
    if logged.is_empty() {
        let base = {
            let mut txn = doc.transact_mut();
            text.insert(&mut txn, 0, &content);
            txn.encode_state_as_update_v1(&StateVector::default())
        };
        applied.push(log::append(ctx, ws_id, uid, 0, &base).await?);
    } else {
        let mut txn = doc.transact_mut();
        for (id, _, body) in &logged {
            let update =
                Update::decode_v1(body).map_err(|e| Error::internal(anyhow::anyhow!("a logged update: {e}")))?;
            txn.apply_update(update).map_err(|e| Error::internal(anyhow::anyhow!("a logged update: {e}")))?;
            applied.push(*id);
        }
    }
    // Only the server's own rows: the document of an ended session, whose text was saved.
    let ended = logged.iter().all(|(_, user, _)| *user == 0);
    let last_editor = match logged.iter().rev().map(|(_, user, _)| *user).find(|u| *u != 0) {
        Some(user) => editor(ctx, access, user).await,
        None => None,
    };
    let now = Instant::now();
    let mut state = State {
        awareness: Awareness::new(doc),
        committed: content,
        base: revision,
        dirty: None,
        last_editor,
        contributors: Vec::new(),
        changes: 0,
        applied,
        present: Vec::new(),
        closed: false,
    };
    let held = Session::current(&state);
    if ended && held != state.committed {
        // Saved elsewhere since that session ended: the page's text comes in as an edit.
        if let Some(update) = replace(&state, &held, &state.committed) {
            state.applied.push(log::append(ctx, ws_id, uid, 0, &update).await?);
        }
    }
    let resumed = Session::current(&state) != state.committed;
    let session = Session {
        ws_id,
        uid: uid.to_owned(),
        reader: access.clone(),
        outside: AtomicBool::new(false),
        state: Mutex::new(State { dirty: resumed.then_some((now, now)), ..state }),
        out: broadcast::channel(BACKLOG).0,
        wake: Notify::new(),
    };
    Ok(Arc::new(session))
}

/// Who a resumed session's text is saved as: its last editor while they are a member,
/// else the workspace's first owner.
async fn editor(ctx: &Ctx, access: &Access, user_id: i64) -> Option<(User, Access)> {
    let slug = access.slug();
    if let Ok(user) = crate::core::users::get(ctx, user_id).await
        && let Ok(access) = workspaces::access(ctx, &user, slug).await
    {
        return Some((user, access));
    }
    let owner = workspaces::first_owner(ctx, slug).await.ok()??;
    let user = crate::core::users::get(ctx, owner).await.ok()?;
    let access = workspaces::access(ctx, &user, slug).await.ok()?;
    Some((user, access))
}

/// Takes up the sessions a stopped (or killed) process left in the log: each is rebuilt
/// from its log and its text saved when it differs from its page's, then it ends like any
/// session nobody has open. Answers how many were taken up.
pub(crate) async fn recover(ctx: &Ctx) -> Result<usize> {
    let mut taken = 0;
    for (ws_id, uid) in log::orphans(ctx).await? {
        let mut open = ctx.live.open.lock().await;
        let key = (ws_id, uid);
        if open.contains_key(&key) {
            continue;
        }
        let Some(slug) = workspaces::slug_of(ctx, ws_id).await? else { continue };
        let access = Access::maintenance(ws_id, &slug);
        // A page trashed meanwhile keeps its log until it is back and opened.
        let Some(row) = pages::by_uid(ctx, &access, &key.1).await? else { continue };
        let s = start(ctx, &access, &row.uid, row.content, row.revision).await?;
        s.tell_processes(ctx, 'o');
        if open.insert(key, s.clone()).is_none() {
            ctx.live.count.fetch_add(1, Ordering::Relaxed);
        }
        tokio::spawn(saver(ctx.clone(), s));
        taken += 1;
    }
    Ok(taken)
}

/// One person's connection to a session. Dropping it leaves the session: its presence
/// is removed for the others, and the last one out has the text saved.
pub(crate) struct Connection {
    pub id: u64,
    session: Arc<Session>,
    ctx: Ctx,
    user: User,
    access: Access,
    /// The awareness client ids this connection announced (its presence).
    clients: HashSet<u64>,
    tokens: f64,
    refilled: Instant,
}

impl Connection {
    /// What the server sends first: its state vector (`SyncStep1`) and who is here.
    pub(crate) fn start(&self) -> Vec<u8> {
        let state = self.session.lock();
        let sv = state.awareness.doc().transact().state_vector();
        let mut out = Message::Sync(SyncMessage::SyncStep1(sv)).encode_v1();
        if let Ok(update) = state.awareness.update() {
            out.extend(Message::Awareness(update).encode_v1());
        }
        out
    }

    /// The messages every other connection passes on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Outgoing> {
        self.session.out.subscribe()
    }

    /// The workspace and user the connection was opened with (checked again while it is
    /// open: a member removed is disconnected).
    pub(crate) fn who(&self) -> (&User, &Access) {
        (&self.user, &self.access)
    }

    /// Handles one binary frame (one or more messages); answers what goes back to this
    /// connection. Updates are stored before this returns.
    pub(crate) async fn receive(&mut self, frame: &[u8]) -> std::result::Result<Vec<Vec<u8>>, Refusal> {
        self.spend()?;
        let mut decoder = DecoderV1::new(Cursor::new(frame));
        let messages: Vec<Message> = MessageReader::new(&mut decoder)
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Refusal::Malformed(e.to_string()))?;
        let mut replies = Vec::new();
        for message in messages {
            match message {
                Message::Sync(SyncMessage::SyncStep1(sv)) => {
                    let state = self.session.lock();
                    let update = state.awareness.doc().transact().encode_state_as_update_v1(&sv);
                    replies.push(Message::Sync(SyncMessage::SyncStep2(update)).encode_v1());
                }
                Message::Sync(SyncMessage::SyncStep2(body) | SyncMessage::Update(body)) => self.update(body).await?,
                Message::Awareness(update) => self.presence(update)?,
                Message::AwarenessQuery => {
                    let state = self.session.lock();
                    let update = state.awareness.update().map_err(|e| Refusal::Malformed(e.to_string()))?;
                    replies.push(Message::Awareness(update).encode_v1());
                }
                // Authentication is the upgrade's; other kinds are not Cairn's to answer.
                Message::Auth(_) | Message::Custom(..) => {}
            }
        }
        Ok(replies)
    }

    fn spend(&mut self) -> std::result::Result<(), Refusal> {
        let now = Instant::now();
        self.tokens = (self.tokens + now.duration_since(self.refilled).as_secs_f64() * PER_SECOND).min(BURST);
        self.refilled = now;
        if self.tokens < 1.0 {
            return Err(Refusal::Limit(format!("more than {PER_SECOND} messages a second")));
        }
        self.tokens -= 1.0;
        Ok(())
    }

    /// Applies a client's update, stores it, then passes it on.
    async fn update(&mut self, body: Vec<u8>) -> std::result::Result<(), Refusal> {
        let update = Update::decode_v1(&body).map_err(|e| Refusal::Malformed(e.to_string()))?;
        let changed = {
            let mut state = self.session.lock();
            // An update that could take the text past the page size limit is tried on a
            // copy first: refused, it changes nothing.
            let max = crate::core::pages::MAX_CONTENT_BYTES;
            if Session::length(&state) + body.len() > max {
                let length = with_update(&state, &body).map_err(Refusal::Malformed)?;
                if length > max {
                    return Err(Refusal::Limit(format!("the text would be {length} bytes, over {max}")));
                }
            }
            let doc = state.awareness.doc().clone();
            let before = doc.transact().state_vector();
            let mut txn = doc.transact_mut();
            txn.apply_update(update).map_err(|e| Refusal::Malformed(e.to_string()))?;
            // Deletions leave the state vector as it was.
            let deleted = !txn.delete_set().is_empty();
            drop(txn);
            let changed = deleted || doc.transact().state_vector() != before;
            if changed {
                let now = Instant::now();
                state.dirty = Some((state.dirty.map_or(now, |(first, _)| first), now));
                state.last_editor = Some((self.user.clone(), self.access.clone()));
                state.changes += 1;
                let (n, user) = (state.changes, &self.user);
                match state.contributors.iter_mut().find(|(id, ..)| *id == user.id) {
                    Some(c) => c.2 = n,
                    None => state.contributors.push((user.id, format!("{} <{}>", user.name, user.email), n)),
                }
            }
            changed
        };
        if !changed {
            return Ok(());
        }
        let s = &self.session;
        match log::append(&self.ctx, s.ws_id, &s.uid, self.user.id, &body).await {
            Ok(id) => s.stored(id),
            Err(e) => {
                tracing::warn!(error = %e, "a co-editing update could not be stored; its connection is closed");
                return Err(Refusal::Unavailable);
            }
        }
        let _ = s.out.send(Outgoing::new(self.id, Message::Sync(SyncMessage::Update(body)).encode_v1()));
        s.wake.notify_one();
        Ok(())
    }

    /// Applies a client's presence (cursor, selection, name) and passes it on.
    fn presence(&mut self, update: AwarenessUpdate) -> std::result::Result<(), Refusal> {
        self.clients.extend(update.clients.keys().copied());
        // Typing, when the editor's state says so (`{"typing": true, …}`; null when it left).
        let typing = update
            .clients
            .values()
            .any(|entry| serde_json::from_str::<serde_json::Value>(&entry.json).is_ok_and(|v| v["typing"] == true));
        let bytes = Message::Awareness(update.clone()).encode_v1();
        self.session.announce(&self.ctx, &update);
        let changed = {
            let mut state = self.session.lock();
            state.awareness.apply_update(update).map_err(|e| Refusal::Malformed(e.to_string()))?;
            let me = state.present.iter_mut().find(|p| p.connection == self.id);
            me.is_some_and(|p| std::mem::replace(&mut p.typing, typing) != typing)
        };
        let _ = self.session.out.send(Outgoing::new(self.id, bytes));
        if changed {
            self.session.tell_presence(&self.ctx);
        }
        Ok(())
    }
}

/// The length of the text `state` would hold with `update` applied, found on a copy.
fn with_update(state: &State, update: &[u8]) -> std::result::Result<usize, String> {
    let copy = Doc::new();
    let text = copy.get_or_insert_text(TEXT);
    let whole = state.awareness.doc().transact().encode_state_as_update_v1(&StateVector::default());
    let mut txn = copy.transact_mut();
    for body in [&whole[..], update] {
        let update = Update::decode_v1(body).map_err(|e| e.to_string())?;
        txn.apply_update(update).map_err(|e| e.to_string())?;
    }
    Ok(text.len(&txn) as usize)
}

impl Drop for Connection {
    fn drop(&mut self) {
        let s = &self.session;
        let gone = {
            let mut state = s.lock();
            state.present.retain(|p| p.connection != self.id);
            for client in &self.clients {
                state.awareness.remove_state(*client);
            }
            state.awareness.update_with_clients(self.clients.iter().copied()).ok()
        };
        if let Some(update) = gone.filter(|_| !self.clients.is_empty()) {
            s.announce(&self.ctx, &update);
            let _ = s.out.send(Outgoing::new(self.id, Message::Awareness(update).encode_v1()));
        }
        s.tell_presence(&self.ctx);
        s.wake.notify_one();
    }
}

/// The session's saver: saves the text when editing pauses, at least every
/// [`AT_LEAST`], and when the last connection leaves; then ends the session.
async fn saver(ctx: Ctx, s: Arc<Session>) {
    loop {
        if s.outside.swap(false, Ordering::Relaxed)
            && let Err(e) = absorb(&ctx, &s).await
        {
            tracing::warn!(error = %e, page = %s.uid, "another door's save did not come into a co-editing session; its next save merges it");
        }
        let wait = {
            let state = s.lock();
            match state.dirty {
                Some((first, last)) if !state.present.is_empty() => {
                    let due = (last + PAUSE).min(first + AT_LEAST);
                    Some(due.saturating_duration_since(Instant::now()))
                }
                Some(_) => Some(Duration::ZERO),
                None if state.present.is_empty() => None,
                None => Some(Duration::MAX),
            }
        };
        match wait {
            None => {
                if end(&ctx, &s).await {
                    return;
                }
            }
            Some(wait) if wait.is_zero() => {
                if let Err(e) = save(&ctx, &s).await {
                    tracing::warn!(error = %e, page = %s.uid, "a co-editing session's text could not be saved; trying again");
                    tokio::time::sleep(PAUSE).await;
                }
            }
            Some(wait) => {
                let _ = tokio::time::timeout(wait.min(AT_LEAST), s.wake.notified()).await;
            }
        }
    }
}

/// Follows the saves of every door: after each durable batch, the sessions of the pages
/// it changed take the change in ([`absorb`]; their own saves included, which changes
/// nothing). Runs for the life of the process.
pub(crate) fn follow_saves(ctx: Ctx) -> impl std::future::Future<Output = ()> {
    // Subscribed now, before the future first runs: nothing saved from here on is missed.
    let mut changes = ctx.writers.changes();
    async move { follow(ctx, &mut changes).await }
}

async fn follow(ctx: Ctx, changes: &mut broadcast::Receiver<pages::batch::Changed>) {
    loop {
        let changed = match changes.recv().await {
            Ok(changed) => Some(changed),
            // Too many batches to keep up with: every session looks at its page.
            Err(broadcast::error::RecvError::Lagged(_)) => None,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if let Some(changed) = &changed {
            if let Err(e) = tell_watchers(&ctx, changed).await {
                tracing::warn!(error = %e, "the page view's watchers were not told of a save");
            }
            tell_elsewhere(&ctx, changed);
        }
        if ctx.live.count.load(Ordering::Relaxed) == 0 {
            continue;
        }
        let open = ctx.live.open.lock().await;
        let touched: Vec<&Arc<Session>> = match &changed {
            Some(c) => c.pages.iter().filter_map(|uid| open.get(&(c.workspace_id, uid.clone()))).collect(),
            None => open.values().collect(),
        };
        for s in touched {
            s.outside.store(true, Ordering::Relaxed);
            s.wake.notify_one();
        }
    }
}

/// Tells the processes where a changed page's session is open that it was saved: their
/// session takes the save in as this process's sessions do.
fn tell_elsewhere(ctx: &Ctx, changed: &pages::batch::Changed) {
    let ws_id = changed.workspace_id;
    for uid in changed.pages.iter().filter(|uid| ctx.live.is_open_elsewhere(ws_id, uid)) {
        announce(ctx, relay::about('s', ctx.live.process, ws_id, uid));
    }
}

/// Tells the watchers of the pages a batch changed of their new revision (or that they
/// left).
async fn tell_watchers(ctx: &Ctx, changed: &pages::batch::Changed) -> Result<()> {
    let ws_id = changed.workspace_id;
    let watched: Vec<&String> = changed.pages.iter().filter(|uid| ctx.live.watchers.watched(ws_id, uid)).collect();
    if watched.is_empty() {
        return Ok(());
    }
    let Some(slug) = workspaces::slug_of(ctx, ws_id).await? else { return Ok(()) };
    let access = Access::maintenance(ws_id, &slug);
    for uid in watched {
        let event = match pages::by_uid(ctx, &access, uid).await? {
            Some(row) => watch::Event::Saved { revision: row.revision, slug: row.slug },
            None => watch::Event::Deleted,
        };
        ctx.live.watchers.tell(ws_id, uid, event);
    }
    Ok(())
}

/// This process's number among those sharing the database.
impl Sessions {
    pub(crate) fn process(&self) -> u64 {
        self.process
    }

    /// Whether another process sharing the database has the page's session open.
    fn is_open_elsewhere(&self, ws_id: i64, uid: &str) -> bool {
        let elsewhere = self.elsewhere.lock().unwrap_or_else(|e| e.into_inner());
        elsewhere.contains_key(&(ws_id, uid.to_owned()))
    }
}

/// Takes in what other processes sharing the database announce (PostgreSQL, through
/// [`relay::listen`]): the updates their connections stored and their presence changes,
/// for the sessions open here; after the listener reconnects, every open session reads
/// its log again for what was missed. Runs until the listener stops.
pub(crate) async fn relay_in(ctx: Ctx, mut heard: tokio::sync::mpsc::UnboundedReceiver<relay::Heard>) {
    while let Some(heard) = heard.recv().await {
        let taken = match heard {
            relay::Heard::Note(relay::Note::Update { ws_id, uid, id, .. }) => take_update(&ctx, ws_id, &uid, id).await,
            relay::Heard::Note(relay::Note::Presence { ws_id, uid, update, .. }) => {
                take_presence(&ctx, ws_id, &uid, &update).await;
                Ok(())
            }
            relay::Heard::Note(relay::Note::Opened { from, ws_id, uid }) => {
                note_elsewhere(&ctx, from, ws_id, uid.clone(), true);
                // The newcomer learns who is here.
                if let Some(s) = session_of(&ctx, ws_id, &uid).await {
                    let everyone = s.lock().awareness.update().ok();
                    if let Some(everyone) = everyone {
                        s.announce(&ctx, &everyone);
                    }
                }
                Ok(())
            }
            relay::Heard::Note(relay::Note::Ended { from, ws_id, uid }) => {
                note_elsewhere(&ctx, from, ws_id, uid, false);
                Ok(())
            }
            relay::Heard::Note(relay::Note::Saved { ws_id, uid, .. }) => {
                if let Some(s) = session_of(&ctx, ws_id, &uid).await {
                    s.outside.store(true, Ordering::Relaxed);
                    s.wake.notify_one();
                }
                Ok(())
            }
            relay::Heard::Note(relay::Note::Hello { .. }) => {
                let open: Vec<Arc<Session>> = ctx.live.open.lock().await.values().cloned().collect();
                for s in open {
                    s.tell_processes(&ctx, 'o');
                }
                Ok(())
            }
            relay::Heard::Reconnected => {
                // What the others have open may have changed meanwhile: they say it again.
                ctx.live.elsewhere.lock().unwrap_or_else(|e| e.into_inner()).clear();
                announce(&ctx, relay::hello(ctx.live.process));
                catch_up_all(&ctx).await
            }
        };
        if let Err(e) = taken {
            tracing::warn!(error = %e, "co-editing: another process's update was not taken in; its session reads its log when the listener reconnects");
        }
    }
}

/// Sends a note to the other processes, without waiting.
fn announce(ctx: &Ctx, payload: String) {
    let ctx = ctx.clone();
    tokio::spawn(async move {
        if let Err(e) = log::announce(&ctx, &payload).await {
            tracing::debug!(error = %e, "co-editing: a note to the other processes was not sent");
        }
    });
}

/// Notes which sessions other processes have open, from their notes.
fn note_elsewhere(ctx: &Ctx, from: u64, ws_id: i64, uid: String, open: bool) {
    let mut elsewhere = ctx.live.elsewhere.lock().unwrap_or_else(|e| e.into_inner());
    let key = (ws_id, uid);
    if open {
        elsewhere.entry(key).or_default().insert(from);
    } else if let Some(processes) = elsewhere.get_mut(&key) {
        processes.remove(&from);
        if processes.is_empty() {
            elsewhere.remove(&key);
        }
    }
}

async fn session_of(ctx: &Ctx, ws_id: i64, uid: &str) -> Option<Arc<Session>> {
    let open = ctx.live.open.lock().await;
    open.get(&(ws_id, uid.to_owned())).filter(|s| !s.lock().closed).cloned()
}

async fn take_update(ctx: &Ctx, ws_id: i64, uid: &str, id: i64) -> Result<()> {
    let Some(s) = session_of(ctx, ws_id, uid).await else { return Ok(()) };
    match log::row(ctx, id).await? {
        Some(body) => s.take(vec![(id, body)]),
        // Compacted away already: the log's compacted row holds it.
        None => catch_up(ctx, &s).await?,
    }
    Ok(())
}

async fn catch_up(ctx: &Ctx, s: &Session) -> Result<()> {
    let rows = log::read(ctx, s.ws_id, &s.uid).await?;
    s.take(rows.into_iter().map(|(id, _, body)| (id, body)).collect());
    Ok(())
}

async fn catch_up_all(ctx: &Ctx) -> Result<()> {
    let open: Vec<Arc<Session>> = ctx.live.open.lock().await.values().cloned().collect();
    for s in open {
        catch_up(ctx, &s).await?;
    }
    Ok(())
}

async fn take_presence(ctx: &Ctx, ws_id: i64, uid: &str, update: &[u8]) {
    let Some(s) = session_of(ctx, ws_id, uid).await else { return };
    let Ok(update) = AwarenessUpdate::decode_v1(update) else { return };
    let bytes = Message::Awareness(update.clone()).encode_v1();
    if s.lock().awareness.apply_update(update).is_ok() {
        let _ = s.out.send(Outgoing::new(0, bytes));
    }
}

/// Who is in the session of a page now (nobody when none is open), for a new watcher.
pub(crate) async fn present(ctx: &Ctx, ws_id: i64, uid: &str) -> Vec<watch::Person> {
    let open = ctx.live.open.lock().await;
    open.get(&(ws_id, uid.to_owned())).map(|s| watch::people(&s.lock().present)).unwrap_or_default()
}

/// Takes a save another door made (the API, MCP, an import) into the shared text the
/// moment it is durable: merged three-way against the text the session last saved or
/// began from, as an edit everyone in the session sees, so nobody's typing is lost. With
/// overlapping changes the text stays as it is, and the session's next save merges
/// (its text winning where they overlap).
async fn absorb(ctx: &Ctx, s: &Arc<Session>) -> Result<()> {
    let Some(row) = pages::by_uid(ctx, &s.reader, &s.uid).await? else {
        s.left();
        return Ok(());
    };
    let update = {
        let mut state = s.lock();
        if row.revision == state.base {
            return Ok(());
        }
        let ours = Session::current(&state);
        let Ok(merged) = diffy::merge(&state.committed, &ours, &row.content) else { return Ok(()) };
        let update = if merged == ours { None } else { replace(&state, &ours, &merged) };
        let now = Instant::now();
        state.dirty = (merged != row.content).then(|| state.dirty.unwrap_or((now, now)));
        state.committed = row.content;
        state.base = row.revision;
        update
    };
    if let Some(update) = update {
        s.stored(log::append(ctx, s.ws_id, &s.uid, row.updated_by.id, &update).await?);
        let _ = s.out.send(Outgoing::new(0, Message::Sync(SyncMessage::Update(update)).encode_v1()));
    }
    Ok(())
}

/// Ends a session nobody has open and whose text is saved: its log is compacted to the
/// document alone (the next session's start). False when someone joined meanwhile.
async fn end(ctx: &Ctx, s: &Arc<Session>) -> bool {
    // Held through the compaction: a session started meanwhile must not have its first
    // rows dropped by it.
    let mut open = ctx.live.open.lock().await;
    // A session closed before (its page left, or nobody may save its text) keeps its log
    // as it is: its updates are resumed when the page is back and opened.
    let (closed, snapshot) = {
        let mut state = s.lock();
        if !state.present.is_empty() || state.dirty.is_some() {
            return false;
        }
        (std::mem::replace(&mut state.closed, true), Session::snapshot(&state))
    };
    if !closed {
        match log::compact(ctx, s.ws_id, &s.uid, &snapshot.0, &snapshot.1).await {
            Ok(row) => s.compacted(&snapshot.1, row),
            Err(e) => tracing::warn!(error = %e, page = %s.uid, "an ended co-editing session's log stays uncompacted"),
        }
    }
    let key = (s.ws_id, s.uid.clone());
    if open.get(&key).is_some_and(|o| Arc::ptr_eq(o, s)) {
        open.remove(&key);
        ctx.live.count.fetch_sub(1, Ordering::Relaxed);
        s.tell_processes(ctx, 'e');
    }
    true
}

/// Saves the session's text as a revision through the core, and compacts its log.
async fn save(ctx: &Ctx, s: &Arc<Session>) -> Result<()> {
    let (text, base, editor, contributors, changes) = {
        let state = s.lock();
        let contributors = state.contributors.clone();
        (Session::current(&state), state.base.clone(), state.last_editor.clone(), contributors, state.changes)
    };
    let Some((user, access)) = editor else {
        // Nobody who may save it (a resumed session whose editors and owners are gone):
        // the session ends and its log keeps the text for the next one.
        let mut state = s.lock();
        state.closed = true;
        state.dirty = None;
        return Ok(());
    };
    let Some(row) = pages::by_uid(ctx, &access, &s.uid).await? else {
        s.left();
        return Ok(());
    };
    let slug = Slug::lookup(&row.slug, Error::page_not_found)?;
    let co_authors: Vec<String> =
        contributors.iter().filter(|(id, ..)| *id != user.id).map(|(_, who, _)| who.clone()).collect();
    let saved = if row.content == text {
        None
    } else {
        let edit = PageUpdate {
            content: Some(text.clone()),
            title: None,
            base_revision: Some(base),
            merge: true,
            message: None,
        };
        match pages::update_together(ctx, &access, &user, &slug, edit, co_authors.clone()).await {
            Ok(page) => Some(page),
            // Overlapping edits of another door: the session's text wins, and the other
            // save stays in the history.
            Err(e) if e.code == crate::error::Code::MergeConflict => {
                let edit = PageUpdate {
                    content: Some(text.clone()),
                    title: None,
                    base_revision: None,
                    merge: false,
                    message: None,
                };
                Some(pages::update_together(ctx, &access, &user, &slug, edit, co_authors).await?)
            }
            Err(e) => return Err(e),
        }
    };
    let (committed, revision) = match saved {
        Some(page) => (page.content, page.revision),
        None => (row.content, row.revision),
    };
    let (snapshot, merged_in) = {
        let mut state = s.lock();
        // What another door saved meanwhile comes into the session as an edit.
        let merged_in = (committed != text).then(|| replace(&state, &text, &committed)).flatten();
        state.committed = committed;
        state.base = revision;
        // Who edited after the text saved was read is credited in the next revision.
        state.contributors.retain(|(.., last)| *last > changes);
        let now = Instant::now();
        state.dirty = match state.dirty {
            Some((_, last)) if Session::current(&state) != state.committed => Some((now, last)),
            _ => None,
        };
        (Session::snapshot(&state), merged_in)
    };
    if let Some(update) = merged_in {
        s.stored(log::append(ctx, s.ws_id, &s.uid, user.id, &update).await?);
        let _ = s.out.send(Outgoing::new(0, Message::Sync(SyncMessage::Update(update)).encode_v1()));
    }
    let row = log::compact(ctx, s.ws_id, &s.uid, &snapshot.0, &snapshot.1).await?;
    s.compacted(&snapshot.1, row);
    Ok(())
}

/// Edits the shared text from `from` to `to` by replacing what lies between their common
/// start and end (an edit elsewhere in the text meanwhile is kept); answers the update.
fn replace(state: &State, from: &str, to: &str) -> Option<Vec<u8>> {
    let start = from
        .char_indices()
        .zip(to.chars())
        .take_while(|((_, a), b)| a == b)
        .last()
        .map_or(0, |((i, a), _)| i + a.len_utf8());
    let end = from[start..]
        .chars()
        .rev()
        .zip(to[start..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let (removed, inserted) = (&from[start..from.len() - end], &to[start..to.len() - end]);
    if removed.is_empty() && inserted.is_empty() {
        return None;
    }
    // Only when the session still holds `from`: otherwise the next save merges again.
    if Session::current(state) != from {
        return None;
    }
    let text = Session::text(state);
    let doc = state.awareness.doc();
    let before = doc.transact().state_vector();
    let mut txn = doc.transact_mut();
    text.remove_range(&mut txn, start as u32, removed.len() as u32);
    text.insert(&mut txn, start as u32, inserted);
    drop(txn);
    Some(doc.transact().encode_state_as_update_v1(&before))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str) -> State {
        let doc = Doc::new();
        doc.get_or_insert_text(TEXT).insert(&mut doc.transact_mut(), 0, text);
        State {
            awareness: Awareness::new(doc),
            committed: String::new(),
            base: String::new(),
            dirty: None,
            last_editor: None,
            contributors: Vec::new(),
            changes: 0,
            applied: Vec::new(),
            present: Vec::new(),
            closed: false,
        }
    }

    #[test]
    fn a_text_saved_elsewhere_comes_in_as_the_smallest_edit() {
        let s = state("# Runbook\n\nRestart it.\n");
        let update = replace(&s, "# Runbook\n\nRestart it.\n", "# Runbook\n\nRestart it — gently.\n").unwrap();
        assert_eq!(Session::current(&s), "# Runbook\n\nRestart it — gently.\n");
        // Another replica holding the old text takes the update to the same text.
        let other = Doc::new();
        let text = other.get_or_insert_text(TEXT);
        other
            .transact_mut()
            .apply_update(
                Update::decode_v1(&s.awareness.doc().transact().encode_state_as_update_v1(&StateVector::default()))
                    .unwrap(),
            )
            .unwrap();
        other.transact_mut().apply_update(Update::decode_v1(&update).unwrap()).unwrap();
        assert_eq!(text.get_string(&other.transact()), "# Runbook\n\nRestart it — gently.\n");
        assert!(replace(&s, "x", "y").is_none(), "a session that moved on is merged at its next save");
    }
}
