//! The catalog tree as a person uses it: groups and items open and close, names go into the
//! editor quoted as DuckDB needs, memories are written, pinned, deleted and read back version
//! by version as the human (a change made meanwhile is refused and the text kept), and the
//! selection stays on a real row whatever the listings do. The engine double keeps memories
//! the way the real store does: versions, `if_version`, deletions that keep the history.

use super::app::{App, Group, MemoryStage, Msg, Node, Overlay, PaletteStage, Pane, history_text};
use super::tests::{fixture, pane_text, screen, started};
use crate::frontend::engine::{DatasetView, EngineError, Reply, Request};
use crate::types::data::MemoryView;
use crossterm::event::KeyCode;

/// A memory version; the store numbers and dates it.
fn memory(key: &str, content: &str, author: &str) -> MemoryView {
    MemoryView {
        key: key.into(),
        version: 0,
        content: content.into(),
        tags: vec![],
        pinned: false,
        author: author.into(),
        at: String::new(),
        deleted: false,
    }
}

/// Memories as the store keeps them: every version, oldest first.
#[derive(Default)]
pub(super) struct Memories {
    versions: Vec<MemoryView>,
    /// Tools a person pinned: the tool list answers with them listed.
    pinned_tools: Vec<String>,
}

impl Memories {
    fn current(&self, key: &str) -> Option<&MemoryView> {
        self.versions
            .iter()
            .rev()
            .find(|m| m.key == key)
            .filter(|m| !m.deleted)
    }

    fn write(&mut self, mut m: MemoryView) -> MemoryView {
        let last = self
            .versions
            .iter()
            .filter(|v| v.key == m.key)
            .map(|v| v.version)
            .max()
            .unwrap_or(0);
        m.version = last + 1;
        m.at = format!("2026-11-30T11:00:{:02}Z", self.versions.len());
        self.versions.push(m.clone());
        m
    }

    /// Someone else (the model) writes `key` meanwhile.
    fn model_writes(&mut self, key: &str, content: &str) -> MemoryView {
        self.write(memory(key, content, "model"))
    }

    /// What the engine answers; anything not about memories is the fixture's.
    pub(super) fn answer(&mut self, req: &Request) -> Result<Reply, String> {
        Ok(match req {
            Request::Memories => {
                let mut keys: Vec<&str> = Vec::new();
                for v in &self.versions {
                    if !keys.contains(&v.key.as_str()) {
                        keys.push(&v.key);
                    }
                }
                Reply::Memories {
                    memories: keys
                        .iter()
                        .filter_map(|k| self.current(k).cloned())
                        .collect(),
                    skipped_lines: 0,
                }
            }
            Request::MemorySet {
                key,
                content,
                tags,
                pinned,
                if_version,
            } => {
                let current = self.current(key).map_or(0, |m| m.version);
                if let Some(expected) = if_version
                    && *expected != current
                {
                    return Err(format!(
                        "memory `{key}` is at version {current}, not {expected}; read it again and retry with if_version = {current}"
                    ));
                }
                let memory = self.write(MemoryView {
                    tags: tags.clone(),
                    pinned: *pinned,
                    ..memory(key, content, "human")
                });
                Reply::Memory { memory }
            }
            Request::MemoryDelete { key } => {
                let Some(cur) = self.current(key).cloned() else {
                    return Err(format!("no memory `{key}`"));
                };
                let memory = self.write(MemoryView {
                    deleted: true,
                    author: "human".into(),
                    ..cur
                });
                Reply::Memory { memory }
            }
            Request::MemoryHistory { key } => Reply::MemoryHistory {
                versions: self
                    .versions
                    .iter()
                    .filter(|v| &v.key == key)
                    .cloned()
                    .collect(),
            },
            Request::PinTool { name } => {
                self.pinned_tools.push(name.clone());
                Reply::ToolPinned {
                    name: name.clone(),
                    pinned: true,
                }
            }
            Request::Tools => match fixture(req)? {
                Reply::Tools {
                    tools,
                    owners,
                    mut placement,
                    mode,
                } => {
                    for name in &self.pinned_tools {
                        if let Some(p) = placement.get_mut(name) {
                            p.listed = true;
                            p.why = "pinned this session".into();
                            p.tokens = p.tokens_full;
                        }
                    }
                    Reply::Tools {
                        tools,
                        owners,
                        placement,
                        mode,
                    }
                }
                other => other,
            },
            other => return fixture(other),
        })
    }
}

/// Feeds messages, answering every request from `mem` (and the fixture); returns the requests.
fn run(a: &mut App, mem: &mut Memories, msgs: Vec<Msg>) -> Vec<Request> {
    let mut sent = Vec::new();
    for m in msgs {
        let mut queue = a.update(m);
        while !queue.is_empty() {
            let (t, req) = queue.remove(0);
            sent.push(req.clone());
            let reply = mem.answer(&req).map_err(EngineError::from);
            queue.extend(a.update(Msg::Reply(t, reply)));
        }
    }
    sent
}

fn typed(text: &str) -> Vec<Msg> {
    text.chars()
        .map(|c| match c {
            '\n' => Msg::code(KeyCode::Enter),
            c => Msg::char(c),
        })
        .collect()
}

fn status(a: &App) -> String {
    a.status.as_ref().map(|s| s.0.clone()).unwrap_or_default()
}

fn node(a: &App) -> Node {
    a.catalog.selected_node().clone()
}

/// A workbench whose memory store holds `db` (version 1, by the model), with the catalog
/// focused on that memory.
fn on_memory(mem: &mut Memories) -> App {
    mem.model_writes("db", "never touch prod\nask first");
    let mut a = started();
    // `G`: the last row, the memory.
    run(
        &mut a,
        mem,
        vec![
            Msg::event(crate::types::events::Sequenced {
                seq: 9,
                event: crate::types::events::Event::MemoryChanged { key: "db".into() },
            }),
            Msg::char('4'),
            Msg::char('G'),
        ],
    );
    assert_eq!(node(&a), Node::Memory("db".into()));
    a
}

#[test]
fn the_tree_opens_closes_and_jumps_between_groups() {
    let mut a = started();
    a.size = (220, 60);
    let mut mem = Memories::default();
    run(&mut a, &mut mem, vec![Msg::char('4')]);
    let pane = pane_text(&a, Pane::Catalog);
    for g in [
        "Servers · 3",
        "Datasets · 2",
        "Parked text · 0",
        "Memories · 0",
    ] {
        assert!(pane.contains(g), "{g}:\n{pane}");
    }
    assert_eq!(node(&a), Node::Dataset("sample_list_orders_1".into()));
    assert!(!pane.contains("BIGINT"), "datasets start closed:\n{pane}");
    // `l` opens the dataset, again steps onto its first column; `h` goes back and closes.
    run(&mut a, &mut mem, vec![Msg::char('l')]);
    let pane = pane_text(&a, Pane::Catalog);
    assert!(
        pane.contains("order_id  BIGINT") && pane.contains("status  VARCHAR"),
        "{pane}"
    );
    run(&mut a, &mut mem, vec![Msg::char('l')]);
    assert_eq!(
        node(&a),
        Node::Column {
            dataset: "sample_list_orders_1".into(),
            column: "order_id".into()
        }
    );
    run(&mut a, &mut mem, vec![Msg::char('h')]);
    assert_eq!(node(&a), Node::Dataset("sample_list_orders_1".into()));
    run(&mut a, &mut mem, vec![Msg::char('h')]);
    assert!(!pane_text(&a, Pane::Catalog).contains("BIGINT"));
    run(&mut a, &mut mem, vec![Msg::char('h'), Msg::char('h')]);
    assert_eq!(node(&a), Node::Group(Group::Datasets));
    assert!(
        !pane_text(&a, Pane::Catalog).contains("sample_list_order"),
        "the group closed"
    );
    run(&mut a, &mut mem, vec![Msg::code(KeyCode::Enter)]);
    assert!(pane_text(&a, Pane::Catalog).contains("sample_list_order"));
    // `[` / `]` go from group to group, wrapping.
    run(&mut a, &mut mem, vec![Msg::char('[')]);
    assert_eq!(node(&a), Node::Group(Group::Servers));
    run(&mut a, &mut mem, vec![Msg::char('[')]);
    assert_eq!(node(&a), Node::Group(Group::Memories));
    run(&mut a, &mut mem, vec![Msg::char(']'), Msg::char(']')]);
    assert_eq!(node(&a), Node::Group(Group::Datasets));
    // Servers hold their tools, each with its description's first line; loom's own apart.
    run(
        &mut a,
        &mut mem,
        vec![
            Msg::char('['),
            Msg::code(KeyCode::Enter),
            Msg::char('j'),
            Msg::code(KeyCode::Enter),
        ],
    );
    assert_eq!(node(&a), Node::Server("sample".into()));
    let pane = pane_text(&a, Pane::Catalog);
    assert!(
        pane.contains("sample_list_orders not listed (")
            && pane.contains("loom 1 tool")
            && pane.contains("Servers · 3 · search 37/98 tok"),
        "{pane}"
    );
    // Enter on a tool opens it in the palette, its arguments ready.
    run(
        &mut a,
        &mut mem,
        vec![Msg::char('j'), Msg::code(KeyCode::Enter)],
    );
    match &a.overlay {
        Overlay::Palette(p) => assert!(matches!(p.stage, PaletteStage::Edit { .. })),
        _ => panic!("the palette is open on the tool"),
    }
}

/// A wide workbench with the Catalog on the sample server's tool.
fn on_list_orders() -> (App, Memories) {
    let mut a = started();
    a.size = (220, 60);
    let mut mem = Memories::default();
    // Servers, then sample, then its tool.
    run(
        &mut a,
        &mut mem,
        vec![
            Msg::char('4'),
            Msg::char('g'),
            Msg::code(KeyCode::Enter),
            Msg::char('j'),
            Msg::code(KeyCode::Enter),
            Msg::char('j'),
        ],
    );
    assert_eq!(node(&a), Node::Tool("sample_list_orders".into()));
    (a, mem)
}

#[test]
fn a_selected_tool_shows_its_place_in_the_listing_and_its_schema_in_detail() {
    let (mut a, mut mem) = on_list_orders();
    let detail = pane_text(&a, Pane::Detail);
    for want in [
        "tool sample_list_orders · server sample",
        "not listed in search mode",
        "61 tok",
        "List orders",
        "input schema",
        "\"limit\"",
    ] {
        assert!(detail.contains(want), "{want}:\n{detail}");
    }
    // A pin moves it into the listing, and Detail follows.
    let sent = run(&mut a, &mut mem, vec![Msg::char('p')]);
    assert!(
        sent.iter()
            .any(|r| matches!(r, Request::PinTool { name } if name == "sample_list_orders"))
    );
    let detail = pane_text(&a, Pane::Detail);
    assert!(
        detail.contains("listed (pinned this session) · 61 tok per turn"),
        "{detail}"
    );
    // `y` in Detail copies the definition as listed.
    run(&mut a, &mut mem, vec![Msg::char('2'), Msg::char('y')]);
    let copied = a.clipboard.register().unwrap_or_default().to_owned();
    assert!(copied.contains("\"inputSchema\""), "{copied}");
    // The hint's keys work from Detail too: `p` pins the tool shown, `enter` calls it.
    assert_eq!(a.focus, Pane::Detail);
    assert!(a.offers(super::keymap::Action::Open) && a.offers(super::keymap::Action::TogglePin));
    let sent = run(&mut a, &mut mem, vec![Msg::char('p')]);
    assert!(
        sent.iter()
            .any(|r| matches!(r, Request::PinTool { name } if name == "sample_list_orders")),
        "{sent:?}"
    );
    run(&mut a, &mut mem, vec![Msg::code(KeyCode::Enter)]);
    assert!(
        matches!(&a.overlay, Overlay::Palette(p) if matches!(&p.stage, PaletteStage::Edit { .. })),
        "{}",
        screen(&a)
    );
}

#[test]
fn a_name_goes_into_the_editor_quoted_as_duckdb_needs() {
    use super::sql::quote_ident;
    assert_eq!(quote_ident("order_id"), "order_id");
    assert_eq!(quote_ident("Order ID"), "\"Order ID\"");
    assert_eq!(quote_ident("select"), "\"select\"");
    assert_eq!(quote_ident("we\"ird"), "\"we\"\"ird\"");
    assert_eq!(quote_ident("1st"), "\"1st\"");
    assert_eq!(quote_ident("CamelCase"), "\"CamelCase\"");
    assert_eq!(quote_ident(""), "\"\"");
    let mut a = started();
    let mut mem = Memories::default();
    a.catalog.set_datasets(
        100,
        vec![DatasetView {
            dataset: "orders".into(),
            columns: vec![
                ("Order ID".into(), "BIGINT".into()),
                ("select".into(), "VARCHAR".into()),
            ],
            ..Default::default()
        }],
    );
    run(&mut a, &mut mem, vec![Msg::char('5')]);
    run(&mut a, &mut mem, typed("SELECT  FROM "));
    run(
        &mut a,
        &mut mem,
        vec![Msg::code(KeyCode::Esc), Msg::char('4'), Msg::char('i')],
    );
    assert!(status(&a).contains("inserted orders"), "{}", status(&a));
    assert_eq!(
        a.focus,
        Pane::Catalog,
        "the catalog keeps focus for more names"
    );
    assert_eq!(a.editor.text(), "SELECT  FROM orders");
    // The cursor stays after the insertion; put it after SELECT and insert two columns.
    a.editor
        .area
        .move_cursor(tui_textarea::CursorMove::Jump(0, 7));
    run(
        &mut a,
        &mut mem,
        vec![Msg::char('l'), Msg::char('j'), Msg::char('i')],
    );
    assert_eq!(a.editor.text(), "SELECT \"Order ID\" FROM orders");
    assert!(status(&a).contains("\"Order ID\""), "{}", status(&a));
    // On a tool nothing is inserted, and `i` is not offered there.
    run(
        &mut a,
        &mut mem,
        vec![Msg::char('g'), Msg::char('l'), Msg::char('j')],
    );
    assert_eq!(node(&a), Node::Server("sample".into()));
    assert!(!a.offers(super::keymap::Action::InsertName));
    run(&mut a, &mut mem, vec![Msg::char('i')]);
    assert_eq!(a.editor.text(), "SELECT \"Order ID\" FROM orders");
}

#[test]
fn a_memory_edit_saves_with_the_version_it_was_shown() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    run(&mut a, &mut mem, vec![Msg::char('e')]);
    let Overlay::Memory(m) = &a.overlay else {
        panic!("the editor is open")
    };
    assert_eq!(m.text(), "never touch prod\nask first");
    assert!(screen(&a).contains("editing version 1"), "{}", screen(&a));
    // Keys are text here, `e`, `q` and `D` too.
    let sent = run(
        &mut a,
        &mut mem,
        [Msg::code(KeyCode::Down), Msg::code(KeyCode::End)]
            .into_iter()
            .chain(typed(", ever (qeD)"))
            .chain([Msg::ctrl('s')])
            .collect(),
    );
    assert!(
        sent.contains(&Request::MemorySet {
            key: "db".into(),
            content: "never touch prod\nask first, ever (qeD)".into(),
            tags: vec![],
            pinned: false,
            if_version: Some(1),
        }),
        "{sent:?}"
    );
    assert!(matches!(a.overlay, Overlay::None));
    assert!(
        status(&a).contains("memory db saved: version 2"),
        "{}",
        status(&a)
    );
    let m = &a.catalog.memories[0];
    assert_eq!((m.version, m.author.as_str()), (2, "human"));
    assert!(m.content.ends_with("ever (qeD)"));
}

#[test]
fn an_edit_refused_because_someone_changed_it_keeps_the_text() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    // The cursor starts at the end of the text.
    run(&mut a, &mut mem, vec![Msg::char('e')]);
    mem.model_writes("db", "the model changed it");
    run(&mut a, &mut mem, typed(" (mine)"));
    run(&mut a, &mut mem, vec![Msg::ctrl('s')]);
    let Overlay::Memory(m) = &a.overlay else {
        panic!("the editor stays open")
    };
    assert_eq!(m.text(), "never touch prod\nask first (mine)");
    let said = "Not saved: db was changed by model while you edited it (now version 2; you \
                started from 1). ctrl-s again saves yours over it · ctrl-l loads theirs · esc \
                leaves it as it is";
    assert_eq!(m.error.as_deref(), Some(said));
    assert!(!m.saving);
    let s = screen(&a);
    assert!(s.contains("changed by model while you edited it"), "{s}");
    assert!(s.contains("ctrl-l loads theirs"), "{s}");
    assert!(
        status(&a).starts_with("Not saved: db was changed"),
        "{}",
        status(&a)
    );
    // Nothing was overwritten.
    assert_eq!(
        mem.current("db").map(|m| m.content.as_str()),
        Some("the model changed it")
    );
    // ctrl-l loads theirs, to edit from the newer version.
    run(&mut a, &mut mem, vec![Msg::ctrl('l')]);
    let Overlay::Memory(m) = &a.overlay else {
        panic!("the editor stays open")
    };
    assert_eq!(m.text(), "the model changed it");
    assert_eq!(m.if_version, 2);
    assert_eq!(m.error, None);
    // Esc gives up the edit.
    run(&mut a, &mut mem, vec![Msg::code(KeyCode::Esc)]);
    assert!(matches!(a.overlay, Overlay::None));
}

/// The hint after `ctrl-l` ("ctrl-u brings your text back") holds in one step: not an empty
/// editor first; `alt-r` (redo) then loads theirs again in one step, and edits made after loading
/// undo one by one before the load does.
#[test]
fn one_ctrl_u_after_loading_theirs_brings_the_persons_text_back() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    run(&mut a, &mut mem, vec![Msg::char('e')]);
    mem.model_writes("db", "the model changed it");
    run(&mut a, &mut mem, typed(" MINE"));
    run(&mut a, &mut mem, vec![Msg::ctrl('s'), Msg::ctrl('l')]);
    let text = |a: &super::app::App| match &a.overlay {
        Overlay::Memory(m) => m.text(),
        _ => panic!("the editor stays open"),
    };
    assert_eq!(text(&a), "the model changed it");
    run(&mut a, &mut mem, vec![Msg::ctrl('u')]);
    assert_eq!(text(&a), "never touch prod\nask first MINE");
    let redo = Msg::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char('r'),
        crossterm::event::KeyModifiers::ALT,
    ));
    run(&mut a, &mut mem, vec![redo]);
    assert_eq!(text(&a), "the model changed it");
    run(&mut a, &mut mem, typed("!?"));
    run(&mut a, &mut mem, vec![Msg::ctrl('u')]);
    assert_eq!(text(&a), "the model changed it!");
    run(&mut a, &mut mem, vec![Msg::ctrl('u'), Msg::ctrl('u')]);
    assert_eq!(text(&a), "never touch prod\nask first MINE");
    // Further back, the person's own typing undoes as before.
    run(&mut a, &mut mem, vec![Msg::ctrl('u')]);
    assert_eq!(text(&a), "never touch prod\nask first MIN");
}

/// After a save refused for a newer version, `ctrl-s` again writes the person's text over it
/// (typing more meanwhile keeps the choice on screen).
#[test]
fn a_second_ctrl_s_after_a_conflict_saves_over_the_newer_version() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    run(&mut a, &mut mem, vec![Msg::char('e')]);
    mem.model_writes("db", "the model changed it");
    run(&mut a, &mut mem, vec![Msg::char('!'), Msg::ctrl('s')]);
    run(&mut a, &mut mem, vec![Msg::char('!')]);
    assert!(matches!(&a.overlay, Overlay::Memory(m) if m.conflict.is_some() && m.error.is_some()));
    let sent = run(&mut a, &mut mem, vec![Msg::ctrl('s')]);
    assert!(
        sent.iter().any(|r| matches!(
            r,
            Request::MemorySet {
                if_version: Some(2),
                ..
            }
        )),
        "{sent:?}"
    );
    assert!(matches!(a.overlay, Overlay::None), "saved and closed");
    assert_eq!(
        mem.current("db").map(|m| (m.content.as_str(), m.version)),
        Some(("never touch prod\nask first!!", 3))
    );
    assert_eq!(status(&a), "memory db saved: version 3");
}

#[test]
fn pin_writes_the_same_content_pinned() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    let sent = run(&mut a, &mut mem, vec![Msg::char('p')]);
    assert!(
        sent.contains(&Request::MemorySet {
            key: "db".into(),
            content: "never touch prod\nask first".into(),
            tags: vec![],
            pinned: true,
            if_version: Some(1),
        }),
        "{sent:?}"
    );
    assert_eq!(status(&a), "memory db pinned");
    assert!(a.catalog.memories[0].pinned);
    assert!(pane_text(&a, Pane::Catalog).contains("📌"));
    run(&mut a, &mut mem, vec![Msg::char('p')]);
    assert_eq!(status(&a), "memory db unpinned");
    assert!(!a.catalog.memories[0].pinned);
}

#[test]
fn delete_asks_first_and_the_history_shows_every_version() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    run(&mut a, &mut mem, vec![Msg::char('p')]);
    let sent = run(&mut a, &mut mem, vec![Msg::char('D')]);
    assert!(sent.is_empty(), "{sent:?}");
    assert!(screen(&a).contains("Delete memory db?"), "{}", screen(&a));
    let sent = run(&mut a, &mut mem, vec![Msg::char('n')]);
    assert!(sent.is_empty() && matches!(a.overlay, Overlay::None));
    // The history: newest first, who wrote each and when.
    run(&mut a, &mut mem, vec![Msg::char('H')]);
    let s = screen(&a);
    assert!(s.contains("history of memory db · 2 versions"), "{s}");
    let pin = s.find("version 2 · human · 2026-11-30T11:00:01Z · pinned");
    let first = s.find("version 1 · model · 2026-11-30T11:00:00Z");
    assert!(pin.is_some() && first.is_some() && pin < first, "{s}");
    assert!(s.contains("    never touch prod"), "{s}");
    run(&mut a, &mut mem, vec![Msg::code(KeyCode::Esc)]);
    let sent = run(&mut a, &mut mem, vec![Msg::char('D'), Msg::char('y')]);
    assert!(
        sent.contains(&Request::MemoryDelete { key: "db".into() }),
        "{sent:?}"
    );
    assert!(status(&a).contains("memory db deleted"), "{}", status(&a));
    assert!(a.catalog.memories.is_empty());
    assert_eq!(node(&a), Node::Empty(Group::Memories));
    // A deletion is marked in the history.
    let versions: Vec<MemoryView> = mem.versions.clone();
    let text = history_text(&versions);
    assert!(text.starts_with("version 3 · DELETED by human"), "{text}");
}

#[test]
fn a_new_memory_takes_a_free_key_then_its_content() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    // A taken key is refused before any content is typed.
    run(&mut a, &mut mem, vec![Msg::char('n')]);
    run(&mut a, &mut mem, typed("db\n"));
    let Overlay::Memory(m) = &a.overlay else {
        panic!("the editor is open")
    };
    assert_eq!(m.stage, MemoryStage::Key);
    assert!(m.error.as_deref().is_some_and(|e| e.contains("exists")));
    run(
        &mut a,
        &mut mem,
        vec![Msg::code(KeyCode::Backspace), Msg::code(KeyCode::Backspace)],
    );
    run(
        &mut a,
        &mut mem,
        typed("deploy\nship on fridays\nnot after 4"),
    );
    let sent = run(&mut a, &mut mem, vec![Msg::ctrl('s')]);
    assert!(
        sent.contains(&Request::MemorySet {
            key: "deploy".into(),
            content: "ship on fridays\nnot after 4".into(),
            tags: vec![],
            pinned: false,
            if_version: Some(0),
        }),
        "{sent:?}"
    );
    assert_eq!(a.catalog.memories.len(), 2);
    assert_eq!(node(&a), Node::Memory("deploy".into()));
}

/// Report item 15: `n` from the group's header (Detail showing another item) ends on the new
/// memory, selected and in Detail, before any listing says it exists.
#[test]
fn a_new_memory_is_selected_and_shown_in_detail() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    a.size = (160, 45);
    run(
        &mut a,
        &mut mem,
        vec![Msg::code(KeyCode::Enter), Msg::char('k')],
    );
    assert_eq!(node(&a), Node::Group(Group::Memories));
    assert!(pane_text(&a, Pane::Detail).contains("memory db v1"));
    run(&mut a, &mut mem, vec![Msg::char('n')]);
    run(&mut a, &mut mem, typed("deploy\nship on fridays"));
    // The save's answer only: the listing it asks for has not come back yet.
    let mut queue = a.update(Msg::ctrl('s'));
    let (t, req) = queue.remove(0);
    let reply = mem.answer(&req).map_err(EngineError::from);
    a.update(Msg::Reply(t, reply));
    assert_eq!(node(&a), Node::Memory("deploy".into()));
    let detail = pane_text(&a, Pane::Detail);
    assert!(
        detail.contains("memory deploy v1") && detail.contains("ship on fridays"),
        "{detail}"
    );
}

#[test]
fn the_key_bar_offers_only_what_the_selected_node_takes() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    a.size = (220, 60);
    let footer = |a: &App| screen(a).lines().last().unwrap_or("").to_owned();
    let f = footer(&a);
    for k in [
        "edit memory",
        "pin/unpin",
        "delete memory",
        "memory history",
    ] {
        assert!(f.contains(k), "{k}: {f}");
    }
    assert!(!f.contains("insert name") && !f.contains("describe"), "{f}");
    run(
        &mut a,
        &mut mem,
        vec![Msg::char(']'), Msg::char(']'), Msg::char('j')],
    );
    assert_eq!(node(&a), Node::Dataset("sample_list_orders_1".into()));
    let f = footer(&a);
    assert!(
        f.contains("insert name") && f.contains("describe") && f.contains("expand"),
        "{f}"
    );
    assert!(!f.contains("memory"), "{f}");
}

#[test]
fn the_selection_stays_on_a_real_row_as_listings_shrink() {
    let mut mem = Memories::default();
    let mut a = on_memory(&mut mem);
    // On the second dataset's column; then the listing loses it, then everything.
    run(&mut a, &mut mem, vec![Msg::char(']'), Msg::char(']')]);
    run(
        &mut a,
        &mut mem,
        vec![
            Msg::char('j'),
            Msg::char('j'),
            Msg::char('l'),
            Msg::char('l'),
        ],
    );
    assert!(
        matches!(node(&a), Node::Column { ref dataset, .. } if dataset == "sample_list_customers_2")
    );
    let one = vec![DatasetView {
        dataset: "sample_list_orders_1".into(),
        ..Default::default()
    }];
    a.catalog.set_datasets(200, one);
    assert_eq!(node(&a), Node::Dataset("sample_list_orders_1".into()));
    a.catalog.set_datasets(201, vec![]);
    assert_eq!(node(&a), Node::Empty(Group::Datasets));
    a.catalog.set_tools(
        300,
        &[],
        &Default::default(),
        Default::default(),
        String::new(),
    );
    a.catalog.set_servers(vec![]);
    a.catalog.set_blobs(vec![]);
    mem.versions.clear();
    a.catalog.set_memories(vec![], 0);
    // Every key on every row of an empty tree does nothing harmful.
    for row in 0..a.catalog.rows().len() {
        run(&mut a, &mut mem, vec![Msg::char('g')]);
        for _ in 0..row {
            run(&mut a, &mut mem, vec![Msg::char('j')]);
        }
        for k in [
            'l', 'h', 'i', 'd', 's', 'x', 'e', 'p', 'D', 'H', ']', '[', 'G', 'k',
        ] {
            run(&mut a, &mut mem, vec![Msg::char(k)]);
            run(&mut a, &mut mem, vec![Msg::code(KeyCode::Esc)]);
            a.focus = Pane::Catalog;
            let rows = a.catalog.rows();
            assert!(a.catalog.selected_row() < rows.len());
            assert_eq!(rows[a.catalog.selected_row()].node, node(&a));
        }
        screen(&a);
    }
    assert!(
        a.catalog
            .rows()
            .iter()
            .all(|r| matches!(r.node, Node::Group(_) | Node::Empty(_)))
    );
}

#[test]
fn outside_text_in_the_tree_is_escaped_and_cut_on_character_boundaries() {
    let mut a = started();
    let evil = "ünï\u{1b}]52;c;AAAA\u{7}código 表表表表表表表表表表表表表表\r\nsecond line";
    let tools = vec![serde_json::json!({ "name": "sample_x", "description": evil })];
    a.catalog.set_tools(
        100,
        &tools,
        &[("sample_x".to_owned(), "sample".to_owned())].into(),
        Default::default(),
        String::new(),
    );
    a.catalog.set_datasets(
        100,
        vec![DatasetView {
            dataset: "d".into(),
            columns: vec![(evil.into(), evil.into())],
            ..Default::default()
        }],
    );
    a.catalog.set_memories(
        vec![MemoryView {
            version: 1,
            ..memory(evil, evil, "model")
        }],
        0,
    );
    let mut mem = Memories::default();
    run(
        &mut a,
        &mut mem,
        vec![
            Msg::char('4'),
            Msg::char('l'),
            Msg::char('g'),
            Msg::char('l'),
            Msg::char('j'),
            Msg::char('l'),
        ],
    );
    for size in [(80, 24), (160, 45), (47, 20)] {
        a.size = size;
        let s = screen(&a);
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{s}");
    }
    a.size = (160, 45);
    assert!(pane_text(&a, Pane::Catalog).contains("ünï"));
}

#[test]
fn skipped_memory_lines_are_counted_beside_the_memories() {
    let mut a = started();
    let reqs = a.update(Msg::event(crate::types::events::Sequenced {
        seq: 20,
        event: crate::types::events::Event::MemoryChanged { key: "k".into() },
    }));
    for (t, req) in reqs {
        let reply = match req {
            Request::Memories => Ok(Reply::Memories {
                memories: vec![],
                skipped_lines: 2,
            }),
            other => fixture(&other),
        };
        a.update(Msg::Reply(t, reply.map_err(EngineError::from)));
    }
    let s = screen(&a);
    assert!(s.contains("Memories · 0 !2"), "{s}");
    assert!(!s.contains("damaged lines"), "{s}");
    run(
        &mut a,
        &mut Memories::default(),
        vec![Msg::char('4'), Msg::char('G')],
    );
    let s = screen(&a);
    assert!(s.contains("! 2 damaged lines in"), "{s}");
}

/// The tool list is asked for one request at a time: changes while one is on its way (a
/// server going starting then up, a flood of list changes) ask once more when it is answered,
/// so the newest list always arrives and is applied, and the palette then offers it.
#[test]
fn tool_list_changes_during_a_request_ask_once_more_after_it() {
    use crate::types::events::ServerState;
    let event = |seq, event| Msg::event(crate::types::events::Sequenced { seq, event });
    let state = |seq, state: ServerState| {
        event(
            seq,
            crate::types::events::Event::ServerState {
                server: "sample".into(),
                state,
                detail: None,
            },
        )
    };
    let tools_asked = |reqs: &[(u64, Request)]| {
        reqs.iter()
            .filter(|(_, r)| matches!(r, Request::Tools))
            .map(|(t, _)| *t)
            .collect::<Vec<_>>()
    };
    let stale = || Reply::Tools {
        tools: vec![serde_json::json!({ "name": "loom_query", "description": "Run SQL" })],
        owners: Default::default(),
        placement: Default::default(),
        mode: "full".into(),
    };
    let mut a = started();
    let first = tools_asked(&a.update(state(20, ServerState::Starting)));
    assert_eq!(first.len(), 1);
    let mut more = tools_asked(&a.update(state(21, ServerState::Up)));
    for seq in 22..122 {
        more.extend(tools_asked(&a.update(event(
            seq,
            crate::types::events::Event::ListingChanged {
                tool: "sample_x".into(),
                why: "promoted".into(),
            },
        ))));
    }
    assert!(more.is_empty(), "one request at a time: {more:?}");
    a.update(Msg::char(':'));
    // The answer to the first request (asked before the server came up) reaches the
    // catalog, not the palette, and the list is asked for once more.
    let again = tools_asked(&a.update(Msg::Reply(first[0], Ok(stale()))));
    assert_eq!(again.len(), 1);
    assert!(
        a.tools.is_empty(),
        "the palette waits for a list from after the change"
    );
    let after = tools_asked(&a.update(Msg::Reply(
        again[0],
        Ok(fixture(&Request::Tools).expect("tools")),
    )));
    assert!(after.is_empty(), "nothing changed meanwhile: {after:?}");
    assert!(
        a.tools.iter().any(|t| t["name"] == "sample_list_orders"),
        "{:?}",
        a.tools
    );
    for c in "list_orders".chars() {
        a.update(Msg::char(c));
    }
    a.update(Msg::code(KeyCode::Enter));
    assert!(
        matches!(&a.overlay, Overlay::Palette(p) if matches!(p.stage, PaletteStage::Edit { .. }))
    );
}

/// A dataset a person opens stays theirs: a call that ends while its description is on the
/// way (Traffic following the newest call) does not take Detail from it.
#[test]
fn a_call_ending_while_a_dataset_opens_does_not_take_detail_from_it() {
    let mut a = started();
    assert!(a.traffic.follow);
    run(&mut a, &mut Memories::default(), vec![Msg::char('4')]);
    a.catalog.select_dataset("sample_list_orders_1");
    let reqs = a.update(Msg::code(KeyCode::Enter));
    let (t, req) = reqs
        .into_iter()
        .find(|(_, r)| matches!(r, Request::Describe { .. }))
        .expect("the description is asked for");
    let ended = crate::types::events::CallSummary {
        call: 77,
        tool: "sample_list_orders".into(),
        outcome: crate::types::events::Outcome::Passed,
        ..Default::default()
    };
    let more = a.update(Msg::event(crate::types::events::Sequenced {
        seq: 500,
        event: crate::types::events::Event::CallFinished(ended),
    }));
    assert!(
        !more
            .iter()
            .any(|(_, r)| matches!(r, Request::CallDetail { .. })),
        "{more:?}"
    );
    a.update(Msg::Reply(t, fixture(&req).map_err(EngineError::from)));
    assert_eq!(a.detail.dataset(), Some("sample_list_orders_1"));
}

/// A tool-list request the engine never answers is given up after a while: the next change
/// asks again instead of waiting on it forever.
#[test]
fn a_tool_list_request_never_answered_is_asked_again() {
    let mut a = started();
    a.now_secs = 1_000;
    let changed = |seq| {
        Msg::event(crate::types::events::Sequenced {
            seq,
            event: crate::types::events::Event::ListingChanged {
                tool: "sample_x".into(),
                why: "promoted".into(),
            },
        })
    };
    let asked = |reqs: Vec<(u64, Request)>| {
        reqs.iter()
            .filter(|(_, r)| matches!(r, Request::Tools))
            .count()
    };
    assert_eq!(asked(a.update(changed(30))), 1);
    a.now_secs = 1_010;
    assert_eq!(asked(a.update(changed(31))), 0, "still on its way");
    a.now_secs = 1_031;
    assert_eq!(asked(a.update(changed(32))), 1, "given up, asked again");
}

/// After a find, the Catalog marks each tool it named with its rank, and Detail says why it
/// ranked there (its score's parts and the query's words it holds), or that the find did not
/// name it; hostile text in the query is escaped.
#[test]
fn the_catalog_shows_why_the_last_find_ranked_a_tool() {
    use crate::types::events::{Event, FoundTool, KeptPlace, RankParts};
    let (mut a, _) = on_list_orders();
    let found = |name: &str, rank: u32, schema: bool, kept: Option<KeptPlace>| FoundTool {
        name: name.into(),
        rank,
        schema,
        named_exactly: false,
        why: RankParts {
            score: 3.25,
            words: 0.8,
            matched: vec!["orders".into(), "late".into()],
            meaning: 0.45,
            server: 1.5,
            named: 0.0,
            used: 1.05,
            unmade: rank == 2,
            kept,
        },
    };
    a.update(Msg::event(crate::types::events::Sequenced {
        seq: 900,
        event: Event::ToolsFound {
            query: "late orders\u{1b}[31m | overdue".into(),
            tools: vec![
                found("sample_get_order_details", 1, true, None),
                found(
                    "sample_list_orders",
                    2,
                    false,
                    Some(KeptPlace::Feeder {
                        of: "sample_get_order_details\u{1b}[2J".into(),
                    }),
                ),
            ],
        },
    }));
    let detail = pane_text(&a, Pane::Detail);
    for want in [
        "last find \"late orders\\e[31m | overdue\": #2 of 2 (in `more`)",
        "score 3.25 = words 0.80",
        "(orders, late) · meaning 0.45 · server +1.50 · used ×1.05",
        "discounted: reads a kind",
        "of file the request only makes",
        "· placed after",
        "sample_get_order_details\\e[2J, which",
        "needs what it gives",
        "tool sample_list_orders · server sample",
    ] {
        assert!(detail.contains(want), "{want}:\n{detail}");
    }
    let tree = pane_text(&a, Pane::Catalog);
    assert!(tree.contains("#2 found"), "{tree}");
    // A later find replaces the ranking, and Detail follows: this one did not name it.
    a.update(Msg::event(crate::types::events::Sequenced {
        seq: 901,
        event: Event::ToolsFound {
            query: "weather".into(),
            tools: vec![found("sample_get_weather", 1, true, None)],
        },
    }));
    let detail = pane_text(&a, Pane::Detail);
    assert!(
        detail.contains("last find \"weather\" did not name it (1 named)"),
        "{detail}"
    );
    assert!(!pane_text(&a, Pane::Catalog).contains("found ·"));
}
