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

#[derive(Default)]
pub struct Subscriptions {
    /// URI → the clients (by number) subscribed to it.
    by_uri: Mutex<HashMap<String, HashSet<u64>>>,
    /// URI → the listen stream loom holds to a 2026-07-28 server for it.
    streams: Mutex<HashMap<String, (Arc<Connection>, u64)>>,
}

impl Subscriptions {
    /// Client `who` subscribes to `uri`; whether the server must hear it (the first one).
    pub fn subscribe(&self, uri: &str, who: u64) -> bool {
        let mut by_uri = lock(&self.by_uri);
        let set = by_uri.entry(uri.to_owned()).or_default();
        set.insert(who) && set.len() == 1
    }

    /// Client `who` unsubscribes; whether the server must hear it (it was the last one).
    pub fn unsubscribe(&self, uri: &str, who: u64) -> bool {
        let mut by_uri = lock(&self.by_uri);
        let Some(set) = by_uri.get_mut(uri) else {
            return false;
        };
        let last = set.remove(&who) && set.is_empty();
        if set.is_empty() {
            by_uri.remove(uri);
        }
        last
    }

    /// Client `who` went away: the URIs it was the last subscriber of.
    pub fn drop_client(&self, who: u64) -> Vec<String> {
        let mut by_uri = lock(&self.by_uri);
        let mut last = Vec::new();
        by_uri.retain(|uri, set| {
            if set.remove(&who) && set.is_empty() {
                last.push(uri.clone());
            }
            !set.is_empty()
        });
        last
    }

    pub fn is_subscribed(&self, uri: &str, who: u64) -> bool {
        lock(&self.by_uri)
            .get(uri)
            .is_some_and(|set| set.contains(&who))
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

    /// `uri`'s last subscriber left without unsubscribing (it disconnected).
    pub fn end(&self, fleet: &Fleet, uri: &str) {
        let Some(server) = fleet.route_resource(uri) else {
            return;
        };
        let Ok(conn) = server.connection() else {
            return;
        };
        if !self.tell_modern(&conn, false, uri) {
            let params = json!({ "uri": uri });
            if let Value::Object(params) = params {
                drop(conn.send_request("resources/unsubscribe", Some(params)));
            }
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
        let uris: Vec<String> = lock(&self.by_uri).keys().cloned().collect();
        for uri in uris {
            if fleet
                .route_resource(&uri)
                .is_none_or(|s| s.name() != server)
            {
                continue;
            }
            if !self.tell_modern(&conn, true, &uri) {
                let params = json!({ "uri": uri });
                if let Value::Object(params) = params {
                    drop(conn.send_request("resources/subscribe", Some(params)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_hears_the_first_subscribe_and_the_last_unsubscribe() {
        let s = Subscriptions::default();
        assert!(s.subscribe("u", 1));
        assert!(!s.subscribe("u", 1), "again: nothing new");
        assert!(!s.subscribe("u", 2));
        assert!(!s.unsubscribe("u", 1), "client 2 still listens");
        assert!(!s.is_subscribed("u", 1));
        assert!(s.is_subscribed("u", 2));
        assert!(!s.unsubscribe("u", 1), "not subscribed any more");
        assert!(s.unsubscribe("u", 2));
        assert!(!s.unsubscribe("u", 2));
        assert!(s.subscribe("a", 1) && !s.subscribe("a", 2) && s.subscribe("b", 2));
        assert_eq!(s.drop_client(2), vec!["b".to_owned()]);
        assert!(s.is_subscribed("a", 1));
    }
}
