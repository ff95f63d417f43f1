//! loom's tools about tools: `loom_find_tools` (ranked search over every tool of every server),
//! `loom_call` (any tool by name, its arguments checked against its schema first, then exactly
//! a direct call) and `loom_context` (what to know for a task, within a token budget, with a
//! stable prefix that the primer shares). Also the bookkeeping every call does here: how often
//! each tool is called, and the promotion of a tool found and called while unlisted.

use super::listing::{Listed, Placed};
use super::tools::LoomTool;
use super::*;
use crate::intercept::tokens::estimate;
use crate::session::finder::{Finder, ToolDoc, Why};
use crate::types::events::ServerState;

/// Results of `loom_find_tools` unless `limit` says otherwise.
const FIND_LIMIT: usize = 5;
/// Tokens `loom_find_tools` may answer with: the tools with their schemas, then a tail of
/// the next best by name and one line (at most `MORE_LIMIT`), 2,500 together.
const FIND_BUDGET: usize = 2000;
const MORE_BUDGET: usize = 500;
const MORE_LIMIT: usize = 25;
/// Phrasings one find fuses (`queries`), beside `query`.
const MAX_PHRASINGS: usize = 8;
/// Tokens `loom_context` answers with unless told.
const CONTEXT_BUDGET: usize = 2000;

/// A description's first line read as prose, cut to its first sentence and to what a
/// listing can carry.
pub(super) fn one_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or_default();
    let prose = as_prose(first);
    cut_chars(first_sentence(&prose), 160)
}

/// A markdown line as prose: a leading bullet, number or quote marker (`- `, `* `, `1. `,
/// `> `) and bold markers (`**`) removed, so `- **Database**: a file` reads `Database: a
/// file`.
fn as_prose(line: &str) -> String {
    let mut rest = line.trim();
    loop {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let marker = ["- ", "* ", "+ ", "• ", "> "]
            .iter()
            .find(|m| rest.starts_with(**m))
            .map(|m| m.len())
            .or_else(|| {
                let after = rest.get(digits..)?;
                (digits > 0 && (after.starts_with(". ") || after.starts_with(") ")))
                    .then_some(digits + 2)
            });
        match marker.and_then(|n| rest.get(n..)) {
            Some(r) => rest = r.trim_start(),
            None => break,
        }
    }
    rest.replace("**", "").trim().to_owned()
}

/// Words after which a period ends no sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "eg", "ie", "vs", "cf", "approx", "incl", "esp", "viz", "al", "mr", "mrs", "ms",
    "dr", "st", "no", "fig", "ca", "resp",
];

/// `text` up to its first sentence end at 20 characters or later: a `.`, `!` or `?`
/// followed by whitespace or the end of the text, outside brackets and code spans left open
/// (`(.xlsx, .xlsm)`, `` `shop.duckdb` ``), not after an abbreviation (`e.g.`) or an
/// initial. A period inside a word (`v1.2`, `shop.duckdb`) is no end either. Without one,
/// the whole text.
fn first_sentence(text: &str) -> &str {
    let (mut depth, mut code) = (0usize, false);
    let mut chars = text.char_indices().enumerate().peekable();
    while let Some((n, (i, c))) = chars.next() {
        match c {
            '`' => code = !code,
            '(' | '[' | '{' if !code => depth += 1,
            ')' | ']' | '}' if !code => depth = depth.saturating_sub(1),
            '.' | '!' | '?' if !code && depth == 0 && n >= 20 => {
                let at_end = chars
                    .peek()
                    .is_none_or(|(_, (_, next))| next.is_whitespace());
                let word = text[..i]
                    .rsplit(|c: char| c.is_whitespace() || "([{\"'".contains(c))
                    .next()
                    .unwrap_or_default()
                    .to_lowercase();
                let abbreviation = c == '.'
                    && (ABBREVIATIONS.contains(&word.as_str())
                        || (word.chars().count() == 1 && word.chars().all(char::is_alphabetic)));
                if at_end && !abbreviation {
                    return &text[..i + c.len_utf8()];
                }
            }
            _ => {}
        }
    }
    text
}

/// What a server's instructions (or description) say it is for, in one line: the first line
/// of prose, past markdown headings (`## Server Configuration`), rules, fences and blank lines;
/// a text of headings only gives its first heading's words.
pub(super) fn about_line(text: &str) -> String {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let heading = |l: &str| l.starts_with('#');
    let markup = |l: &str| {
        heading(l)
            || l.starts_with("```")
            || l.starts_with("~~~")
            || l.chars()
                .all(|c| matches!(c, '-' | '*' | '_' | '=' | ' ' | '|'))
    };
    match lines().find(|l| !markup(l)) {
        Some(prose) => one_line(prose),
        None => lines()
            .find(|l| heading(l))
            .map(|h| one_line(h.trim_start_matches('#')))
            .unwrap_or_default(),
    }
}

/// `text` cut to at most `max` characters, ending in `…` when cut.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((i, _)) if text[i..].chars().nth(1).is_some() => format!("{}…", &text[..i]),
        _ => text.to_owned(),
    }
}

/// Checks `args` against a JSON Schema's top level: required members, types, enums, and
/// unknown members (when the schema closes them, or when one is a near miss of a missing
/// required member). The problems, each with a did-you-mean where one fits.
pub(super) fn schema_problems(schema: &Value, args: &Value) -> Vec<String> {
    let Some(args) = args.as_object() else {
        return vec![format!("`arguments` must be an object, got {args}")];
    };
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Closed: no member beyond `properties` (and no pattern that could admit one).
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false))
        && schema.get("patternProperties").is_none();
    let mut problems = Vec::new();
    for r in &required {
        if !args.contains_key(*r) {
            problems.push(format!("`{r}` is required"));
        }
    }
    for (k, v) in args {
        match props.get(k) {
            Some(p) => {
                if let Some(why) = type_problem(p, v) {
                    problems.push(format!("`{k}` {why}"));
                }
            }
            None => {
                // A near miss of a member not given: of any one when the schema is closed, of
                // a required one when it is open (where an extra member is allowed).
                let near = props
                    .keys()
                    .filter(|p| {
                        !args.contains_key(*p) && (closed || required.contains(&p.as_str()))
                    })
                    .map(|p| (strsim::levenshtein(k, p), p))
                    .filter(|(d, p)| *d <= 3 && *d < k.chars().count().min(p.chars().count()))
                    .min();
                match near {
                    Some((_, p)) => {
                        problems.push(format!("unknown argument `{k}`; did you mean `{p}`?"))
                    }
                    None if closed => problems.push(format!("unknown argument `{k}`")),
                    None => {}
                }
            }
        }
    }
    problems
}

/// Whether two JSON values are equal, numbers by value (`1` and `1.0` are the same number).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Whether `v` is an integer as JSON Schema counts it: a number with no fractional part
/// (`3`, `3.0`, `3e2`), however many digits it has.
fn is_integer(v: &Value) -> bool {
    let Value::Number(n) = v else { return false };
    if n.as_i64().is_some() || n.as_u64().is_some() {
        return true;
    }
    let text = n.to_string();
    let digits = text.strip_prefix('-').unwrap_or(&text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    n.as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Why `v` does not fit the property schema `p`, as far as its `type` and `enum` say.
fn type_problem(p: &Value, v: &Value) -> Option<String> {
    // OpenAPI's way of allowing null (zod-to-json-schema writes it).
    if v.is_null() && p.get("nullable") == Some(&Value::Bool(true)) {
        return None;
    }
    if let Some(options) = p.get("enum").and_then(Value::as_array)
        && !options.iter().any(|o| same_value(o, v))
    {
        return Some(format!(
            "must be one of {}, got {v}",
            Value::Array(options.clone())
        ));
    }
    let fits = |t: &str| match t {
        "string" => v.is_string(),
        "integer" => is_integer(v),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    };
    let types: Vec<&str> = match p.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    (!types.iter().any(|t| fits(t))).then(|| format!("must be {}, got {v}", types.join(" or ")))
}

impl ClientSession {
    /// Counts a call to `exposed` (of `server`, with its `original` name; `None` for loom's
    /// own) and, when it was not listed to this client and the config promotes, lists it from
    /// now on and tells every client. Decided for this one tool: a call never rebuilds the
    /// whole listing. A person's calls from the workbench promote nothing (trying a tool out
    /// is not the model finding it).
    pub(super) fn note_use(&self, exposed: &str, downstream: Option<(&str, &str)>) {
        let state = &self.session.listing;
        state.record_use(exposed);
        if !self.session.config.promote || self.caller == Caller::Human {
            return;
        }
        let hidden =
            super::listing::decide(&self.listing_inputs(), exposed, downstream) == Listed::Hidden;
        let finder = matches!(
            tools::spec(exposed).map(|s| s.tool),
            Some(LoomTool::FindTools | LoomTool::Call)
        );
        if hidden && !finder && state.promote(exposed) {
            tracing::info!("{exposed} was called while unlisted: listed from now on");
            self.session.announce_listing(exposed, "promoted");
        }
    }

    /// What `loom_call {tool, arguments}` calls: the tool's own `tools/call` params, or why it
    /// cannot (an unknown tool with the nearest names, or every argument problem).
    pub(super) async fn resolve_call(
        self: &Arc<Self>,
        args: &Map<String, Value>,
        params: &Map<String, Value>,
    ) -> Result<(Map<String, Value>, super::Via), String> {
        let tool = args.get("tool").and_then(Value::as_str).unwrap_or_default();
        // Missing or null, as a direct call without arguments.
        let arguments = match args.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(a) => a.clone(),
        };
        if tool == LoomTool::Call.name() || tool == LoomTool::CallEach.name() {
            return Err(format!("loom_call calls other tools; call {tool} itself"));
        }
        let fleet = self.ready_fleet().await;
        // Whatever a direct call reaches: one of loom's tools, or any name the fleet routes
        // (an alias, a tool of a server this connection's listing leaves out). Only that
        // tool's schema is read, whatever the number of tools.
        let schema = match tools::spec(tool) {
            Some(spec) => Some(tools::definition(spec)["inputSchema"].clone()),
            None => fleet.route_tool(tool).map(|route| {
                route
                    .server
                    .tool_field(&route.original, "inputSchema")
                    .unwrap_or(Value::Null)
            }),
        };
        let Some(schema) = schema else {
            let placed = self.placed_tools(&fleet);
            let mut near: Vec<(usize, &str)> = placed
                .iter()
                .map(|p| (strsim::levenshtein(tool, &p.exposed), p.exposed.as_str()))
                .filter(|(d, _)| *d <= 4)
                .collect();
            near.sort();
            let hint = match near.first() {
                Some((_, n)) => format!("; did you mean `{n}`?"),
                None => String::new(),
            };
            return Err(format!(
                "unknown tool `{tool}`{hint} loom_find_tools finds tools by what they do."
            ));
        };
        // The call's own params with the tool's name and arguments: everything else (`_meta`,
        // a retry's `requestState` and `inputResponses`) goes as a direct call would send it.
        let mut inner = params.clone();
        inner.insert("name".into(), Value::String(tool.to_owned()));
        let mut via = super::Via {
            tool: Some("loom_call"),
            ..Default::default()
        };
        let arguments = match args.get("bind") {
            None | Some(Value::Null) => arguments,
            Some(bind) => {
                let bound = self.resolve_bindings(bind).await?;
                let mut filled = arguments.clone();
                crate::store::bind::apply(&mut filled, &bound).map_err(|e| e.to_string())?;
                if let Some(why) = super::bind::schema_refusal(tool, &schema, &filled, &bound) {
                    return Err(why);
                }
                // The log and provenance keep the arguments as written, and the bindings.
                let mut logged = inner.clone();
                logged.insert("arguments".into(), arguments);
                logged.insert("bind".into(), bind.clone());
                via.logged = Some(logged);
                via.bindings = bound.into_iter().map(|b| b.view).collect();
                filled
            }
        };
        if let Some(why) = super::bind::schema_refusal(tool, &schema, &arguments, &[]) {
            return Err(why);
        }
        inner.insert("arguments".into(), arguments);
        Ok((inner, via))
    }

    /// Runs `loom_find_tools` or `loom_context`.
    pub(super) async fn run_session_tool(
        self: &Arc<Self>,
        tool: LoomTool,
        args: &Map<String, Value>,
    ) -> Box<RawValue> {
        let fleet = self.ready_fleet().await;
        let value = match tool {
            LoomTool::FindTools => self.find_tools(&fleet, args),
            LoomTool::Context => self.context(&fleet, args),
            _ => return tool_error(&format!("{} is not run here", tool.name())),
        };
        jsonrpc::to_raw(&value)
    }

    /// The finder over what this client can call (loom's finder and generic call aside),
    /// built again only when the tools or this client's view of them changed.
    fn finder(&self, fleet: &Arc<Fleet>) -> Arc<Finder> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (Arc::as_ptr(fleet) as usize, fleet.tools_generation()).hash(&mut h);
        lock(&self.listing).hash(&mut h);
        let reach = [LoomTool::FindTools.name(), LoomTool::Call.name()];
        self.session.listing.finder_keyed(h.finish(), || {
            self.placed_tools(fleet)
                .iter()
                .filter(|p| !(p.server == "loom" && reach.contains(&p.exposed.as_str())))
                .map(|p| {
                    let mut doc = ToolDoc::from_tool(&p.server, &p.exposed, &p.full);
                    doc.original.clone_from(&p.original);
                    doc
                })
                .collect()
        })
    }

    /// A found tool's input schema, annotations and whether it is listed, read from its
    /// server's list (or loom's own definitions) for this one tool.
    fn found_details(&self, fleet: &Fleet, doc: &ToolDoc) -> Option<(Value, Option<Value>, bool)> {
        let inputs = self.listing_inputs();
        if doc.server == "loom" {
            let spec = super::tools::spec(&doc.exposed)?;
            let def = super::tools::definition(spec);
            let listed = super::listing::decide(&inputs, &doc.exposed, None).is_listed();
            return Some((
                def["inputSchema"].clone(),
                def.get("annotations").cloned(),
                listed,
            ));
        }
        let server = fleet.server(&doc.server)?;
        let schema = server.tool_field(&doc.original, "inputSchema")?;
        let annotations = server.tool_field(&doc.original, "annotations");
        let listed =
            super::listing::decide(&inputs, &doc.exposed, Some((&doc.server, &doc.original)))
                .is_listed();
        Some((schema, annotations, listed))
    }

    fn find_tools(&self, fleet: &Arc<Fleet>, args: &Map<String, Value>) -> Value {
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut queries: Vec<&str> = vec![query];
        match args.get("queries") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
                queries.extend(list.iter().filter_map(Value::as_str).take(MAX_PHRASINGS));
            }
            Some(_) => {
                return tool_error_value(
                    "`queries` is a list of phrasings of the task, each a string",
                );
            }
        }
        queries.retain(|q| !q.trim().is_empty());
        let server = args.get("server").and_then(Value::as_str);
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(FIND_LIMIT, |l| l.clamp(1, 50) as usize);
        let finder = self.finder(fleet);
        if let Some(s) = server
            && !finder.docs().iter().any(|d| d.server == s)
        {
            let mut known: Vec<&str> = finder.docs().iter().map(|d| d.server.as_str()).collect();
            known.dedup();
            return tool_error_value(&format!(
                "unknown server `{s}`; the servers are: {}",
                known.join(", ")
            ));
        }
        let uses = self.session.listing.uses_now();
        let (hits, whys) =
            finder.search_all_explained(&queries, limit + MORE_LIMIT, server, &|t| uses.of(t));
        let whys: std::collections::HashMap<usize, Why> = hits
            .iter()
            .zip(whys)
            .filter_map(|(h, w)| Some((h.index, w?)))
            .collect();
        // An empty or vague query (only words too common to rank by, no tool's name) gets the
        // overview.
        if hits.is_empty() && !queries.iter().any(|q| Finder::has_terms(q)) {
            return self.overview(fleet, &self.placed_tools(fleet), server);
        }
        let mut tools = Vec::new();
        let mut more = Vec::new();
        let mut truncated = false;
        let (mut used, mut used_more) = (0, 0);
        // Each tool named, and whether with its schema: what the workbench is told.
        let mut shown: Vec<(usize, bool)> = Vec::new();
        for h in hits {
            let doc = &finder.docs()[h.index];
            if !truncated && tools.len() < limit {
                let Some((schema, annotations, listed)) = self.found_details(fleet, doc) else {
                    continue;
                };
                let mut hit = json!({
                    "name": doc.exposed,
                    "server": doc.server,
                    "description": one_line(&doc.description),
                    "inputSchema": schema,
                    "listed": listed,
                });
                if let Some(a) = annotations {
                    hit["annotations"] = a;
                }
                let cost = estimate(&hit.to_string());
                if used + cost <= FIND_BUDGET || tools.is_empty() {
                    used += cost;
                    tools.push(hit);
                    shown.push((h.index, true));
                    continue;
                }
                // Past the budget: this one and the rest go to the tail.
                truncated = true;
            }
            // The tail: a name and a line each, for the model to choose from.
            let line = format!(
                "{}: {}",
                doc.exposed,
                cut_chars(&one_line(&doc.description), 90)
            );
            let cost = estimate(&line) + 2;
            if used_more + cost > MORE_BUDGET {
                break;
            }
            used_more += cost;
            more.push(Value::String(line));
            shown.push((h.index, false));
        }
        if tools.is_empty() {
            let mut v = self.overview(fleet, &self.placed_tools(fleet), server);
            v["note"] = json!(format!(
                "no tool matches \"{}\"; the servers are below",
                queries.join(" | ")
            ));
            return v;
        }
        self.tell_found(&finder, &queries, server, &shown, whys);
        let mut body = json!({ "tools": tools, "truncated": truncated,
            "next": "call a tool by its name, or with loom_call {tool, arguments}" });
        if !more.is_empty() {
            body["more"] = Value::Array(more);
            body["next"] = json!(
                "call a tool by its name, or with loom_call {tool, arguments}; \
                `more` lists the next best by name: loom_find_tools {query: \"<name> <name>\"} gives their schemas"
            );
        }
        text_and_structured(body)
    }

    /// Tells the workbench what a find named and why each tool ranked where it did.
    fn tell_found(
        &self,
        finder: &Finder,
        queries: &[&str],
        server: Option<&str>,
        shown: &[(usize, bool)],
        mut whys: std::collections::HashMap<usize, Why>,
    ) {
        let named = finder.named(queries, server);
        let tools = shown
            .iter()
            .enumerate()
            .map(|(i, &(doc, schema))| crate::types::events::FoundTool {
                name: finder.docs()[doc].exposed.clone(),
                rank: i as u32 + 1,
                schema,
                named_exactly: named.contains(&doc),
                why: whys.remove(&doc).unwrap_or_default(),
            })
            .collect();
        self.session
            .bus
            .publish(crate::types::events::Event::ToolsFound {
                query: queries.join(" | "),
                tools,
            });
    }

    /// The servers with their tool counts and what they are for, and the most used tools:
    /// what an empty or unmatched query gets.
    fn overview(&self, fleet: &Fleet, placed: &[Placed], only: Option<&str>) -> Value {
        let servers: Vec<Value> = self
            .server_lines(fleet, placed)
            .into_iter()
            .filter(|(name, _, _)| only.is_none_or(|o| o == name))
            .map(|(name, tools, about)| json!({ "server": name, "tools": tools, "about": about }))
            .collect();
        let most_used: Vec<Value> = self
            .session
            .listing
            .most_used(10)
            .into_iter()
            .map(|(t, n)| json!({ "name": t, "calls": n }))
            .collect();
        text_and_structured(json!({ "servers": servers, "most_used": most_used,
            "next": "describe the task in `query` to find its tools" }))
    }

    /// Each server with its number of tools and a line on what it is for: its own
    /// instructions' first sentence, else its first tools' names.
    pub(super) fn server_lines(
        &self,
        fleet: &Fleet,
        placed: &[Placed],
    ) -> Vec<(String, usize, String)> {
        let mut out = Vec::new();
        for s in fleet.servers() {
            let names: Vec<&str> = placed
                .iter()
                .filter(|p| p.server == s.name())
                .map(|p| p.exposed.as_str())
                .collect();
            if names.is_empty() {
                continue;
            }
            let about = s
                .connection()
                .ok()
                .and_then(|c| server_about(&c))
                .unwrap_or_else(|| {
                    let first: Vec<&str> = names.iter().take(4).copied().collect();
                    format!("tools such as {}", first.join(", "))
                });
            out.push((s.name().to_owned(), names.len(), about));
        }
        out
    }

    /// `loom_context`: the stable part first (how loom works here, the servers, pinned
    /// memories), with its hash, then what matches the query: memories, datasets, parked
    /// texts and tools, all within the budget.
    fn context(&self, fleet: &Arc<Fleet>, args: &Map<String, Value>) -> Value {
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let budget = match args.get("token_budget") {
            None | Some(Value::Null) => CONTEXT_BUDGET,
            Some(b) => match b.as_i64() {
                Some(b) if b > 0 => (b as usize).min(32_000),
                _ => {
                    return tool_error_value(&format!(
                        "token_budget must be a positive whole number of tokens, got {b}"
                    ));
                }
            },
        };
        // The stable part is the same whatever the budget (so its hash is too); a budget too
        // small for it gets it cut, and says so.
        let prefix = self.stable_prefix(&[], CONTEXT_BUDGET / 2);
        let mut sections: Vec<(String, Vec<String>)> = Vec::new();
        if !query.trim().is_empty() {
            let memories: Vec<String> = self
                .session
                .memories
                .search(query, &[], 5)
                .unwrap_or_default()
                .into_iter()
                .filter(|(m, _)| !m.pinned)
                .map(|(m, _)| {
                    format!(
                        "- {}: {}",
                        m.key,
                        crate::session::calls::cap_text(&m.content, 300)
                    )
                })
                .collect();
            sections.push(("Memories".into(), memories));
            let words: Vec<String> = query
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.len() > 2)
                .map(str::to_owned)
                .collect();
            let matches = |text: &str| {
                let t = text.to_lowercase();
                words.iter().any(|w| t.contains(w.as_str()))
            };
            if let Some(store) = self.session.store.try_get() {
                let datasets = store
                    .datasets()
                    .into_iter()
                    .filter(|d| {
                        let cols: Vec<&str> = d.columns.iter().map(|c| c.0.as_str()).collect();
                        matches(&format!("{} {}", d.dataset_ref, cols.join(" ")))
                    })
                    .map(|d| {
                        let cols: Vec<&str> =
                            d.columns.iter().take(12).map(|c| c.0.as_str()).collect();
                        format!("- {} ({} rows): {}", d.dataset_ref, d.rows, cols.join(", "))
                    })
                    .collect();
                sections.push(("Datasets (loom_query)".into(), datasets));
                let parked = store
                    .blobs
                    .list()
                    .iter()
                    .filter(|b| matches(&b.summary))
                    .map(|b| format!("- {}: {} ({} lines)", b.key, b.summary, b.total_lines))
                    .collect();
                sections.push(("Parked texts (loom_fetch)".into(), parked));
            }
            let finder = self.finder(fleet);
            let uses = self.session.listing.uses_now();
            let tools = finder
                .search(query, 5, None, &|t| uses.of(t))
                .into_iter()
                .map(|h| {
                    let d = &finder.docs()[h.index];
                    format!("- {}: {}", d.exposed, one_line(&d.description))
                })
                .collect();
            sections.push(("Tools".into(), tools));
        }
        let mut truncated = estimate(&prefix) > budget;
        let mut text = if truncated {
            cut_to_tokens(&prefix, budget)
        } else {
            prefix.clone()
        };
        let mut shown = Vec::new();
        for (title, lines) in sections {
            if lines.is_empty() {
                continue;
            }
            let mut part = format!("\n## {title}\n");
            let mut kept = Vec::new();
            for l in lines {
                if estimate(&text) + estimate(&part) + estimate(&l) > budget {
                    truncated = true;
                    break;
                }
                part.push_str(&l);
                part.push('\n');
                kept.push(l);
            }
            if !kept.is_empty() {
                text.push_str(&part);
                shown.push(json!({ "title": title, "lines": kept }));
            }
        }
        let hash = prefix_hash(&prefix);
        json!({
            "content": [{ "type": "text", "text": text }],
            "structuredContent": { "prefix": prefix, "prefix_hash": hash, "sections": shown, "truncated": truncated },
        })
    }

    /// The part of the context that does not depend on a query, cut to `budget` tokens, with
    /// `datasets` (the primer's) after the pinned memories. Before the servers have started,
    /// they are named from the config.
    pub(super) fn stable_prefix(&self, datasets: &[(String, u64)], budget: usize) -> String {
        let config = &self.session.config;
        let (servers, hidden) = match self.fleet() {
            Some(fleet) => {
                let placed = self.placed_tools(fleet);
                // The finder and loom_call are what a hidden tool is reached through; their
                // own absence (full mode) hides nothing.
                let reach = [
                    super::tools::LoomTool::FindTools.name(),
                    super::tools::LoomTool::Call.name(),
                ];
                let hidden = placed.iter().any(|p| {
                    p.listed == Listed::Hidden
                        && !(p.server == "loom" && reach.contains(&p.exposed.as_str()))
                });
                (self.server_entries(fleet, &placed), hidden)
            }
            None => {
                let mode = *lock(&self.listing_mode);
                let hidden = mode.unwrap_or(config.listing) != crate::config::ListingMode::Full
                    || (mode.is_none()
                        && config
                            .servers
                            .iter()
                            .any(|s| s.listing == Some(crate::config::ListingMode::Search)));
                let lines = config
                    .servers
                    .iter()
                    .map(|s| format!("- {}\n", s.name))
                    .collect();
                (lines, hidden)
            }
        };
        let mut s = String::from("# Loom\n");
        if hidden {
            s.push_str("Not every tool is listed. To do something no listed tool does, call loom_find_tools with the task in words (other phrasings in `queries`), then call the tool it names directly or with loom_call {tool, arguments}; its `more` names the next best, whose schemas a query of their names gives. ");
        }
        s.push_str("Large results become datasets: ask loom_query (SQL) instead of calling again; parked text is read with loom_fetch. loom_context gives what to know for a task.\n");
        s.push_str("Data loom holds goes into a call without passing through you: loom_call {tool, arguments, bind: {\"/body\": {\"blob\": \"blob/…\", \"pattern\": \"ERROR\"}}} (or {\"sql\": \"SELECT …\", \"as\": \"rows|csv|column|value\"}, {\"memory\": \"key\"}). One call per row: loom_call_each {tool, sql: \"SELECT id AS order_id FROM orders_1 WHERE status = 'late'\"} answers with one dataset of every result.\n");
        let servers: Vec<String> = servers;
        if !servers.is_empty() {
            s.push_str("Servers:\n");
            for line in &servers {
                s.push_str(line);
            }
            if servers.iter().any(|l| l.ends_with(STARTING)) {
                s.push_str("A server still starting is named only: loom://primer and loom_context give its guidance once it is up.\n");
            }
        }
        // The servers' own guidance has a budget of its own, beside `budget`, so that a
        // dozen servers' texts never push out the pinned memories.
        let used = estimate(&s);
        if let Some(fleet) = self.fleet() {
            s.push_str(&server_guidance(
                &self.guidance_texts(fleet),
                GUIDANCE_BUDGET,
            ));
        }
        let pinned = self.session.memories.pinned();
        let rest = budget.saturating_sub(used);
        s.push_str(&crate::store::memories::primer(&pinned, datasets, rest));
        s
    }

    /// The servers this client sees, in config order (a connection's `?servers=` narrows them).
    fn visible_servers<'f>(
        &self,
        fleet: &'f Fleet,
    ) -> Vec<&'f Arc<crate::downstream::ServerHandle>> {
        let only = lock(&self.listing).clone();
        fleet
            .servers()
            .iter()
            .filter(|s| {
                only.as_ref()
                    .is_none_or(|o| o.iter().any(|n| n == s.name()))
            })
            .collect()
    }

    /// The servers this client sees, in config order, each as a line of the primer: its tool
    /// count and what it is for once its tools are named; before that, what it is for when
    /// it is up, or that it is starting. A server with nothing to offer (failed, delisted, no
    /// tools) is left out.
    fn server_entries(&self, fleet: &Fleet, placed: &[Placed]) -> Vec<String> {
        let named = self.server_lines(fleet, placed);
        self.visible_servers(fleet)
            .into_iter()
            .filter_map(|s| {
                if let Some((name, tools, about)) = named.iter().find(|l| l.0 == s.name()) {
                    return Some(format!("- {name} ({tools} tools): {about}\n"));
                }
                match s.status().state {
                    ServerState::Starting | ServerState::Restarting { .. } => {
                        Some(format!("- {}{STARTING}", s.name()))
                    }
                    ServerState::Up => {
                        let about = server_about(&*s.connection().ok()?)?;
                        Some(format!("- {}: {about}\n", s.name()))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Each server's own `instructions` this client sees, in config order, made plain text
    /// (see [`plain_guidance`]); one that says no more than its line in the server list is
    /// left out.
    fn guidance_texts(&self, fleet: &Fleet) -> Vec<(String, String)> {
        self.visible_servers(fleet)
            .into_iter()
            .filter_map(|s| {
                let text = plain_guidance(&s.connection().ok()?.instructions()?);
                let said = about_line(&text);
                (!text.is_empty() && text != said).then(|| (s.name().to_owned(), text))
            })
            .collect()
    }
}

/// Tokens the servers' own guidance may take in the primer and the stable prefix, all of them
/// together: about 2,400 characters, a few sentences each for a dozen servers.
const GUIDANCE_BUDGET: usize = 600;

/// How a server still starting ends its line in the server list.
const STARTING: &str = " (starting)\n";

/// What a server says it is for, from its instructions or else its description: one line of
/// plain text, or nothing.
fn server_about(conn: &crate::downstream::connection::Connection) -> Option<String> {
    let said = |text: Option<String>| {
        text.map(|t| about_line(&plain_guidance(&t)))
            .filter(|l| !l.is_empty())
    };
    said(conn.instructions()).or_else(|| said(conn.description()))
}

/// A server's instructions as the primer carries them: control characters (ANSI escapes'
/// `ESC`, bidirectional overrides) removed, since the text reaches a model and may be shown
/// to a person outside ratatui; tabs as spaces; blank lines dropped and markdown headings
/// set below the server's own (`### `), so each server's text stays under its name.
fn plain_guidance(text: &str) -> String {
    let stripped = crate::terminal_text::strip(&without_escapes(text)).replace('\t', " ");
    let mut out = String::with_capacity(stripped.len());
    for line in stripped.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        match line.trim_start().strip_prefix('#') {
            Some(rest) => {
                out.push_str("### ");
                out.push_str(rest.trim_start_matches('#').trim());
            }
            None => out.push_str(line),
        }
    }
    out
}

/// `text` without its terminal escape sequences, whole: a CSI (`ESC [ … m`, colours) up to
/// its final byte, an OSC (`ESC ] … BEL` or `ESC \\`, titles, links) up to its end, and any
/// other `ESC` with the character after it. Removing only the `ESC` would leave `[32m` in
/// the text.
fn without_escapes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The tokens each text may take when `texts` share `budget` fairly: every text gets an even
/// share, and what a shorter text leaves goes to the longer ones (max-min fairness), so one
/// long text never crowds out the others and a short one is never cut.
fn fair_shares(costs: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by_key(|&i| costs[i]);
    let mut shares = vec![0; costs.len()];
    let mut left = budget;
    for (done, &i) in order.iter().enumerate() {
        let even = left / (costs.len() - done);
        shares[i] = costs[i].min(even);
        left -= shares[i];
    }
    shares
}

/// The servers' guidance texts, each under its name in the order given, sharing `budget`
/// tokens fairly ([`fair_shares`]); a text over its share is cut at a sentence or word
/// within it, with `…`; a share too small for any words leaves its server out.
fn server_guidance(texts: &[(String, String)], budget: usize) -> String {
    if texts.is_empty() {
        return String::new();
    }
    let title = "Server guidance (from each server):\n";
    let heads: Vec<String> = texts.iter().map(|(n, _)| format!("## {n}\n")).collect();
    let costs: Vec<usize> = texts
        .iter()
        .zip(&heads)
        .map(|((_, t), h)| estimate(h) + estimate(t) + 1)
        .collect();
    let shares = fair_shares(&costs, budget.saturating_sub(estimate(title)));
    let mut out = String::from(title);
    for (((_, text), head), share) in texts.iter().zip(&heads).zip(shares) {
        let room = share.saturating_sub(estimate(head) + 1);
        // Nothing to say, or a share too small to say anything whole: the server is left out,
        // not cut to a word.
        if text.trim().is_empty() || (room < 8 && room < estimate(text)) {
            continue;
        }
        out.push_str(head);
        out.push_str(&cut_to_tokens(text, room));
        out.push('\n');
    }
    if out.len() == title.len() {
        return String::new();
    }
    out
}

/// `text` cut to about `tokens` tokens: whole when it fits, else at the last sentence end (or
/// space) before the limit, on a character boundary, with `…`.
fn cut_to_tokens(text: &str, tokens: usize) -> String {
    if estimate(text) <= tokens {
        return text.to_owned();
    }
    // Find the longest prefix (by characters) within the budget, by halving.
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let (mut lo, mut hi) = (0usize, bounds.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if estimate(&text[..bounds[mid]]) < tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let fit = &text[..bounds[lo]];
    let end = fit
        .rfind(". ")
        .map(|i| i + 1)
        .filter(|&i| i * 2 >= fit.len())
        .or_else(|| fit.rfind(char::is_whitespace))
        .unwrap_or(fit.len());
    format!("{}…", fit[..end].trim_end())
}

/// A short, stable name for a text: the first 16 hex digits of its SHA-256.
pub(super) fn prefix_hash(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A tool result that is an error the model can act on.
fn tool_error_value(message: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

fn text_and_structured(v: Value) -> Value {
    json!({ "content": [{ "type": "text", "text": v.to_string() }], "structuredContent": v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_against_the_schema_with_near_misses() {
        let schema = json!({ "type": "object", "properties": {
            "path": { "type": "string" }, "depth": { "type": "integer" },
            "mode": { "enum": ["a", "b"] } }, "required": ["path"] });
        assert!(schema_problems(&schema, &json!({ "path": "x", "depth": 2 })).is_empty());
        let p = schema_problems(&schema, &json!({ "pth": "x", "depth": "2", "mode": "c" }));
        assert!(p.contains(&"`path` is required".to_owned()), "{p:?}");
        assert!(
            p.iter()
                .any(|m| m == "unknown argument `pth`; did you mean `path`?"),
            "{p:?}"
        );
        assert!(
            p.iter().any(|m| m.starts_with("`depth` must be integer")),
            "{p:?}"
        );
        assert!(
            p.iter().any(|m| m.starts_with("`mode` must be one of")),
            "{p:?}"
        );
        // Extra members are fine unless the schema closes them.
        assert!(schema_problems(&schema, &json!({ "path": "x", "zzzzzz": 1 })).is_empty());
        let mut closed = schema.clone();
        closed["additionalProperties"] = json!(false);
        assert_eq!(
            schema_problems(&closed, &json!({ "path": "x", "zzzzzz": 1 })),
            vec!["unknown argument `zzzzzz`".to_owned()]
        );
        assert_eq!(schema_problems(&schema, &json!([1])).len(), 1);
    }

    #[test]
    fn valid_arguments_a_server_accepts_are_not_refused() {
        let schema = json!({ "type": "object", "properties": {
            "channel": { "type": "string" }, "text": { "type": "string" },
            "depth": { "type": "integer" }, "level": { "enum": [1, 2] },
            "note": { "type": "string", "nullable": true } },
            "required": ["channel", "text"] });
        // An extra member of an open schema, close to a property already given.
        let ok = json!({ "channel": "c", "text": "hi", "ts": "123" });
        assert!(schema_problems(&schema, &ok).is_empty());
        // Integers as JSON Schema counts them, wider than 64 bits too; enums by value.
        for depth in ["1.0", "1e3", "123456789012345678901234567890"] {
            let args: Value = serde_json::from_str(&format!(
                r#"{{"channel":"c","text":"t","depth":{depth},"level":1.0}}"#
            ))
            .unwrap();
            assert!(schema_problems(&schema, &args).is_empty(), "{depth}");
        }
        let p = schema_problems(
            &schema,
            &json!({ "channel": "c", "text": "t", "depth": 1.5 }),
        );
        assert!(
            p.iter().any(|m| m.starts_with("`depth` must be integer")),
            "{p:?}"
        );
        // OpenAPI's nullable.
        let args = json!({ "channel": "c", "text": "t", "note": null });
        assert!(schema_problems(&schema, &args).is_empty());
        // A member a pattern may admit is not unknown, even with additionalProperties false.
        let patterned = json!({ "type": "object", "properties": { "a": {} },
            "patternProperties": { "^x-": {} }, "additionalProperties": false });
        assert!(schema_problems(&patterned, &json!({ "x-b": 1 })).is_empty());
    }

    #[test]
    fn guidance_is_cut_within_its_budget_on_a_boundary() {
        let text = "Use search first. Then read the file you found. ".repeat(40);
        let cut = cut_to_tokens(&text, 30);
        assert!(estimate(&cut) <= 31, "{cut}");
        assert!(cut.ends_with(".…"), "{cut}");
        assert_eq!(cut_to_tokens("short", 30), "short");
        let cjk = "日本語のテキスト".repeat(50);
        let cut = cut_to_tokens(&cjk, 10);
        assert!(cut.ends_with('…') && estimate(&cut) <= 11, "{cut}");
    }

    proptest::proptest! {
        #[test]
        fn cutting_any_text_never_panics_and_stays_a_prefix(text in "\\PC{0,200}", tokens in 0usize..60) {
            let cut = cut_to_tokens(&text, tokens);
            let body = cut.strip_suffix('…').unwrap_or(&cut);
            proptest::prop_assert!(text.starts_with(body.trim_end()));
        }
    }

    #[test]
    fn shares_are_fair_a_short_text_whole_and_the_rest_to_the_long() {
        assert_eq!(fair_shares(&[10, 500, 500], 300), vec![10, 145, 145]);
        assert_eq!(fair_shares(&[10, 20], 300), vec![10, 20]);
        assert_eq!(fair_shares(&[400, 50, 400], 300), vec![125, 50, 125]);
        assert_eq!(fair_shares(&[], 300), Vec::<usize>::new());
    }

    #[test]
    fn guidance_is_plain_text_under_each_name_in_the_order_given() {
        let plain = plain_guidance(
            "## Setup\n\n\u{1b}[1;32mGreen\u{1b}[0m\ttext\u{202e}\n\u{1b}]0;title\u{7}end\r\n",
        );
        assert_eq!(plain, "### Setup\nGreen text\nend");
        let texts = vec![
            ("b".to_owned(), "Short. Whole.".to_owned()),
            ("a".to_owned(), "Long sentence here. ".repeat(200)),
        ];
        let out = server_guidance(&texts, 200);
        let (Some(b), Some(a)) = (out.find("## b\n"), out.find("## a\n")) else {
            panic!("{out}")
        };
        assert!(b < a, "{out}");
        assert!(out.contains("## b\nShort. Whole.\n"), "{out}");
        assert!(out.trim_end().ends_with(".…"), "{out}");
        assert!(estimate(&out) <= 210, "{} tokens: {out}", estimate(&out));
        assert_eq!(server_guidance(&[], 200), "");
    }

    proptest::proptest! {
        #[test]
        fn any_guidance_stays_within_its_budget_without_a_panic(
            texts in proptest::collection::vec(("[a-z]{1,8}", "\\PC{0,300}|(\u{1b}|\\[|m|;|\n|é| |\\.){0,80}"), 0..6),
            budget in 0usize..400,
        ) {
            let texts: Vec<(String, String)> =
                texts.into_iter().map(|(n, t)| (n, plain_guidance(&t))).collect();
            let out = server_guidance(&texts, budget);
            proptest::prop_assert!(!out.chars().any(|c| c.is_control() && c != '\n'));
            // Each server's cut is within its share, give or take the cut's own marker.
            proptest::prop_assert!(estimate(&out) <= budget + texts.len() * 2 + 1, "{}", out);
        }
    }

    #[test]
    fn the_about_line_skips_markdown_headings_and_markup() {
        assert_eq!(
            about_line("## Server Configuration\n\nRead-only access to DuckDB. Use its dialect.\n"),
            "Read-only access to DuckDB."
        );
        assert_eq!(
            about_line("# Everything Server – Server Instructions\n---\n```\nx\n```"),
            "x"
        );
        assert_eq!(about_line("\n### Only a heading\n\n"), "Only a heading");
        assert_eq!(about_line("Plain words"), "Plain words");
        assert_eq!(about_line(" \n\n"), "");
    }

    proptest::proptest! {
        #[test]
        fn any_text_has_an_about_line_without_a_panic(text in "(#|-|`|\n| |é|a|\\.){0,80}") {
            let line = about_line(&text);
            proptest::prop_assert!(!line.contains('\n'));
            proptest::prop_assert!(line.chars().count() <= 160);
        }
    }

    #[test]
    fn a_sentence_ends_at_a_period_and_a_space_outside_brackets_and_abbreviations() {
        assert_eq!(
            one_line("Work with Excel workbooks (.xlsx, .xlsm). Workbooks live in ~/data."),
            "Work with Excel workbooks (.xlsx, .xlsm)."
        );
        assert_eq!(
            one_line(
                "- **Database**: Local DuckDB file (`/home/me/shop.duckdb`), read-only. Use DuckDB SQL."
            ),
            "Database: Local DuckDB file (`/home/me/shop.duckdb`), read-only."
        );
        assert_eq!(
            one_line("Runs queries, e.g. counts and sums, on v1.2 servers. Then more."),
            "Runs queries, e.g. counts and sums, on v1.2 servers."
        );
        assert_eq!(
            one_line("Reads config.toml and settings.json files! Writes none."),
            "Reads config.toml and settings.json files!"
        );
        assert_eq!(
            one_line("1. **Fetch** a page as markdown [see docs.example.com. here] and more"),
            "Fetch a page as markdown [see docs.example.com. here] and more"
        );
        assert_eq!(
            one_line("Written by J. Smith for teams. Second."),
            "Written by J. Smith for teams."
        );
        // Short lead-ins are not sentences of their own.
        assert_eq!(
            one_line("Note. This tool lists files. More."),
            "Note. This tool lists files."
        );
    }

    proptest::proptest! {
        #[test]
        fn a_one_line_summary_is_drawn_from_its_text_without_a_panic(
            text in "\\PC{0,200}|(\\.|\\(|\\)|`|\\*|-|1| |\n|é|a|e\\.g\\.){0,80}",
        ) {
            let line = one_line(&text);
            proptest::prop_assert!(!line.contains('\n'));
            proptest::prop_assert!(line.chars().count() <= 160);
            // Every character comes from the text, in its order (markers only removed).
            let body = line.strip_suffix('…').unwrap_or(&line);
            let mut source = text.chars();
            proptest::prop_assert!(body.chars().all(|c| source.any(|s| s == c)), "{:?} from {:?}", line, text);
        }
    }

    #[test]
    fn one_line_is_the_first_sentence() {
        assert_eq!(
            one_line("Read the complete contents of a file. Handles encodings.\nMore"),
            "Read the complete contents of a file."
        );
        assert_eq!(one_line("  short  "), "short");
    }
}
