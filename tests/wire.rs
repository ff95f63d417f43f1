//! The workbench protocol pinned: one value of every request, reply and event as it travels on
//! the session socket, compared with `tests/fixtures/wire-v<N>.json` for the protocol version
//! `WORKBENCH_PROTOCOL` names. A change to a wire type's JSON fails here until the version moves
//! and a file for the new version is written (`LOOM_BLESS=1 cargo test --test wire` writes it;
//! the old version's file stays, so the same version can never mean two shapes). The matches
//! below have no wildcard: a new variant does not compile until it has a sample here.

use loom::frontend::engine::{
    BlobView, DatasetView, EngineError, ExportOptions, Reply, Request, ServerView, SessionInfo,
    WORKBENCH_PROTOCOL,
};
use loom::types::data::{
    Bar, ColumnStats, DatasetKind, Description, DropReason, JoinHint, MemoryView, Provenance,
    ResultTable,
};
use loom::types::events::{
    ApprovalRequest, Binding, CallRecord, CallSummary, Caller, Decision, Event, FoundTool,
    KeptPlace, LogKind, LogLine, Outcome, RankParts, Sequenced, ServerState, Settlement,
};
use serde_json::{Value, json};

fn summary() -> CallSummary {
    CallSummary {
        call: 7,
        at: "2026-12-01T00:00:00Z".into(),
        caller: Caller::Model,
        server: "sample".into(),
        tool: "sample_list_orders".into(),
        outcome: Outcome::Intercepted,
        reference: Some("sample_list_orders_1".into()),
        millis: 12,
        bytes_in: 80_000,
        tokens_in: 20_000,
        bytes_out: 2_000,
        tokens_out: 500,
        arguments: "{\"limit\":1000}".into(),
        decision: Some("approved once by a human (at loom attach, pid 9 on /dev/pts/3)".into()),
        waited_millis: Some(1500),
        passed_because: None,
        client: Some("claude-code 2.1 · HTTP from 127.0.0.1:53122".into()),
        via: Some("loom_call".into()),
        batch: Some(4),
        bindings: vec![Binding {
            at: "/notes".into(),
            source: "sql (value): SELECT count(*) FROM orders".into(),
            inputs: vec!["sample_list_orders_1".into()],
            bytes: 3,
        }],
        inputs: vec!["sample_list_orders_1".into()],
    }
}

fn memory() -> MemoryView {
    MemoryView {
        key: "db".into(),
        version: 2,
        content: "never touch prod".into(),
        tags: vec!["rules".into()],
        pinned: true,
        author: "human".into(),
        at: "2026-12-01T00:00:00Z".into(),
        deleted: false,
    }
}

fn approval() -> ApprovalRequest {
    ApprovalRequest {
        approval: 3,
        call: 7,
        server: "fs".into(),
        tool: "fs_delete".into(),
        original: "delete".into(),
        annotations: json!({ "destructiveHint": true }),
        arguments: json!({ "path": "/tmp/x" }),
        timeout_secs: 120,
        reason: Some("it binds data from server `db` into a call to server `fs`".into()),
        ..Default::default()
    }
}

fn description() -> Description {
    Description {
        dataset: "sample_list_orders_1".into(),
        kind: DatasetKind::Ingest,
        rows: 1000,
        pinned: false,
        created: "2026-12-01T00:00:00Z".into(),
        columns: vec![ColumnStats {
            name: "amount".into(),
            ty: "DOUBLE".into(),
            null_fraction: 0.0,
            distinct: 300,
            distinct_exact: false,
            min: Some(json!(0.5)),
            max: Some(json!(299.5)),
            top: vec![(json!(1.5), 4)],
            note: Some("converted".into()),
        }],
        sample_rows: vec![json!({ "amount": 1.5 })],
        join_hints: vec![JoinHint {
            column: "customer_id".into(),
            other: "sample_list_customers_2".into(),
            other_column: "id".into(),
            this_in_other: 1.0,
            other_in_this: 0.5,
        }],
        provenance: Some(Provenance {
            server: "sample".into(),
            tool: "list_orders".into(),
            arguments: Some(json!({ "limit": 1000 })),
            at: "2026-12-01T00:00:00Z".into(),
            rung: "json".into(),
        }),
        context: serde_json::Map::new(),
    }
}

fn requests() -> Vec<Request> {
    let all = vec![
        Request::Session,
        Request::Servers,
        Request::Calls { limit: 50 },
        Request::CallDetail { call: 7 },
        Request::Datasets,
        Request::Describe {
            dataset: "d".into(),
        },
        Request::Chart {
            table: "d".into(),
            column: "c".into(),
            bins: 20,
        },
        Request::Query {
            sql: "SELECT 1".into(),
        },
        Request::CancelQuery,
        Request::Rows {
            table: "t".into(),
            offset: 0,
            limit: 200,
        },
        Request::Export {
            table: "t".into(),
            format: "csv".into(),
            options: ExportOptions::default(),
        },
        Request::Export {
            table: "t".into(),
            format: "csv".into(),
            options: ExportOptions {
                delimiter: ';',
                header: false,
                filename: Some("paid".into()),
                rows: Some((10, 5)),
            },
        },
        Request::Blobs,
        Request::Memories,
        Request::Tools,
        Request::CallTool {
            name: "sample_echo".into(),
            arguments: json!({ "text": "hi" }),
        },
        Request::Approve {
            approval: 3,
            decision: Decision::Deny {
                reason: Some("no".into()),
            },
        },
        Request::Approve {
            approval: 3,
            decision: Decision::Once,
        },
        Request::Approve {
            approval: 3,
            decision: Decision::Session,
        },
        Request::Approvals,
        Request::CancelCall { call: 7 },
        Request::BlobText { key: "b1".into() },
        Request::BlobSearch {
            key: "b1".into(),
            pattern: "error|warn".into(),
        },
        Request::ServerLog {
            server: "sample".into(),
        },
        Request::RestartServer {
            server: "sample".into(),
        },
        Request::MemorySet {
            key: "db".into(),
            content: "never touch prod".into(),
            tags: vec!["rules".into()],
            pinned: true,
            if_version: Some(2),
        },
        Request::MemoryDelete { key: "db".into() },
        Request::MemoryHistory { key: "db".into() },
        Request::PinTool {
            name: "sample_echo".into(),
        },
    ];
    for r in &all {
        match r {
            Request::Session
            | Request::Servers
            | Request::Calls { .. }
            | Request::CallDetail { .. }
            | Request::Datasets
            | Request::Describe { .. }
            | Request::Chart { .. }
            | Request::Query { .. }
            | Request::CancelQuery
            | Request::Rows { .. }
            | Request::Export { .. }
            | Request::Blobs
            | Request::Memories
            | Request::Tools
            | Request::PinTool { .. }
            | Request::CallTool { .. }
            | Request::Approve { .. }
            | Request::Approvals
            | Request::CancelCall { .. }
            | Request::BlobText { .. }
            | Request::BlobSearch { .. }
            | Request::ServerLog { .. }
            | Request::RestartServer { .. }
            | Request::MemorySet { .. }
            | Request::MemoryDelete { .. }
            | Request::MemoryHistory { .. } => {}
        }
    }
    all
}

fn replies() -> Vec<Reply> {
    let all = vec![
        Reply::Session(Box::new(SessionInfo {
            pid: 42,
            config: "loom.toml".into(),
            started_at: "2026-12-01T00:00:00Z".into(),
            servers: vec!["sample".into()],
            protocol: WORKBENCH_PROTOCOL,
            clients: 2,
            export_dir: "/home/me/exports".into(),
        })),
        Reply::Servers {
            servers: vec![ServerView {
                name: "sample".into(),
                state: ServerState::Up,
                era: Some("2025-11-25".into()),
                version: Some("1.0".into()),
                tools: 4,
                last_error: None,
                stderr: vec!["ready".into()],
                up_since: Some("2026-12-01T00:00:00Z".into()),
                failures: 2,
                restarts: 1,
                last_error_at: Some("2026-11-30T23:59:00Z".into()),
                max_calls_per_second: 100,
                throttled: 42,
            }],
        },
        Reply::Calls {
            calls: vec![summary()],
        },
        Reply::CallDetail {
            record: Some(Box::new(CallRecord {
                summary: summary(),
                request: "{}".into(),
                response: "{}".into(),
            })),
        },
        Reply::Datasets {
            datasets: vec![DatasetView {
                dataset: "d".into(),
                rows: 3,
                columns: vec![("a".into(), "INTEGER".into())],
                source: "sample/list_orders".into(),
                pinned: true,
                created: "2026-12-01T00:00:00Z".into(),
                lineage: Some(loom::types::data::Lineage {
                    call: Some(7),
                    inputs: vec!["blob/3f2a".into(), "memory:runbook".into()],
                    sql: Some("SELECT 1".into()),
                }),
            }],
        },
        Reply::Describe {
            describe: Box::new(description()),
        },
        Reply::Chart {
            bars: vec![Bar {
                label: "paid".into(),
                count: 10,
            }],
        },
        Reply::Query {
            result: ResultTable {
                table: "_loom_result_1".into(),
                columns: vec![("n".into(), "BIGINT".into())],
                rows: 1,
                millis: 3,
            },
        },
        Reply::Rows {
            rows: vec![vec![Some("1".into()), None]],
        },
        Reply::Exported {
            path: "/tmp/x.csv".into(),
            rows: 3,
        },
        Reply::Blobs {
            blobs: vec![BlobView {
                key: "b1".into(),
                summary: "log".into(),
                chars: 10,
                lines: 2,
                expires: "2026-12-01T01:00:00Z".into(),
                lineage: None,
            }],
        },
        Reply::Memories {
            memories: vec![memory()],
            skipped_lines: 1,
        },
        Reply::Tools {
            tools: vec![json!({ "name": "sample_echo" })],
            owners: [("sample_echo".to_owned(), "sample".to_owned())].into(),
            placement: [(
                "sample_echo".to_owned(),
                loom::types::engine::ToolPlacement {
                    listed: true,
                    why: "pinned in the config".into(),
                    tokens: 40,
                    tokens_full: 120,
                },
            )]
            .into(),
            mode: "search".into(),
        },
        Reply::ToolPinned {
            name: "sample_echo".into(),
            pinned: true,
        },
        Reply::ToolResult {
            result: json!({ "content": [] }),
        },
        Reply::Approvals {
            approvals: vec![approval()],
        },
        Reply::BlobText {
            text: "line 1\nline 2".into(),
        },
        Reply::BlobMatches { lines: vec![0, 4] },
        Reply::ServerLog {
            lines: vec![
                LogLine {
                    at: "2026-12-01T00:00:00Z".into(),
                    kind: LogKind::Stderr,
                    text: "ready".into(),
                },
                LogLine {
                    at: "2026-12-01T00:00:01Z".into(),
                    kind: LogKind::State,
                    text: "restarting 1/5: exit status 1".into(),
                },
            ],
        },
        Reply::Memory { memory: memory() },
        Reply::MemoryHistory {
            versions: vec![
                memory(),
                MemoryView {
                    version: 3,
                    deleted: true,
                    ..memory()
                },
            ],
        },
        Reply::Done,
    ];
    for r in &all {
        match r {
            Reply::Session(_)
            | Reply::Servers { .. }
            | Reply::Calls { .. }
            | Reply::CallDetail { .. }
            | Reply::Datasets { .. }
            | Reply::Describe { .. }
            | Reply::Chart { .. }
            | Reply::Query { .. }
            | Reply::Rows { .. }
            | Reply::Exported { .. }
            | Reply::Blobs { .. }
            | Reply::Memories { .. }
            | Reply::Tools { .. }
            | Reply::ToolPinned { .. }
            | Reply::ToolResult { .. }
            | Reply::Approvals { .. }
            | Reply::BlobText { .. }
            | Reply::BlobMatches { .. }
            | Reply::ServerLog { .. }
            | Reply::Memory { .. }
            | Reply::MemoryHistory { .. }
            | Reply::Done => {}
        }
    }
    all
}

fn events() -> Vec<Sequenced> {
    let all = vec![
        Event::ServerState {
            server: "sample".into(),
            state: ServerState::Restarting { attempt: 2, max: 5 },
            detail: None,
        },
        Event::ServerState {
            server: "remote".into(),
            state: ServerState::NeedsAuth,
            detail: Some("401: WWW-Authenticate: Bearer realm=\"api\"".into()),
        },
        Event::ServerStderr {
            server: "sample".into(),
            line: "ready".into(),
            at: "2026-12-01T00:00:00Z".into(),
        },
        Event::CallStarted(summary()),
        Event::CallProgress {
            call: 7,
            progress: 40.0,
            total: Some(500.0),
            message: Some("counting".into()),
        },
        Event::CallFinished(summary()),
        Event::DatasetCreated {
            dataset: "d".into(),
            rows: 3,
            server: "loom".into(),
            tool: "loom_query".into(),
        },
        Event::DatasetDropped {
            dataset: "d".into(),
            reason: DropReason::Evicted,
        },
        Event::BlobParked {
            key: "b1".into(),
            bytes: 100,
        },
        Event::MemoryChanged { key: "db".into() },
        Event::ListingChanged {
            tool: "sample_echo".into(),
            why: "promoted".into(),
        },
        Event::ToolsFound {
            query: "late orders | overdue".into(),
            tools: vec![FoundTool {
                name: "sample_list_orders".into(),
                rank: 1,
                schema: true,
                named_exactly: false,
                why: RankParts {
                    score: 2.5,
                    words: 1.0,
                    matched: vec!["orders".into()],
                    meaning: 0.5,
                    server: 1.0,
                    named: 0.0,
                    used: 1.0,
                    unmade: true,
                    kept: Some(KeptPlace::Feeder {
                        of: "sample_get_order_details".into(),
                    }),
                },
            }],
        },
        Event::ApprovalRequested(approval()),
        Event::ApprovalSettled {
            approval: 3,
            decision: Settlement::ApprovedOnce,
            by: Some("loom attach, pid 9 on /dev/pts/3".into()),
        },
        Event::CallFinished(CallSummary {
            outcome: Outcome::Passed,
            reference: None,
            decision: None,
            waited_millis: None,
            passed_because: Some("non-text content".into()),
            ..summary()
        }),
        Event::ExportProgress {
            table: "t".into(),
            rows: 10,
            total: 100,
        },
    ];
    for e in &all {
        match e {
            Event::ServerState { .. }
            | Event::ServerStderr { .. }
            | Event::CallStarted(_)
            | Event::CallProgress { .. }
            | Event::CallFinished(_)
            | Event::DatasetCreated { .. }
            | Event::DatasetDropped { .. }
            | Event::BlobParked { .. }
            | Event::MemoryChanged { .. }
            | Event::ListingChanged { .. }
            | Event::ToolsFound { .. }
            | Event::ApprovalRequested(_)
            | Event::ApprovalSettled { .. }
            | Event::ExportProgress { .. } => {}
        }
    }
    all.into_iter()
        .enumerate()
        .map(|(i, event)| Sequenced {
            seq: i as u64 + 1,
            event,
        })
        .collect()
}

fn errors() -> Vec<EngineError> {
    let all = vec![
        EngineError::Unknown("no dataset named `x`".into()),
        EngineError::Failed("the query was not accepted".into()),
        EngineError::Disconnected("the session ended".into()),
        EngineError::Dropped("this result was dropped when its workbench closed".into()),
        EngineError::Cancelled("the query was cancelled".into()),
    ];
    for e in &all {
        match e {
            EngineError::Unknown(_)
            | EngineError::Failed(_)
            | EngineError::Disconnected(_)
            | EngineError::Dropped(_)
            | EngineError::Cancelled(_) => {}
        }
    }
    all
}

#[test]
fn the_wire_types_json_is_pinned_to_the_protocol_version() {
    let now = json!({
        "protocol": WORKBENCH_PROTOCOL,
        "requests": requests(),
        "replies": replies(),
        "events": events(),
        "errors": errors(),
    });
    // Every sample reads back as itself: nothing is lost on the way.
    for r in requests() {
        let back: Request = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
    for r in replies() {
        let back: Reply = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
    for e in errors() {
        let back: EngineError = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
    for e in events() {
        let back: Sequenced = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("wire-v{WORKBENCH_PROTOCOL}.json"));
    let text = serde_json::to_string_pretty(&now).unwrap() + "\n";
    if std::env::var_os("LOOM_BLESS").is_some() && !path.exists() {
        std::fs::write(&path, &text).expect("write the pinned wire file");
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} is missing: run `LOOM_BLESS=1 cargo test --test wire` to pin protocol {WORKBENCH_PROTOCOL}",
            path.display()
        )
    });
    let pinned: Value = serde_json::from_str(&pinned).expect("pinned file is JSON");
    assert_eq!(
        pinned, now,
        "the workbench wire JSON changed but WORKBENCH_PROTOCOL is still {WORKBENCH_PROTOCOL}: move the version (in src/types/engine.rs) and pin the new shape with LOOM_BLESS=1"
    );
}
