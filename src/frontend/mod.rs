//! The front ends, above the core: the Engine API (what a workbench may ask of a session) with
//! its in-process engine and its socket client, the session socket's server, and `loom serve`
//! over stdio and streamable HTTP. Composition (who starts what) lives here too, so the command line calls one
//! place and no transport below builds a session.

pub mod compose;
pub mod engine;
pub mod http;
pub mod local;
pub mod past;
pub mod peer;
mod pipe;
pub mod socket;
pub mod stdio;
