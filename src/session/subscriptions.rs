//! Resource subscriptions shared by every client of the session. A server hears the first
//! subscribe and the last unsubscribe of a URI, whichever clients they came from, so one
//! client's unsubscribe never ends another's; each client hears only the updates of URIs it
//! subscribed to. A 2026-07-28 server has no subscribe: loom holds one listen stream per URI
//! for all clients instead. After a server starts again, its subscriptions are renewed.

use crate::downstream::Fleet;
use crate::downstream::connection::{Connection, lock};
use crate::protocol::Era;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// The most URIs one client may hold at once: each may hold a request or a stream open at a
/// server, so a client cannot make loom hold an unbounded number.
pub const MAX_PER_CLIENT: usize = 1024;

/// The clients subscribed to one URI, and the server that was told: unsubscribes, a
/// client's leaving and renewals go to that server even after its listing changed.
struct Held {
    server: String,
    clients: HashSet<u64>,
}

#[derive(Default)]
pub struct Subscriptions {
    /// URI → who holds it.
    by_uri: Mutex<HashMap<String, Held>>,
    /// URI → the listen stream loom holds to a 2026-07-28 server for it.
    streams: Mutex<HashMap<String, (Arc<Connection>, u64)>>,
}

impl Subscriptions {
    /// Client `who` subscribes to `uri`, served by `server`; whether the server must hear it
    /// (the first one).
    pub fn subscribe(&self, uri: &str, who: u64, server: &str) -> bool {
        let mut by_uri = lock(&self.by_uri);
        let held = by_uri.entry(uri.to_owned()).or_insert_with(|| Held {
            server: server.to_owned(),
            clients: HashSet::new(),
        });
        held.clients.insert(who) && held.clients.len() == 1
    }

    /// Client `who` unsubscribes: the server to tell when it was the last one.
    pub fn unsubscribe(&self, uri: &str, who: u64) -> Option<String> {
        let mut by_uri = lock(&self.by_uri);
        let held = by_uri.get_mut(uri)?;
        let last = held.clients.remove(&who) && held.clients.is_empty();
        if held.clients.is_empty() {
            return by_uri.remove(uri).filter(|_| last).map(|h| h.server);
        }
        None
    }

    /// Client `who` went away: the URIs it was the last subscriber of, with their servers.
    pub fn drop_client(&self, who: u64) -> Vec<(String, String)> {
        let mut by_uri = lock(&self.by_uri);
        let mut last = Vec::new();
        by_uri.retain(|uri, held| {
            if held.clients.remove(&who) && held.clients.is_empty() {
                last.push((uri.clone(), held.server.clone()));
            }
            !held.clients.is_empty()
        });
        last
    }

    /// Whether client `who` may subscribe to `uri`: it holds it already, or fewer than
    /// [`MAX_PER_CLIENT`] URIs.
    pub fn has_room(&self, uri: &str, who: u64) -> bool {
        let by_uri = lock(&self.by_uri);
        by_uri.get(uri).is_some_and(|h| h.clients.contains(&who))
            || by_uri.values().filter(|h| h.clients.contains(&who)).count() < MAX_PER_CLIENT
    }

    pub fn is_subscribed(&self, uri: &str, who: u64) -> bool {
        lock(&self.by_uri)
            .get(uri)
            .is_some_and(|held| held.clients.contains(&who))
    }

    /// Tells the server behind `uri` that loom subscribes (or no longer does): a legacy
    /// server by `resources/subscribe`/`unsubscribe` (the answer is `None`: the caller
    /// forwards the client's own request), a 2026-07-28 server by opening or closing the listen
    /// stream for that URI (done here; the answer is `Some`).
    pub fn tell_modern(&self, conn: &Arc<Connection>, subscribe: bool, uri: &str) -> bool {
        if conn.era() != Era::Modern {
            return false;
        }
        if subscribe {
            self.open_stream(conn, uri);
        } else if let Some((conn, id)) = lock(&self.streams).remove(uri) {
            conn.cancel(id, "unsubscribed");
        }
        true
    }

    /// Tells the server on `conn` that loom subscribes to `uri` (or no longer does), without
    /// waiting for its answer: a legacy server by request, a 2026-07-28 one by listen stream.
    pub fn tell(&self, conn: &Arc<Connection>, subscribe: bool, uri: &str) {
        if !self.tell_modern(conn, subscribe, uri) {
            let method = if subscribe {
                "resources/subscribe"
            } else {
                "resources/unsubscribe"
            };
            if let Value::Object(params) = json!({ "uri": uri }) {
                drop(conn.send_request(method, Some(params)));
            }
        }
    }

    fn open_stream(&self, conn: &Arc<Connection>, uri: &str) {
        let filter = json!({ "notifications": { "resourceSubscriptions": [uri] } });
        let Value::Object(params) = filter else {
            return;
        };
        let (id, _) = conn.send_request("subscriptions/listen", Some(params));
        let old = lock(&self.streams).insert(uri.to_owned(), (conn.clone(), id));
        if let Some((old, id)) = old {
            old.cancel(id, "replaced");
        }
    }

    /// `uri`'s last subscriber left without unsubscribing (it disconnected): `server`, the one
    /// that was told, hears it.
    pub fn end(&self, fleet: &Fleet, uri: &str, server: &str) {
        // A listen stream is closed on the connection it was opened on, whatever the server's
        // state now.
        let stream = lock(&self.streams).remove(uri);
        if let Some((conn, id)) = stream {
            conn.cancel(id, "unsubscribed");
            return;
        }
        let Some(conn) = fleet.server(server).and_then(|s| s.connection().ok()) else {
            return;
        };
        if conn.era() == Era::Legacy {
            self.tell(&conn, false, uri);
        }
    }

    /// `server` is up (again): every URI of its that a client is subscribed to is subscribed
    /// anew, as the new process or connection knows none of them.
    pub fn renew(&self, fleet: &Fleet, server: &str) {
        let Some(handle) = fleet.server(server) else {
            return;
        };
        let Ok(conn) = handle.connection() else {
            return;
        };
        let uris: Vec<String> = lock(&self.by_uri)
            .iter()
            .filter(|(_, held)| held.server == server)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in uris {
            self.tell(&conn, true, &uri);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_hears_the_first_subscribe_and_the_last_unsubscribe() {
        let s = Subscriptions::default();
        assert!(s.subscribe("u", 1, "srv"));
        assert!(!s.subscribe("u", 1, "srv"), "again: nothing new");
        assert!(!s.subscribe("u", 2, "other"), "the first server keeps it");
        assert_eq!(s.unsubscribe("u", 1), None, "client 2 still listens");
        assert!(!s.is_subscribed("u", 1));
        assert!(s.is_subscribed("u", 2));
        assert_eq!(s.unsubscribe("u", 1), None, "not subscribed any more");
        assert_eq!(s.unsubscribe("u", 2).as_deref(), Some("srv"));
        assert_eq!(s.unsubscribe("u", 2), None);
        assert!(s.subscribe("a", 1, "x") && !s.subscribe("a", 2, "x") && s.subscribe("b", 2, "y"));
        assert_eq!(s.drop_client(2), vec![("b".to_owned(), "y".to_owned())]);
        assert!(s.is_subscribed("a", 1));
        assert_eq!(s.drop_client(1), vec![("a".to_owned(), "x".to_owned())]);
        assert!(lock(&s.by_uri).is_empty(), "nothing is left behind");
        // A client holds at most MAX_PER_CLIENT URIs; the others are not limited by it.
        for i in 0..MAX_PER_CLIENT {
            assert!(s.has_room(&format!("u{i}"), 1));
            s.subscribe(&format!("u{i}"), 1, "srv");
        }
        assert!(!s.has_room("one more", 1));
        assert!(s.has_room("u0", 1), "one it holds already");
        assert!(s.has_room("one more", 2));
    }
}
