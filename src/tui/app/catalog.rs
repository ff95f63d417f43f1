//! The catalog pane: a tree of what the session holds — servers and their tools, datasets and
//! their typed columns, parked text, memories — with the listings it is made from, which nodes
//! are expanded and the selected node. The selection is kept by identity, so it stays on the
//! same item as listings arrive; when its item leaves, it lands on a neighbour in the same group
//! and never past the end of the tree (the four group rows are always there). Opening an item
//! (in Detail, the pager, the palette, the editor) is the app's. It never draws and never sends
//! requests.

use super::navigation::step;
use super::*;
use crate::types::data::DropReason;

/// A top-level group of the tree, in the order drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    Servers,
    Datasets,
    Parked,
    Memories,
}

impl Group {
    pub const ORDER: [Group; 4] = [
        Group::Servers,
        Group::Datasets,
        Group::Parked,
        Group::Memories,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Group::Servers => "Servers",
            Group::Datasets => "Datasets",
            Group::Parked => "Parked text",
            Group::Memories => "Memories",
        }
    }
}

/// One node of the tree, named by what it shows (never by its row, which moves).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Node {
    Group(Group),
    Server(String),
    /// A tool by its exposed name.
    Tool(String),
    Dataset(String),
    Column {
        dataset: String,
        column: String,
    },
    Blob(String),
    Memory(String),
    /// The line an empty group shows instead of items.
    Empty(Group),
}

impl Node {
    pub fn group(&self) -> Group {
        match self {
            Node::Group(g) | Node::Empty(g) => *g,
            Node::Server(_) | Node::Tool(_) => Group::Servers,
            Node::Dataset(_) | Node::Column { .. } => Group::Datasets,
            Node::Blob(_) => Group::Parked,
            Node::Memory(_) => Group::Memories,
        }
    }
}

/// A row of the tree as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub node: Node,
    pub depth: u16,
    /// Whether it is expanded, for a node that has children.
    pub open: Option<bool>,
}

/// A tool as the catalog lists it: its exposed name, the server that serves it, what it says
/// it does (outside text: drawn escaped and cut).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub name: String,
    pub server: String,
    pub description: String,
    /// Whether and why the listing shows it, and its cost in tokens.
    pub placement: Option<crate::types::engine::ToolPlacement>,
}

/// The server node loom's own tools are listed under (no configured server may take the name).
pub const LOOM_SERVER: &str = "loom";

/// The Catalog pane's state.
pub struct Catalog {
    pub datasets: Vec<DatasetView>,
    pub blobs: Vec<BlobView>,
    pub memories: Vec<MemoryView>,
    /// Lines of the memory file the engine could not read; shown beside the memory count.
    pub memory_skipped_lines: u64,
    /// Configured servers, in the Servers pane's order.
    pub servers: Vec<String>,
    pub tools: Vec<ToolEntry>,
    /// The session's listing mode, as the engine last said.
    pub listing_mode: String,
    expanded: HashSet<Node>,
    selected: Node,
    /// The selected node's row when last placed: where the selection lands if it leaves.
    sel_row: usize,
    /// An item selected before its listing knew it (a jump to a new dataset, a memory just
    /// written): the listing that brings it selects it, unless the person moved on.
    awaited: Option<Node>,
    /// The person has not moved in the catalog yet: the selection waits on the first dataset,
    /// what the workbench is mostly opened for.
    untouched: bool,
    /// The first row drawn (set by the draw function, read by the mouse).
    pub top: std::cell::Cell<usize>,
    /// The dataset and tool listings last applied: a reply to an older request that arrives
    /// later is stale (it may still show a dataset whose drop was already seen).
    datasets_ticket: u64,
    tools_ticket: u64,
    /// Datasets that left the session while this workbench watched, and why: a call that made
    /// one no longer offers to go to it.
    pub gone: HashMap<String, DropReason>,
    /// The last `loom_find_tools` the session answered: what it asked, and each tool it named
    /// with why it ranked there.
    pub last_find: Option<LastFind>,
}

/// What one find asked and named.
#[derive(Debug, Clone, PartialEq)]
pub struct LastFind {
    pub query: String,
    pub tools: Vec<crate::types::events::FoundTool>,
}

impl LastFind {
    /// Where the last find put `tool`, if it named it.
    pub fn of(&self, tool: &str) -> Option<&crate::types::events::FoundTool> {
        self.tools.iter().find(|t| t.name == tool)
    }
}

impl Default for Catalog {
    fn default() -> Catalog {
        Catalog {
            datasets: Vec::new(),
            blobs: Vec::new(),
            memories: Vec::new(),
            memory_skipped_lines: 0,
            servers: Vec::new(),
            tools: Vec::new(),
            listing_mode: String::new(),
            // Servers start closed (the Servers pane lists them too), the other groups open;
            // servers and datasets start closed.
            expanded: [Group::Datasets, Group::Parked, Group::Memories]
                .into_iter()
                .map(Node::Group)
                .collect(),
            selected: Node::Group(Group::Datasets),
            sel_row: 0,
            awaited: None,
            untouched: true,
            top: std::cell::Cell::new(0),
            datasets_ticket: 0,
            tools_ticket: 0,
            gone: HashMap::new(),
            last_find: None,
        }
    }
}

impl Catalog {
    /// The server nodes: configured servers, any other a tool names, loom's own last.
    pub fn server_names(&self) -> Vec<String> {
        let mut names = self.servers.clone();
        for t in &self.tools {
            if t.server != LOOM_SERVER && !names.contains(&t.server) {
                names.push(t.server.clone());
            }
        }
        if self.tools.iter().any(|t| t.server == LOOM_SERVER) {
            names.push(LOOM_SERVER.to_owned());
        }
        names
    }

    /// What the listing costs every turn now, and what `full` would cost, in tokens; `None`
    /// before the engine said.
    pub fn listing_cost(&self) -> Option<(u64, u64)> {
        let placed: Vec<_> = self
            .tools
            .iter()
            .filter_map(|t| t.placement.as_ref())
            .collect();
        (!placed.is_empty()).then(|| {
            (
                placed.iter().map(|p| p.tokens).sum(),
                placed.iter().map(|p| p.tokens_full).sum(),
            )
        })
    }

    /// How many items a group row counts.
    pub fn count(&self, g: Group) -> usize {
        match g {
            Group::Servers => self.server_names().len(),
            Group::Datasets => self.datasets.len(),
            Group::Parked => self.blobs.len(),
            Group::Memories => self.memories.len(),
        }
    }

    fn is_open(&self, node: &Node) -> bool {
        self.expanded.contains(node)
    }

    /// The tree as drawn: every group, the items of the open ones, the children of open items.
    pub fn rows(&self) -> Vec<Row> {
        let mut out = Vec::new();
        for g in Group::ORDER {
            let group = Node::Group(g);
            let open = self.is_open(&group);
            out.push(Row {
                node: group,
                depth: 0,
                open: Some(open),
            });
            if !open {
                continue;
            }
            let before = out.len();
            match g {
                Group::Servers => {
                    for s in self.server_names() {
                        let tools = self.tools.iter().filter(|t| t.server == s);
                        self.push_parent(&mut out, Node::Server(s.clone()), tools, |t| {
                            Node::Tool(t.name.clone())
                        });
                    }
                }
                Group::Datasets => {
                    for d in &self.datasets {
                        self.push_parent(
                            &mut out,
                            Node::Dataset(d.dataset.clone()),
                            &d.columns,
                            |c| Node::Column {
                                dataset: d.dataset.clone(),
                                column: c.0.clone(),
                            },
                        );
                    }
                }
                Group::Parked => out.extend(self.blobs.iter().map(|b| Row {
                    node: Node::Blob(b.key.clone()),
                    depth: 1,
                    open: None,
                })),
                Group::Memories => out.extend(self.memories.iter().map(|m| Row {
                    node: Node::Memory(m.key.clone()),
                    depth: 1,
                    open: None,
                })),
            }
            if out.len() == before {
                out.push(Row {
                    node: Node::Empty(g),
                    depth: 1,
                    open: None,
                });
            }
        }
        out
    }

    /// An item of a group and, when it is open, its children.
    fn push_parent<T>(
        &self,
        out: &mut Vec<Row>,
        node: Node,
        children: impl IntoIterator<Item = T>,
        child: impl Fn(T) -> Node,
    ) {
        let mut children = children.into_iter().peekable();
        let has_children = children.peek().is_some();
        let open = has_children && self.is_open(&node);
        out.push(Row {
            node,
            depth: 1,
            open: has_children.then_some(open),
        });
        if open {
            out.extend(children.map(|c| Row {
                node: child(c),
                depth: 2,
                open: None,
            }));
        }
    }

    pub fn selected_node(&self) -> &Node {
        &self.selected
    }

    /// The selected row (valid for `rows()` as of the last change).
    pub fn selected_row(&self) -> usize {
        self.sel_row
    }

    /// The dataset of the selected dataset or column.
    pub fn selected_dataset(&self) -> Option<String> {
        match &self.selected {
            Node::Dataset(d) | Node::Column { dataset: d, .. } => Some(d.clone()),
            _ => None,
        }
    }

    pub fn selected_blob(&self) -> Option<&BlobView> {
        match &self.selected {
            Node::Blob(k) => self.blobs.iter().find(|b| &b.key == k),
            _ => None,
        }
    }

    pub fn selected_memory(&self) -> Option<&MemoryView> {
        match &self.selected {
            Node::Memory(k) => self.memories.iter().find(|m| &m.key == k),
            _ => None,
        }
    }

    pub fn selected_tool(&self) -> Option<&ToolEntry> {
        match &self.selected {
            Node::Tool(n) => self.tools.iter().find(|t| &t.name == n),
            _ => None,
        }
    }

    /// What `enter` does to the selected node, as the key bar says it.
    pub fn open_label(&self) -> &'static str {
        match (
            &self.selected,
            self.rows().get(self.sel_row).and_then(|r| r.open),
        ) {
            (Node::Tool(_), _) => "call in palette",
            (Node::Blob(_), _) => "read",
            (_, Some(true)) => "collapse",
            (_, Some(false)) => "expand",
            _ => "show",
        }
    }

    /// Whether the selected node has children to show or hide.
    pub fn selected_expandable(&self) -> bool {
        self.rows()
            .get(self.sel_row)
            .is_some_and(|r| r.open.is_some())
    }

    /// Puts the selection back on its node after the tree changed; when the node left, on the
    /// row that took its place if that is in the same group, else the nearest one above it
    /// in that group (the group's own row at worst).
    fn settle(&mut self) {
        let rows = self.rows();
        if let Some(i) = self
            .awaited
            .as_ref()
            .and_then(|w| rows.iter().position(|r| &r.node == w))
        {
            self.selected = rows[i].node.clone();
            self.awaited = None;
            self.sel_row = i;
            return;
        }
        if let Some(i) = rows.iter().position(|r| r.node == self.selected) {
            self.sel_row = i;
            return;
        }
        let g = self.selected.group();
        let last = self.sel_row.min(rows.len().saturating_sub(1));
        let i = (0..=last)
            .rev()
            .find(|&i| rows[i].node.group() == g)
            .unwrap_or(0);
        self.sel_row = i;
        if let Some(r) = rows.get(i) {
            self.selected = r.node.clone();
        }
    }

    fn select(&mut self, node: Node) {
        self.selected = node;
        self.awaited = None;
        self.untouched = false;
        self.settle();
    }

    pub(super) fn move_by(&mut self, delta: i64) {
        self.awaited = None;
        self.untouched = false;
        let rows = self.rows();
        self.sel_row = step(self.sel_row, rows.len(), delta);
        if let Some(r) = rows.get(self.sel_row) {
            self.selected = r.node.clone();
        }
    }

    /// Selects row `idx` of the tree if there is one; says whether it did.
    pub(super) fn select_row(&mut self, idx: usize) -> bool {
        let Some(r) = self.rows().into_iter().nth(idx) else {
            return false;
        };
        self.select(r.node);
        true
    }

    /// `]` / `[`: the next group's row, or the row of the group above (the selection's own
    /// when it is inside one), wrapping around.
    pub(super) fn next_group(&mut self, forward: bool) {
        let rows = self.rows();
        let groups: Vec<usize> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.node, Node::Group(_)))
            .map(|(i, _)| i)
            .collect();
        let at = self.sel_row;
        let target = if forward {
            groups.iter().find(|&&i| i > at).or(groups.first())
        } else {
            groups.iter().rev().find(|&&i| i < at).or(groups.last())
        };
        if let Some(r) = target.and_then(|&i| rows.get(i)) {
            self.select(r.node.clone());
        }
    }

    /// `right` / `l`: opens the selected node, or steps to its first child when it is open.
    pub(super) fn expand(&mut self) {
        self.untouched = false;
        let rows = self.rows();
        match rows.get(self.sel_row).and_then(|r| r.open) {
            Some(false) => {
                self.expanded.insert(self.selected.clone());
                self.settle();
            }
            Some(true) => self.move_by(1),
            None => {}
        }
    }

    /// `left` / `h`: closes the selected node when it is open, else goes to its parent.
    pub(super) fn collapse(&mut self) {
        self.untouched = false;
        let open = self.rows().get(self.sel_row).and_then(|r| r.open);
        if open == Some(true) {
            self.expanded.remove(&self.selected);
            self.settle();
            return;
        }
        if let Some(parent) = self.parent(&self.selected) {
            self.select(parent);
        }
    }

    /// `enter` on a node with children: opens or closes it.
    pub(super) fn toggle(&mut self) {
        self.untouched = false;
        if !self.selected_expandable() {
            return;
        }
        if !self.expanded.remove(&self.selected) {
            self.expanded.insert(self.selected.clone());
        }
        self.settle();
    }

    fn parent(&self, node: &Node) -> Option<Node> {
        match node {
            Node::Group(_) => None,
            Node::Column { dataset, .. } => Some(Node::Dataset(dataset.clone())),
            Node::Tool(name) => self
                .tools
                .iter()
                .find(|t| &t.name == name)
                .map(|t| Node::Server(t.server.clone())),
            other => Some(Node::Group(other.group())),
        }
    }

    /// Opens `node`'s group (and its dataset or server) so that it can be shown.
    fn reveal(&mut self, node: &Node) {
        self.expanded.insert(Node::Group(node.group()));
        if let Some(p) = self.parent(node).filter(|p| !matches!(p, Node::Group(_))) {
            self.expanded.insert(p);
        }
    }

    /// Shows the parked texts, on `key` if it is listed.
    pub fn select_blob(&mut self, key: &str) {
        let node = Node::Blob(key.to_owned());
        self.reveal(&node);
        self.select(node);
    }

    /// Shows the datasets, on `dataset` (when it is not listed yet, on the group's row until
    /// the listing that brings it).
    pub fn select_dataset(&mut self, dataset: &str) {
        let node = Node::Dataset(dataset.to_owned());
        self.reveal(&node);
        if !self.datasets.iter().any(|d| d.dataset == dataset) {
            self.select(Node::Group(Group::Datasets));
            self.awaited = Some(node);
            return;
        }
        self.select(node);
    }

    /// Shows the memories, on `key` now if it is listed, else once it is.
    pub fn select_memory(&mut self, key: &str) {
        let node = Node::Memory(key.to_owned());
        self.reveal(&node);
        if self.memories.iter().any(|m| m.key == key) {
            self.select(node);
        } else {
            self.awaited = Some(node);
            self.settle();
        }
    }

    /// Lists `memory` as the version just written, in place of an older one of its key.
    pub(super) fn put_memory(&mut self, memory: MemoryView) {
        match self.memories.iter_mut().find(|m| m.key == memory.key) {
            Some(m) => *m = memory,
            None => self.memories.push(memory),
        }
        self.settle();
    }

    /// Takes `dataset` off the list; says whether it was listed.
    pub(super) fn remove_dataset(&mut self, dataset: &str) -> bool {
        let Some(i) = self.datasets.iter().position(|d| d.dataset == dataset) else {
            return false;
        };
        self.datasets.remove(i);
        self.settle();
        true
    }

    /// The listing of request `ticket` arrived; an older one than the last applied is stale.
    /// An awaited dataset is selected once listed.
    pub fn set_datasets(&mut self, ticket: u64, datasets: Vec<DatasetView>) {
        if ticket < self.datasets_ticket {
            return;
        }
        self.datasets_ticket = ticket;
        self.datasets = datasets;
        if self.untouched
            && matches!(
                self.selected,
                Node::Group(Group::Datasets) | Node::Empty(Group::Datasets)
            )
            && let Some(first) = self.datasets.first()
        {
            self.selected = Node::Dataset(first.dataset.clone());
        }
        self.settle();
    }

    pub fn set_blobs(&mut self, blobs: Vec<BlobView>) {
        self.blobs = blobs;
        self.settle();
    }

    pub fn set_memories(&mut self, memories: Vec<MemoryView>, skipped_lines: u64) {
        self.memories = memories;
        self.memory_skipped_lines = skipped_lines;
        self.settle();
    }

    pub fn set_servers(&mut self, servers: Vec<String>) {
        self.servers = servers;
        self.settle();
    }

    /// A find the session answered: its ranking replaces the last one.
    pub fn found(&mut self, query: String, tools: Vec<crate::types::events::FoundTool>) {
        self.last_find = Some(LastFind { query, tools });
    }

    /// The tool list of request `ticket`, each tool under the server `owners` names (loom's own
    /// under [`LOOM_SERVER`]); says whether it was applied (an older one than the last is not).
    pub fn set_tools(
        &mut self,
        ticket: u64,
        tools: &[Value],
        owners: &std::collections::BTreeMap<String, String>,
        mut placement: std::collections::BTreeMap<String, crate::types::engine::ToolPlacement>,
        mode: String,
    ) -> bool {
        if ticket < self.tools_ticket {
            return false;
        }
        self.tools_ticket = ticket;
        self.listing_mode = mode;
        self.tools = tools
            .iter()
            .filter_map(|t| {
                let name = t["name"].as_str()?.to_owned();
                let server = owners
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| LOOM_SERVER.to_owned());
                let description = t["description"].as_str().unwrap_or_default().to_owned();
                Some(ToolEntry {
                    placement: placement.remove(&name),
                    name,
                    server,
                    description,
                })
            })
            .collect();
        self.settle();
        true
    }
}

impl App {
    pub(super) fn show_dataset(&mut self, dataset: String) {
        self.send(
            Purpose::DatasetDetail(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    /// Shows the selected item in Detail: a dataset's description is asked for (unless Detail
    /// already shows it), the others are here. Groups and servers leave Detail as it is.
    pub(super) fn open_catalog_item(&mut self) {
        match self.catalog.selected_node().clone() {
            Node::Dataset(d) | Node::Column { dataset: d, .. } => {
                if self.detail.dataset() != Some(d.as_str()) {
                    self.show_dataset(d);
                }
            }
            Node::Blob(_) => {
                if let Some(b) = self.catalog.selected_blob().cloned() {
                    self.set_detail(Detail::Blob(b));
                }
            }
            Node::Memory(_) => {
                if let Some(m) = self.catalog.selected_memory().cloned() {
                    self.set_detail(Detail::Memory(m));
                }
            }
            Node::Tool(name) => {
                if let Some(entry) = self.catalog.selected_tool().cloned() {
                    let tool = self
                        .tools
                        .iter()
                        .find(|t| t["name"].as_str() == Some(name.as_str()))
                        .cloned()
                        .unwrap_or_default();
                    self.set_detail(Detail::Tool {
                        entry: Box::new(entry),
                        tool: Box::new(tool),
                        mode: self.catalog.listing_mode.clone(),
                        found: self.catalog.last_find.clone().map(Box::new),
                    });
                }
            }
            Node::Group(_) | Node::Server(_) | Node::Empty(_) => {}
        }
    }

    /// `enter` in the catalog: a node with children opens or closes (a dataset is described in
    /// Detail too), a tool opens in the palette ready for its arguments, parked text in the
    /// pager (see `apply`), a memory in Detail.
    pub(super) fn activate_catalog_node(&mut self) {
        match self.catalog.selected_node().clone() {
            Node::Tool(name) => self.open_palette_on(&name),
            Node::Dataset(d) => {
                self.catalog.toggle();
                self.show_dataset(d);
            }
            Node::Column { dataset, .. } => self.show_dataset(dataset),
            _ => {
                self.catalog.toggle();
                self.open_catalog_item();
            }
        }
    }

    /// `left` / `right` in the catalog.
    pub(super) fn catalog_sideways(&mut self, right: bool) {
        if right {
            self.catalog.expand();
        } else {
            self.catalog.collapse();
        }
        self.open_catalog_item();
    }

    /// `i`: the selected dataset's or column's name, quoted as DuckDB needs, at the editor's
    /// cursor (the editor keeps its text and undo takes the insertion back).
    pub(super) fn insert_catalog_name(&mut self) {
        let name = match self.catalog.selected_node() {
            Node::Dataset(d) => d.clone(),
            Node::Column { column, .. } => column.clone(),
            _ => {
                self.set_status(
                    "i inserts the name of a dataset or a column",
                    StatusKind::Info,
                );
                return;
            }
        };
        let text = crate::tui::sql::quote_ident(&name);
        self.editor.paste(&text);
        let shown = crate::tui::ui::fit(&crate::terminal_text::line(&text), 60);
        self.set_status(
            format!("inserted {shown} into the editor (5 goes there)"),
            StatusKind::Success,
        );
    }

    /// A dataset left the session: it leaves the catalog at once, and whatever showed it
    /// (Detail, the describe view) says so instead of offering a table that is gone.
    pub(super) fn dataset_dropped(&mut self, dataset: String, reason: DropReason) {
        let listed = self.catalog.remove_dataset(&dataset);
        self.catalog.gone.insert(dataset.clone(), reason);
        // A call shown in Detail that made it says it is gone instead of offering `o`.
        self.rebuild_detail_lines();
        let shown = self.detail.dataset() == Some(dataset.as_str());
        if shown {
            self.set_detail(Detail::Empty);
        }
        let described = matches!(&self.overlay, Overlay::Describe(d) if d.dataset == dataset);
        if described {
            self.overlay = Overlay::None;
        }
        if listed || shown || described {
            let why = match reason {
                DropReason::Dropped => "dropped",
                DropReason::Evicted => "evicted to stay within memory_budget",
            };
            self.set_status(format!("{dataset} was {why}"), StatusKind::Info);
        }
        // A listing asked for before the drop may still hold it; this one cannot.
        self.send(Purpose::Datasets, Request::Datasets);
    }
}
