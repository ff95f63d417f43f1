//! The bottom layer: plain serde types every layer above shares, and nothing else. Events and
//! call summaries, approval requests, dataset and result views, the Engine API's requests and
//! replies, and dates. They import nothing from the crate, so store, session, upstream and the
//! workbench can all use them without reaching into one another. A type here that travels on
//! the session socket is part of the workbench protocol: changing its shape moves
//! [`engine::WORKBENCH_PROTOCOL`], and `tests/wire.rs` pins its JSON.

pub mod data;
pub mod engine;
pub mod events;
pub mod time;
