//! Following a page without editing it (the page view): who is in its co-editing
//! session and which of them is typing, and each new revision, as they happen. Nothing
//! is stored: a watcher that connects learns who is there now, and what follows.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::broadcast;

/// What a watcher of a page is told.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Event {
    /// Everyone in the page's co-editing session, once each, in the order they came.
    Presence { people: Vec<Person> },
    /// The page has a new revision (from the session or any other door), at its address
    /// then (a rename is a revision too).
    Saved { revision: String, slug: String },
    /// The page left (trashed or purged).
    Deleted,
}

/// Someone in a page's session, as the server knows them (never as their client says).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Person {
    pub id: i64,
    pub name: String,
    /// Their editor says they are typing (its awareness state's `typing`).
    pub typing: bool,
}

/// One connection in a session, as its watchers are told of it.
pub(crate) struct Present {
    pub connection: u64,
    pub user: i64,
    pub name: String,
    /// Its editor says its person is typing.
    pub typing: bool,
}

/// Events a watcher may fall behind by before it misses some (it then hears the next).
const BACKLOG: usize = 16;

/// Where a page's events are sent to its watchers.
type Followers = broadcast::Sender<Arc<Event>>;

/// The pages someone watches, by workspace id and page id.
#[derive(Default)]
pub(crate) struct Watchers {
    pages: Mutex<HashMap<(i64, String), Followers>>,
}

impl Watchers {
    /// Starts following a page.
    pub(crate) fn subscribe(&self, ws_id: i64, uid: &str) -> broadcast::Receiver<Arc<Event>> {
        let mut pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        pages.retain(|_, sender| sender.receiver_count() > 0);
        pages.entry((ws_id, uid.to_owned())).or_insert_with(|| broadcast::channel(BACKLOG).0).subscribe()
    }

    /// Whether anyone watches the page.
    pub(crate) fn watched(&self, ws_id: i64, uid: &str) -> bool {
        let pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        pages.get(&(ws_id, uid.to_owned())).is_some_and(|s| s.receiver_count() > 0)
    }

    /// Tells the page's watchers, if it has any.
    pub(crate) fn tell(&self, ws_id: i64, uid: &str, event: Event) {
        let pages = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = pages.get(&(ws_id, uid.to_owned())) {
            let _ = sender.send(Arc::new(event));
        }
    }
}

/// The people of a session from its connections: once each, typing when any of their
/// connections is.
pub(crate) fn people(present: &[Present]) -> Vec<Person> {
    let mut people: Vec<Person> = Vec::new();
    for p in present {
        match people.iter_mut().find(|person| person.id == p.user) {
            Some(person) => person.typing |= p.typing,
            None => people.push(Person { id: p.user, name: p.name.clone(), typing: p.typing }),
        }
    }
    people
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_in_two_tabs_is_listed_once_and_typing_if_either_is() {
        let at = |connection, user, name: &str, typing| Present { connection, user, name: name.into(), typing };
        let present = [at(1, 7, "Ann", false), at(2, 8, "Bob", false), at(3, 7, "Ann", true)];
        let people = people(&present);
        assert_eq!(
            people,
            vec![
                Person { id: 7, name: "Ann".into(), typing: true },
                Person { id: 8, name: "Bob".into(), typing: false }
            ]
        );
        assert_eq!(
            serde_json::to_value(Event::Presence { people }).unwrap()["type"],
            "presence",
            "tagged by type, as the page view reads it"
        );
    }
}
