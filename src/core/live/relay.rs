//! Co-editing across processes that share a PostgreSQL database: each update a process
//! stores in a session's log is announced on a channel (`NOTIFY cairn_live`, sent by the
//! insert itself, so only once the row is there) and so is each change of presence; the
//! other processes listen, and a process with the page's session open takes the update
//! in from the log (or the presence from the note) and passes it to its own connections.
//! So people connected to different processes edit one document. Sessions opened and
//! ended are announced too, so that a process saving a page through another door (the
//! API, MCP, an import) tells the processes where the page's session is open — and only
//! those pages: announcing every save would cost every save a note. (SQLite: one
//! process, nothing to relay.)

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use tokio::sync::{mpsc, watch};

/// The channel the notes go over.
pub(crate) const CHANNEL: &str = "cairn_live";
/// A note's payload must stay under PostgreSQL's 8000 bytes: larger presence is not
/// relayed (a state of a few hundred bytes is the usual).
const MAX_PAYLOAD: usize = 7900;

/// What another process announced.
#[derive(Debug, PartialEq)]
pub(crate) enum Note {
    /// It stored row `id` of the log of the page's session.
    Update {
        from: u64,
        ws_id: i64,
        uid: String,
        id: i64,
    },
    /// A presence (awareness) update in the page's session.
    Presence {
        from: u64,
        ws_id: i64,
        uid: String,
        update: Vec<u8>,
    },
    /// It opened the page's session, or ended it.
    Opened {
        from: u64,
        ws_id: i64,
        uid: String,
    },
    Ended {
        from: u64,
        ws_id: i64,
        uid: String,
    },
    /// It saved the page (through another door than the session).
    Saved {
        from: u64,
        ws_id: i64,
        uid: String,
    },
    /// It started listening: every process says again which sessions it has open.
    Hello {
        from: u64,
    },
}

impl Note {
    /// The process that sent it.
    pub(crate) fn from(&self) -> u64 {
        match self {
            Note::Update { from, .. }
            | Note::Presence { from, .. }
            | Note::Opened { from, .. }
            | Note::Ended { from, .. }
            | Note::Saved { from, .. }
            | Note::Hello { from } => *from,
        }
    }
}

/// What the listener hears.
pub(crate) enum Heard {
    Note(Note),
    /// Listening again after the connection dropped: notes may have been missed.
    Reconnected,
}

/// The payload of an update note without its row id, which the insert appends.
pub(crate) fn update_prefix(from: u64, ws_id: i64, uid: &str) -> String {
    format!("u:{from}:{ws_id}:{uid}:")
}

/// The payload of a presence note; none when too large to send.
pub(crate) fn presence(from: u64, ws_id: i64, uid: &str, update: &[u8]) -> Option<String> {
    let payload = format!("a:{from}:{ws_id}:{}:{uid}", BASE64.encode(update));
    (payload.len() <= MAX_PAYLOAD).then_some(payload)
}

/// The payload of a note about a page's session: `kind` is `o` (opened), `e` (ended) or
/// `s` (saved).
pub(crate) fn about(kind: char, from: u64, ws_id: i64, uid: &str) -> String {
    format!("{kind}:{from}:{ws_id}:{uid}")
}

/// The payload of a hello.
pub(crate) fn hello(from: u64) -> String {
    format!("h:{from}:0:")
}

/// Reads a note (a page's uid may hold `:`; the other fields cannot).
pub(crate) fn parse(payload: &str) -> Option<Note> {
    let mut parts = payload.splitn(4, ':');
    let (kind, from, ws_id, rest) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let (from, ws_id) = (from.parse().ok()?, ws_id.parse().ok()?);
    match kind {
        "u" => {
            let (uid, id) = rest.rsplit_once(':')?;
            Some(Note::Update { from, ws_id, uid: uid.to_owned(), id: id.parse().ok()? })
        }
        "o" => Some(Note::Opened { from, ws_id, uid: rest.to_owned() }),
        "e" => Some(Note::Ended { from, ws_id, uid: rest.to_owned() }),
        "s" => Some(Note::Saved { from, ws_id, uid: rest.to_owned() }),
        "h" => Some(Note::Hello { from }),
        "a" => {
            let (update, uid) = rest.split_once(':')?;
            Some(Note::Presence { from, ws_id, uid: uid.to_owned(), update: BASE64.decode(update).ok()? })
        }
        _ => None,
    }
}

/// Listens on [`CHANNEL`] until `stopped`, passing on what other processes than `me`
/// announce; after each (re)connection, [`Heard::Reconnected`] first.
pub(crate) async fn listen(
    url: String,
    me: u64,
    heard: mpsc::UnboundedSender<Heard>,
    mut stopped: watch::Receiver<bool>,
) {
    loop {
        let Some(mut listener) = crate::store::listen::connect(&url, CHANNEL, &mut stopped).await else { return };
        if heard.send(Heard::Reconnected).is_err() {
            return;
        }
        loop {
            tokio::select! {
                _ = stopped.wait_for(|s| *s) => return,
                n = listener.try_recv() => match n {
                    Ok(Some(n)) => {
                        let Some(note) = parse(n.payload()) else { continue };
                        if note.from() != me && heard.send(Heard::Note(note)).is_err() {
                            return;
                        }
                    }
                    // The connection dropped: notes may have been missed.
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_read_back_as_written_whatever_the_uid_holds() {
        let update = format!("{}42", update_prefix(7, 3, "a:b"));
        assert_eq!(parse(&update), Some(Note::Update { from: 7, ws_id: 3, uid: "a:b".into(), id: 42 }));
        let presence = presence(7, 3, "a:b", &[1, 2, 255]).unwrap();
        assert_eq!(
            parse(&presence),
            Some(Note::Presence { from: 7, ws_id: 3, uid: "a:b".into(), update: vec![1, 2, 255] })
        );
        assert_eq!(parse(&about('o', 7, 3, "a:b")), Some(Note::Opened { from: 7, ws_id: 3, uid: "a:b".into() }));
        assert_eq!(parse(&about('e', 7, 3, "p")), Some(Note::Ended { from: 7, ws_id: 3, uid: "p".into() }));
        assert_eq!(parse(&about('s', 7, 3, "p")), Some(Note::Saved { from: 7, ws_id: 3, uid: "p".into() }));
        assert_eq!(parse(&hello(7)), Some(Note::Hello { from: 7 }));
        assert_eq!(parse("x:1:2:3"), None);
        assert_eq!(parse("u:1:2:no-id"), None);
        assert!(super::presence(1, 1, "p", &vec![0; 6000]).is_none(), "too large for a note");
    }
}
