//! Ranking the session's tools against a request in words, for `loom_find_tools`: an inverted
//! index over each tool's name, title, description, parameters and server, scored with
//! BM25F (each field weighted and length-normalised on its own, then saturated once per term).
//! A query word also reaches its stem-mates, a small table of synonyms and longer or shorter
//! words that share its prefix, each at a discount. Beside the words, each tool has a vector of
//! meaning (`vectors`), and a tool close in meaning to the request rises, or joins the hits
//! without sharing a word; this session's use of a tool lifts it a little, never past a clearly
//! better match. Pure and I/O-free: it owns no state beyond the index and never reads the
//! session, the network or the clock.

mod glossary;
#[cfg(test)]
mod outside_tests;
mod synonyms;
#[cfg(test)]
mod tests;
mod text;
mod vectors;

use serde_json::Value;
use std::cmp::Ordering;
use std::sync::Arc;

/// One tool as the finder sees it, built from a `tools/list` item.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ToolDoc {
    pub server: String,
    /// The name loom exposes upward (`<server>_<tool>`).
    pub exposed: String,
    /// The name the downstream server gave it.
    pub original: String,
    pub title: Option<String>,
    pub description: String,
    /// Input parameter names and descriptions, nested properties one level down included.
    pub params: Vec<(String, String)>,
    /// The names of the parameters the schema requires (top level).
    pub required: Vec<String>,
}

/// Most parameters read from one schema: enough for any real tool, bounded for a hostile one.
const MAX_PARAMS: usize = 64;

impl ToolDoc {
    /// Reads a `tools/list` item. Missing or mistyped members leave their field empty, so any
    /// JSON makes a document.
    pub fn from_tool(server: &str, exposed: &str, tool: &Value) -> ToolDoc {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let title = tool
            .get("title")
            .or_else(|| tool.get("annotations").and_then(|a| a.get("title")))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut params = Vec::new();
        if let Some(props) = tool.get("inputSchema").and_then(properties) {
            for (name, schema) in props {
                params.push((name.clone(), param_text(schema)));
                let nested =
                    properties(schema).or_else(|| schema.get("items").and_then(properties));
                for (child, child_schema) in nested.into_iter().flatten() {
                    params.push((child.clone(), param_text(child_schema)));
                }
            }
        }
        params.truncate(MAX_PARAMS);
        let required = tool
            .get("inputSchema")
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .take(MAX_PARAMS)
            .map(str::to_owned)
            .collect();
        ToolDoc {
            server: server.to_owned(),
            exposed: exposed.to_owned(),
            original: text(&tool["name"]),
            title,
            description: text(&tool["description"]),
            params,
            required,
        }
    }
}

fn properties(schema: &Value) -> Option<&serde_json::Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

/// A parameter's description followed by the values its schema allows (`"enum": ["light",
/// "dark"]`, also inside `anyOf`/`oneOf` and array items): they name what the tool can do.
fn param_text(schema: &Value) -> String {
    let mut out = schema["description"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut allowed = |s: &Value| {
        for v in s
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(v) = v.as_str() {
                out.push(' ');
                out.push_str(v);
            }
        }
    };
    allowed(schema);
    allowed(&schema["items"]);
    for alternatives in [&schema["anyOf"], &schema["oneOf"]] {
        alternatives
            .as_array()
            .into_iter()
            .flatten()
            .for_each(&mut allowed);
    }
    out
}

/// One ranked tool: its position in the documents the finder was built from, and its score
/// (finite, higher is better; only comparable within one search).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub index: usize,
    pub score: f32,
}

/// A document's fields, in the order of `Tuning::weight` and `Tuning::b`.
const FIELDS: usize = 6;

/// The knobs of the ranking, kept together so that a test can measure an alternative.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tuning {
    /// Per field (name, title, description, parameter names, parameter descriptions, server):
    /// the BM25F weight, and how much a longer field dilutes a match (`b`).
    pub weight: [f32; FIELDS],
    pub b: [f32; FIELDS],
    /// BM25 term-frequency saturation.
    pub k1: f32,
    /// Discounts for a query word's relatives, relative to the word itself: its synonyms,
    /// longer indexed words it begins, and shorter indexed words that begin it.
    pub synonym: f32,
    pub longer: f32,
    pub shorter: f32,
    /// The weight of query words inside quotes or backticks: they are usually an argument
    /// (a message, a name) rather than what the tool should do.
    pub quoted: f32,
    /// The weight of meaning against words: a tool's score is its textual score over the
    /// best one, plus `meaning` times its cosine to the query rescaled so that the closest
    /// tool has 1 and the farthest 0.
    pub meaning: f32,
    /// The least cosine that lets a tool without a single query word among the hits.
    pub meaning_floor: f32,
    /// The weight of the words a query's paths and web addresses imply (`text::implied`),
    /// and of their own words (`/root/slides/talk.pptx`: `root`, `slide`, `talk`, `pptx`; a
    /// path where the result goes gives neither, see `destination`).
    pub implied: f32,
    pub path_words: f32,
    /// The weight of the words a path where the result goes implies (`text::WRITES`) among
    /// the query's words. 0: the writer such a request needs has its own place (`writer_at`),
    /// and the words would only lift other tools that save things over what the rest asks.
    /// The meaning still reads them (left out there too, LiveMCPBench fell 0.606 → 0.598 at 10).
    pub destination: f32,
    /// What a tool gains when the query names its server (`on Wikipedia`, `from arXiv`):
    /// such a request is about that server's tools. Counted once: a server's lift (`server`)
    /// is taken from its best tool's score without it.
    pub named: f32,
    /// How much of its server's best score a tool gains: a request that fits a server well
    /// lifts that server's other tools, which a task of several steps often needs.
    pub server: f32,
    /// How much a query word still counts in a tool chosen after tools that already matched
    /// it (per tool that did, as a power): below 1, a request of several parts gets tools for
    /// each part instead of ten for its most frequent words.
    pub cover: f32,
    /// The latest place (0-based) of the best tool for writing where a request's result goes
    /// (`save it to /root/notes/x.md`): such a request needs one whatever else it asks, and the
    /// rest of a long request otherwise crowds it out. `None`: no such place is kept.
    pub writer_at: Option<usize>,
    /// The same for the best tool that tells the current date, when a request names a day
    /// relative to it (`tomorrow`, `next Wednesday`, `the last 24h`): the date is needed first.
    pub clock_at: Option<usize>,
    /// How many of the first tools get a tool that feeds them (`feeders`) right after them
    /// (`Finder::feed`): the step before, which the request rarely says (geocoding an address
    /// before a search near it, a station's code before its tickets).
    pub fed: usize,
    /// The factor on the score of a tool that reads a kind of file the request only makes
    /// (`text::Implied::made`): a new Word file has no text to get yet.
    pub unmade: f32,
}

impl Tuning {
    pub(crate) const DEFAULT: Tuning = Tuning {
        weight: [2.0, 2.0, 1.5, 1.0, 0.6, 2.0],
        b: [0.3, 0.3, 0.75, 0.5, 0.75, 0.0],
        k1: 1.2,
        synonym: 0.6,
        longer: 0.6,
        shorter: 0.45,
        quoted: 0.5,
        meaning: 1.5,
        meaning_floor: 0.2,
        implied: 0.5,
        path_words: 0.5,
        destination: 0.0,
        named: 0.9,
        server: 1.0,
        cover: 1.0,
        writer_at: Some(4),
        clock_at: Some(4),
        fed: 2,
        unmade: 0.8,
    };
}

/// Shortest query stem that reaches longer words (`conf` → `configur`), and shortest
/// indexed word a longer query word reaches (`information` → `info`).
const MIN_PREFIX: usize = 3;
const MIN_SHORTER: usize = 4;
/// Most longer words one query word reaches, and most query words read: bounds the work of a
/// search whatever the query.
const MAX_LONGER: usize = 24;
const MAX_QUERY_TERMS: usize = 32;
/// The largest lift this session's use gives a tool's score (a fraction): enough to order near
/// ties, never enough to pass a match that is clearly better.
const USE_BOOST: f32 = 0.1;
/// Words of server names that say nothing of what a server is for (stemmed).
const GENERIC_SERVER_WORDS: &[&str] = &["mcp", "server", "api", "tool", "servic", "official"];
/// Reciprocal-rank fusion of several phrasings: the rank offset, and how many tools of each
/// phrasing take part.
const FUSE_K: f32 = 20.0;
const FUSE_POOL: usize = 60;
/// How many of the best tools for a need (`Finder::needed`) are looked at for one that
/// matches its words.
const NEEDED_POOL: usize = 10;
/// The share of the fleet's tools above which a word of parameter names is common: a tool
/// that requires such a parameter is given it by the request, not fed it by another tool
/// (`feeders`). Chosen on both sets (BENCHMARKS.md): 0.02 and 0.05 each lose on one.
const COMMON_PARAM: f32 = 0.03;
/// And the most tools that may take a word that is still rare, so that in a small fleet the
/// few tools of one server that share a parameter (coordinates) do not make it common.
const COMMON_PARAM_TOOLS: f32 = 4.0;
/// A word of a required parameter that more of a server's descriptions hold than this says
/// nothing of which tool gives it; and the most feeders one tool keeps. Both bound the build
/// for a server of thousands of tools whatever their text.
const MAX_SAYERS: usize = 16;
const MAX_FEEDERS: usize = 8;
/// The fewest servers whose tools take a word of parameter names that make it common: a notion
/// several services share (a ticker, a date) is one the request names, whatever the fleet's
/// size (without it, one more server in the fleet could make `ticker` rare and a ticker list
/// a feeder).
const COMMON_PARAM_SERVERS: usize = 3;
/// How many of the best tools `Tuning::cover` chooses among.
const COVER_POOL: usize = 40;

struct Posting {
    doc: u32,
    /// The BM25F pseudo-frequency: weighted, length-normalised term counts over the fields.
    freq: f32,
}

/// What one query word reaches: indexed terms with their weights, and synonym phrases (each
/// a list of indexed terms, weighted as a synonym).
#[derive(Default)]
struct Relatives {
    words: Vec<(usize, f32)>,
    phrases: Vec<Vec<usize>>,
}

/// A score per document that is cheap to reset: only the documents touched are cleared.
struct Slots {
    score: Vec<f32>,
    touched: Vec<usize>,
}

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            score: vec![0.0; n],
            touched: Vec::new(),
        }
    }

    fn touch(&mut self, doc: usize) -> &mut f32 {
        if self.score[doc] == 0.0 {
            self.touched.push(doc);
        }
        &mut self.score[doc]
    }

    fn raise(&mut self, doc: usize, s: f32) {
        let slot = self.touch(doc);
        *slot = slot.max(s);
    }

    fn add(&mut self, doc: usize, s: f32) {
        *self.touch(doc) += s;
    }

    /// Hands over every touched document's score, then clears them.
    fn drain(&mut self, mut each: impl FnMut(usize, f32)) {
        for doc in self.touched.drain(..) {
            let s = std::mem::take(&mut self.score[doc]);
            if s > 0.0 {
                each(doc, s);
            }
        }
    }
}

/// The inverted index over a fixed set of tools.
pub struct Finder {
    docs: Vec<ToolDoc>,
    /// Sorted, so that a prefix is a contiguous range; `postings[i]` and `idf[i]` belong to
    /// `terms[i]`.
    terms: Vec<String>,
    postings: Vec<Vec<Posting>>,
    idf: Vec<f32>,
    /// Each document's unit vector (`vectors::embed`) one after another, `dims` long each; a
    /// document with no known word has zeros. Empty when the vectors are unusable.
    meanings: Vec<f32>,
    dims: usize,
    /// The distinct words of each document's server name (`arxiv` of `mcp_simple_arxiv`),
    /// without the words every server name may hold.
    server_words: Vec<Vec<String>>,
    /// Each document's server as a number (in order of first appearance), and how many.
    server_of: Vec<u32>,
    servers: usize,
    /// What was read from each document, kept so that a rebuild reads only changed ones.
    prepared: Vec<Arc<Prepared>>,
    /// Per document: the tools of its server that give what it needs first (`feeders`).
    feeders: Vec<Vec<u32>>,
    tuning: Tuning,
}

/// One document as read for the index: its terms per field, its vector of meaning, and what
/// it says of other tools (`feeders`).
struct Prepared {
    fields: [Vec<String>; FIELDS],
    meaning: Option<Vec<f32>>,
    /// The terms of each required parameter's name (`from_latitude`: `latitud`), those with
    /// a term only.
    needs: Vec<Vec<String>>,
    /// The identifiers its description and parameter descriptions name (`get-current-date`,
    /// `search_cards`), sorted: another tool of its server named there is one to call first.
    mentions: Vec<String>,
}

impl Prepared {
    fn read(d: &ToolDoc) -> Prepared {
        let needs = d
            .required
            .iter()
            .map(|name| {
                let mut t = Vec::new();
                text::terms(name, |w| t.push(w));
                t
            })
            .filter(|t| !t.is_empty())
            .collect();
        let mut mentions = Vec::new();
        for part in std::iter::once(&d.description).chain(d.params.iter().map(|(_, t)| t)) {
            text::identifiers(part, |id| mentions.push(id.to_owned()));
        }
        mentions.sort_unstable();
        mentions.dedup();
        // The description's and parameter names' terms sorted: the index counts them in any
        // order, and `feeders` looks words up in them.
        let mut fields = field_terms(d);
        fields[2].sort_unstable();
        fields[3].sort_unstable();
        Prepared {
            fields,
            meaning: vectors::embed(&meaning_text(d)),
            needs,
            mentions,
        }
    }
}

impl Finder {
    pub fn new(docs: Vec<ToolDoc>) -> Finder {
        Finder::with_tuning(docs, Tuning::DEFAULT)
    }

    pub(crate) fn with_tuning(docs: Vec<ToolDoc>, tuning: Tuning) -> Finder {
        Finder::build(docs, tuning, None)
    }

    /// A finder over `docs` that reads again only the tools this one does not hold as they
    /// are (a server whose listing changed): the others' words and meaning are taken from
    /// here, and only the index over all of them is put together anew.
    pub fn rebuilt(&self, docs: Vec<ToolDoc>) -> Finder {
        Finder::build(docs, self.tuning, Some(self))
    }

    fn build(docs: Vec<ToolDoc>, tuning: Tuning, from: Option<&Finder>) -> Finder {
        let known: std::collections::HashMap<&ToolDoc, &Arc<Prepared>> = from
            .map(|f| f.docs.iter().zip(&f.prepared).collect())
            .unwrap_or_default();
        let prepared: Vec<Arc<Prepared>> = docs
            .iter()
            .map(|d| match known.get(d) {
                Some(p) => Arc::clone(p),
                None => Arc::new(Prepared::read(d)),
            })
            .collect();
        drop(known);
        // Per document: each field's terms.
        let fielded: Vec<&[Vec<String>; FIELDS]> = prepared.iter().map(|p| &p.fields).collect();
        let mut avg = [0f32; FIELDS];
        for &fields in &fielded {
            for (a, f) in avg.iter_mut().zip(fields) {
                *a += f.len() as f32;
            }
        }
        for a in &mut avg {
            *a /= docs.len().max(1) as f32;
        }
        let mut by_term: std::collections::HashMap<String, Vec<Posting>> = Default::default();
        for (doc, fields) in fielded.iter().copied().enumerate() {
            let mut freqs: std::collections::HashMap<&str, f32> = Default::default();
            for (i, terms) in fields.iter().enumerate() {
                let b = tuning.b[i];
                let norm = if avg[i] > 0.0 {
                    1.0 - b + b * terms.len() as f32 / avg[i]
                } else {
                    1.0
                };
                for t in terms {
                    *freqs.entry(t).or_default() += tuning.weight[i] / norm;
                }
            }
            for (t, freq) in freqs {
                let doc = doc as u32;
                by_term
                    .entry(t.to_owned())
                    .or_default()
                    .push(Posting { doc, freq });
            }
        }
        let mut entries: Vec<(String, Vec<Posting>)> = by_term.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let n = docs.len() as f32;
        let idf = entries
            .iter()
            .map(|(_, p)| {
                let df = p.len() as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let (terms, mut postings): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        for p in &mut postings {
            let p: &mut Vec<Posting> = p;
            p.sort_unstable_by_key(|p| p.doc);
        }
        let dims = prepared
            .iter()
            .find_map(|p| p.meaning.as_ref())
            .map_or(0, Vec::len);
        let mut meanings = Vec::with_capacity(dims * docs.len());
        if dims > 0 {
            for v in prepared.iter().map(|p| &p.meaning) {
                match v {
                    Some(v) => meanings.extend_from_slice(v),
                    None => meanings.resize(meanings.len() + dims, 0.0),
                }
            }
        }
        let server_words = fielded
            .iter()
            .map(|f| {
                let mut words: Vec<String> = f[5]
                    .iter()
                    .filter(|w| !GENERIC_SERVER_WORDS.contains(&w.as_str()))
                    .cloned()
                    .collect();
                words.dedup();
                words
            })
            .collect();
        let mut numbered: std::collections::HashMap<&str, u32> = Default::default();
        let server_of: Vec<u32> = docs
            .iter()
            .map(|d| {
                let next = numbered.len() as u32;
                *numbered.entry(d.server.as_str()).or_insert(next)
            })
            .collect();
        let servers = numbered.len();
        drop(numbered);
        let feeders = feeders(&docs, &prepared, &server_of, servers);
        Finder {
            feeders,
            server_of,
            servers,
            docs,
            terms,
            postings,
            idf,
            meanings,
            dims,
            server_words,
            prepared,
            tuning,
        }
    }

    /// Whether `query` has a word the ranking reads (not only stopwords or single letters):
    /// one without ranks by use alone.
    pub fn has_terms(query: &str) -> bool {
        let mut any = false;
        text::query_terms(query, |_, _| any = true);
        any
    }

    pub fn docs(&self) -> &[ToolDoc] {
        &self.docs
    }

    /// The `limit` best tools for `query`, best first, only those of `server` when given.
    /// `uses(exposed)` is how often this session called a tool. A query without a single
    /// meaningful word ranks by use alone (most used first, then in listing order), so an
    /// empty query lists a server's tools.
    /// This session's lift of a tool from its use (a factor, at least 1).
    fn use_boost(&self, doc: usize, uses: &dyn Fn(&str) -> u32) -> f32 {
        let u = uses(&self.docs[doc].exposed) as f32;
        1.0 + USE_BOOST * u / (u + 1.0)
    }

    /// Whether a document reads a file of one of `kinds` (stems): the first verb of its name
    /// (after its server's words) is one of `text::READS`, and its name, title or description
    /// names the kind.
    fn reads_one_of(&self, doc: usize, kinds: &[String], verbs: &[String]) -> bool {
        let [name, title, description, ..] = &self.prepared[doc].fields;
        let server = &self.server_words[doc];
        let reads = name
            .iter()
            .find(|t| {
                !server.contains(t)
                    && !kinds.contains(t)
                    && !GENERIC_SERVER_WORDS.contains(&t.as_str())
            })
            .is_some_and(|verb| verbs.contains(verb));
        reads
            && name
                .iter()
                .chain(title)
                .chain(description)
                .any(|t| kinds.contains(t))
    }

    /// Every allowed tool that matches `query` with the parts of its score, what each query
    /// word gave each tool, and the query's words; `None` for a query without a word to rank by.
    fn scored(
        &self,
        query: &str,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
    ) -> Option<Scored> {
        let allowed = |doc: usize| server.is_none_or(|s| self.docs[doc].server == s);
        let boost = |doc: usize| self.use_boost(doc, uses);
        let text::Implied {
            rest,
            words: implied,
            arguments,
            made,
        } = text::implied(query);
        let mut query_terms: Vec<(String, f32)> = Vec::new();
        let mut push = |t: String, weight: f32| {
            let full = query_terms.len() >= MAX_QUERY_TERMS;
            match query_terms.iter_mut().find(|(seen, _)| *seen == t) {
                Some(seen) => seen.1 = seen.1.max(weight),
                None if !full => query_terms.push((t, weight)),
                None => {}
            }
        };
        text::query_terms(&rest, |t, quoted| {
            push(t, if quoted { self.tuning.quoted } else { 1.0 })
        });
        let english = glossary::english(&rest);
        text::terms(&english, |t| push(t, 1.0));
        for word in &implied {
            let weight = if text::WRITES.contains(word) {
                self.tuning.destination
            } else {
                self.tuning.implied
            };
            text::terms(word, |t| push(t, weight));
        }
        for token in &arguments {
            text::terms(token, |t| push(t, self.tuning.path_words));
        }
        if query_terms.is_empty() {
            return None;
        }
        // The meaning is read from the query without its paths (unless they weigh as much as
        // its words), then the English of its Chinese words and what its paths imply.
        let mut meaning_query = if self.tuning.path_words >= 1.0 && !implied.is_empty() {
            query.to_owned()
        } else {
            rest
        };
        for extra in [english, implied.join(" ")] {
            if !extra.is_empty() {
                meaning_query.push(' ');
                meaning_query.push_str(&extra);
            }
        }
        let (textual, by_term) = self.score(&query_terms);
        let mut parts: Vec<Parts> = self.fuse(&meaning_query, &textual, &allowed).collect();
        for p in &mut parts {
            p.boost = boost(p.doc);
        }
        if !made.is_empty() && self.tuning.unmade < 1.0 {
            let (mut kinds, mut verbs) = (Vec::new(), Vec::new());
            made.iter().for_each(|w| text::terms(w, |t| kinds.push(t)));
            text::READS
                .iter()
                .for_each(|w| text::terms(w, |t| verbs.push(t)));
            for p in &mut parts {
                if self.reads_one_of(p.doc, &kinds, &verbs) {
                    p.unmade = self.tuning.unmade;
                }
            }
        }
        if self.tuning.named > 0.0 {
            // A server is named by a query word, or by two in a row (`hacker news`).
            let stems: Vec<&str> = query_terms.iter().map(|(t, _)| t.as_str()).collect();
            let pairs: Vec<String> = stems.windows(2).map(|w| w.concat()).collect();
            let named = |words: &[String]| {
                words
                    .iter()
                    .any(|w| stems.contains(&w.as_str()) || pairs.contains(w))
            };
            // Decided once per server (its documents share its name's words).
            let mut is_named: Vec<Option<bool>> = vec![None; self.servers];
            for p in &mut parts {
                let server = self.server_of[p.doc] as usize;
                let yes = *is_named[server].get_or_insert_with(|| named(&self.server_words[p.doc]));
                if yes {
                    p.named = self.tuning.named;
                }
            }
        }
        if self.tuning.server > 0.0 {
            let mut best = vec![0f32; self.servers];
            for p in &parts {
                let b = &mut best[self.server_of[p.doc] as usize];
                // What the server is named for is counted once, in `named`.
                *b = b.max(p.total() - p.named * p.unmade);
            }
            for p in &mut parts {
                p.server = self.tuning.server * best[self.server_of[p.doc] as usize];
            }
        }
        Some(Scored {
            parts,
            by_term,
            terms: query_terms,
        })
    }

    pub fn search(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
    ) -> Vec<Hit> {
        if Finder::has_terms(query) {
            self.fused(&[query], limit, server, uses, false).0
        } else {
            self.search_scored(query, limit, server, uses).0
        }
    }

    /// `search`, with the scores it chose from (`None` for a query without a word to rank by).
    fn search_scored(
        &self,
        query: &str,
        limit: usize,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
    ) -> (Vec<Hit>, Option<Scored>) {
        let order = |a: &Hit, b: &Hit| {
            b.score
                .partial_cmp(&a.score)
                .unwrap_or(Ordering::Equal)
                .then(a.index.cmp(&b.index))
        };
        let Some(scored) = self.scored(query, server, uses) else {
            let allowed = |doc: usize| server.is_none_or(|s| self.docs[doc].server == s);
            let mut hits: Vec<Hit> = (0..self.docs.len())
                .filter(|&d| allowed(d))
                .map(|d| Hit {
                    index: d,
                    score: self.use_boost(d, uses) - 1.0,
                })
                .collect();
            top(&mut hits, limit, order);
            return (hits, None);
        };
        let (parts, by_term) = (&scored.parts, &scored.by_term);
        let mut hits: Vec<Hit> = parts
            .iter()
            .map(|p| Hit {
                index: p.doc,
                score: p.total(),
            })
            .filter(|h| h.score > 0.0 && h.score.is_finite())
            .collect();
        if self.tuning.cover >= 1.0 || limit < 2 {
            top(&mut hits, limit, order);
            return (hits, Some(scored));
        }
        // Chosen one at a time from the best few: each query word counts less in the tools
        // after the first that matched it.
        top(&mut hits, limit.max(COVER_POOL), order);
        let mut slot = vec![u32::MAX; self.docs.len()];
        for (i, p) in parts.iter().enumerate() {
            slot[p.doc] = i as u32;
        }
        let pool: Vec<&Parts> = hits
            .iter()
            .map(|h| &parts[slot[h.index] as usize])
            .collect();
        slot.fill(u32::MAX);
        for (i, p) in pool.iter().enumerate() {
            slot[p.doc] = i as u32;
        }
        // Per pool member, per query word: its share of the textual score.
        let terms = by_term.len();
        let mut share = vec![0f32; pool.len() * terms];
        for (q, scores) in by_term.iter().enumerate() {
            for &(doc, s) in scores {
                if let Some(&i) = slot.get(doc as usize).filter(|&&i| i != u32::MAX) {
                    share[i as usize * terms + q] = s;
                }
            }
        }
        let mut used = vec![0u32; terms];
        let mut taken = vec![false; pool.len()];
        let mut out = Vec::with_capacity(limit);
        for _ in 0..limit.min(pool.len()) {
            let mut pick: Option<(usize, f32)> = None;
            for (i, p) in pool.iter().enumerate() {
                if taken[i] {
                    continue;
                }
                let textual: f32 = (0..terms)
                    .map(|q| share[i * terms + q] * self.tuning.cover.powi(used[q] as i32))
                    .sum();
                let score = p.with_text(textual);
                if pick.is_none_or(|(_, best)| score > best) {
                    pick = Some((i, score));
                }
            }
            let Some((i, score)) = pick else { break };
            taken[i] = true;
            for q in 0..terms {
                used[q] += u32::from(share[i * terms + q] > 0.0);
            }
            out.push(Hit {
                index: pool[i].doc,
                score,
            });
        }
        // Scores fall as the words are used, so the order chosen is kept.
        (out, Some(scored))
    }

    /// The `limit` best tools for several phrasings of one request, fused by reciprocal rank
    /// (each phrasing's `k`-th tool adds `1 / (FUSE_K + k)`), so that a tool several phrasings
    /// find rises over one that a single phrasing puts first. Tools named exactly (a word of a
    /// phrasing that is a tool's exposed name) come first, in the order named. One phrasing
    /// ranks as `search` does.
    pub fn search_all(
        &self,
        queries: &[&str],
        limit: usize,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
    ) -> Vec<Hit> {
        self.fused(queries, limit, server, uses, false).0
    }

    /// `search_all`, and why each tool it gives ranked there: the parts of its score under the
    /// phrasing that scored it best (`None` for a tool only named).
    pub fn search_all_explained(
        &self,
        queries: &[&str],
        limit: usize,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
    ) -> (Vec<Hit>, Vec<Option<Why>>) {
        self.fused(queries, limit, server, uses, true)
    }

    fn fused(
        &self,
        queries: &[&str],
        limit: usize,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
        explain: bool,
    ) -> (Vec<Hit>, Vec<Option<Why>>) {
        let named = self.named(queries, server);
        let ranked: Vec<&str> = queries
            .iter()
            .copied()
            .filter(|q| Finder::has_terms(q))
            .collect();
        let mut kept: Vec<(&str, Scored)> = Vec::new();
        let mut hits = match ranked.as_slice() {
            [] => Vec::new(),
            [one] => {
                let (hits, scored) = self.search_scored(one, limit + named.len(), server, uses);
                kept.extend(scored.map(|s| (*one, s)));
                hits
            }
            many => {
                let pool = (limit + named.len()).max(FUSE_POOL);
                let mut fused: std::collections::HashMap<usize, (f32, f32)> = Default::default();
                for q in many {
                    let (hits, scored) = self.search_scored(q, pool, server, uses);
                    for (rank, h) in hits.iter().enumerate() {
                        let e = fused.entry(h.index).or_default();
                        e.0 += 1.0 / (FUSE_K + rank as f32 + 1.0);
                        e.1 = e.1.max(h.score);
                    }
                    kept.extend(scored.map(|s| (*q, s)));
                }
                let mut hits: Vec<(Hit, f32)> = fused
                    .into_iter()
                    .map(|(index, (score, best))| (Hit { index, score }, best))
                    .collect();
                hits.sort_unstable_by(|(a, x), (b, y)| {
                    b.score
                        .total_cmp(&a.score)
                        .then(y.total_cmp(x))
                        .then(a.index.cmp(&b.index))
                });
                hits.into_iter().map(|(h, _)| h).collect()
            }
        };
        let mut placed = self.feed(&mut hits);
        let needs = ranked
            .first()
            .map(|q| self.needed(q, server, uses))
            .unwrap_or_default();
        placed.extend(keep_places(&mut hits, needs));
        hits.retain(|h| !named.contains(&h.index));
        let top = hits.first().map_or(1.0, |h| h.score.max(f32::MIN_POSITIVE));
        let mut out: Vec<Hit> = named
            .iter()
            .map(|&index| Hit {
                index,
                score: top * 2.0,
            })
            .collect();
        out.extend(hits);
        out.truncate(limit);
        if !explain {
            return (out, Vec::new());
        }
        // A tool named in the query is first because it was named, whatever else moved it.
        placed.retain(|(doc, _)| !named.contains(doc));
        let docs: Vec<usize> = out.iter().map(|h| h.index).collect();
        let mut whys = self.whys(&kept, &docs);
        for (doc, why) in docs.iter().zip(&mut whys) {
            if let Some((_, k)) = placed.iter().rev().find(|(d, _)| d == doc) {
                why.get_or_insert_with(Why::default).kept = Some(k.clone());
            }
        }
        (out, whys)
    }

    /// Puts a feeder (`feeders`) right after each of the first `Tuning::fed` hits that has one,
    /// unless one of its feeders already ranks before it or right after it: the best-ranked of
    /// its feeders, or its first one when none scored. Returns what it moved, and after which
    /// tool.
    fn feed(&self, hits: &mut Vec<Hit>) -> Vec<(usize, Kept)> {
        let consumers: Vec<usize> = hits.iter().take(self.tuning.fed).map(|h| h.index).collect();
        let mut placed = Vec::new();
        for consumer in consumers {
            let feeders = &self.feeders[consumer];
            // Where each tool stands now (earlier moves shift them).
            let at = |doc: usize, hits: &[Hit]| hits.iter().position(|h| h.index == doc);
            let Some(c) = at(consumer, hits) else {
                continue;
            };
            let ranked: Vec<usize> = feeders
                .iter()
                .filter_map(|&f| at(f as usize, hits))
                .collect();
            if feeders.is_empty() || ranked.iter().any(|&p| p <= c + 1) {
                continue;
            }
            let hit = match ranked.iter().min() {
                Some(&p) => hits.remove(p),
                None => Hit {
                    index: feeders[0] as usize,
                    score: 0.0,
                },
            };
            insert_falling(hits, c + 1, hit);
            placed.push((
                hit.index,
                Kept::Feeder {
                    of: self.docs[consumer].exposed.clone(),
                },
            ));
        }
        placed
    }

    /// Why each of `docs` ranked where it did for `queries` (as `search_all` ranks them).
    pub fn explain(
        &self,
        queries: &[&str],
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
        docs: &[usize],
    ) -> Vec<Option<Why>> {
        let kept: Vec<(&str, Scored)> = queries
            .iter()
            .filter_map(|q| Some((*q, self.scored(q, server, uses)?)))
            .collect();
        self.whys(&kept, docs)
    }

    /// The parts of each of `docs`' score under the phrasing that scored it best, read in one
    /// pass over each phrasing's scores.
    fn whys(&self, kept: &[(&str, Scored)], docs: &[usize]) -> Vec<Option<Why>> {
        let mut out: Vec<Option<Why>> = vec![None; docs.len()];
        // Per document of the finder: its place in `docs`, if wanted.
        let mut place = vec![u32::MAX; self.docs.len()];
        for (i, &d) in docs.iter().enumerate().rev() {
            if let Some(p) = place.get_mut(d) {
                *p = i as u32;
            }
        }
        let slot = |d: usize| {
            place
                .get(d)
                .copied()
                .filter(|&i| i != u32::MAX)
                .map(|i| i as usize)
        };
        for (q, scored) in kept {
            // Per wanted document: its parts, and the query words that gave it something.
            let mut mine: Vec<Option<&Parts>> = vec![None; docs.len()];
            for p in &scored.parts {
                if let Some(i) = slot(p.doc) {
                    mine[i] = Some(p);
                }
            }
            let mut matched: Vec<Vec<String>> = vec![Vec::new(); docs.len()];
            for ((term, _), given) in scored.terms.iter().zip(&scored.by_term) {
                for &(d, s) in given {
                    if let Some(i) = slot(d as usize).filter(|_| s > 0.0) {
                        let word = query_word(q, term);
                        if !matched[i].contains(&word) {
                            matched[i].push(word);
                        }
                    }
                }
            }
            for (i, (p, words)) in mine.into_iter().zip(matched).enumerate() {
                let Some(p) = p else { continue };
                let score = p.total();
                if out[i].as_ref().is_some_and(|w| w.score >= score) {
                    continue;
                }
                out[i] = Some(Why {
                    kept: None,
                    score,
                    words: if p.best > 0.0 { p.text / p.best } else { 0.0 },
                    matched: words,
                    meaning: p.meaning,
                    server: p.server,
                    named: p.named,
                    used: p.boost,
                    unmade: p.unmade < 1.0,
                });
            }
        }
        out
    }

    /// Tools `query` needs whatever else it asks, each with the latest place it may have:
    /// the best tool for writing where its result goes, when it names such a place (a path
    /// after `save it to`, see `text::implied`), and the best tool for the current date, when
    /// it names a day relative to it. Each is searched by what it is needed for alone.
    fn needed(
        &self,
        query: &str,
        server: Option<&str>,
        uses: &dyn Fn(&str) -> u32,
    ) -> Vec<(Hit, usize, Kept)> {
        let mut out = Vec::new();
        // The best of the tools whose name or title holds one of `must`: what a tool does is
        // in its name (`create_document`, `save_presentation`, `get_current_time`); one that
        // only mentions it (`copy_document`: "Create a copy"), or is only close in meaning, is
        // not a writer or a clock, and a fleet without one gets none. One that also names one
        // of `kinds` comes first: a Word file is made by a tool for Word documents, not by
        // one that writes any file.
        let mut best = |words: &str, must: &[&str], kinds: &[&str], at: usize, kept: Kept| {
            let (hits, _) = self.search_scored(words, NEEDED_POOL, server, uses);
            let stems = |words: &[&str]| {
                let mut v = Vec::new();
                words.iter().for_each(|w| text::terms(w, |t| v.push(t)));
                v
            };
            let (must, kinds) = (stems(must), stems(kinds));
            let fits = |doc: usize| {
                let [name, title, description, ..] = &self.prepared[doc].fields;
                let kind = kinds.is_empty()
                    || name
                        .iter()
                        .chain(title)
                        .chain(description)
                        .any(|t| kinds.contains(t));
                (name.iter().chain(title).any(|t| must.contains(t)), kind)
            };
            // Loom's own tools write datasets (`loom_export`), never the text a request makes.
            let ours = |h: &&Hit| self.docs[h.index].server == crate::config::RESERVED_NAME;
            let fitting: Vec<(Hit, (bool, bool))> = hits
                .into_iter()
                .filter(|h| !ours(&h))
                .map(|h| (h, fits(h.index)))
                .filter(|(_, (does, _))| *does)
                .collect();
            let chosen = fitting
                .iter()
                .find(|(_, (_, kind))| *kind)
                .or(fitting.first());
            out.extend(chosen.map(|(h, _)| (*h, at, kept)));
        };
        if let Some(at) = self.tuning.writer_at {
            let implied = text::implied(query);
            if implied.words.iter().any(|w| text::WRITES.contains(w)) {
                // What it does, what it writes (`file`) and the words of the request's paths.
                // Its name says it writes, saves or creates.
                let mut must = text::WRITES.to_vec();
                must.push("create");
                let words: Vec<&str> = must
                    .iter()
                    .chain(&["file"])
                    .chain(&implied.words)
                    .copied()
                    .collect();
                best(&words.join(" "), &must, &implied.made, at, Kept::Writer);
            }
        }
        if let Some(at) = self.tuning.clock_at
            && text::relative_day(query)
        {
            best("current date time", &["date", "time"], &[], at, Kept::Clock);
        }
        out
    }

    /// The documents whose exposed name is a word of one of `queries`, in the order named.
    pub fn named(&self, queries: &[&str], server: Option<&str>) -> Vec<usize> {
        let mut out = Vec::new();
        for q in queries {
            for word in q.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '`' | '"')) {
                let word = word.trim_matches(|c: char| matches!(c, '.' | ':' | '(' | ')'));
                // Every exposed name is `<server>_<tool>`.
                if !word.contains('_') {
                    continue;
                }
                let found = self.docs.iter().position(|d| {
                    d.exposed.eq_ignore_ascii_case(word) && server.is_none_or(|s| d.server == s)
                });
                if let Some(i) = found.filter(|i| !out.contains(i)) {
                    out.push(i);
                }
            }
        }
        out
    }

    /// The allowed documents' textual scores joined with their closeness in meaning to
    /// `query` (see `Tuning::meaning`); only documents that match a word or come close enough
    /// in meaning.
    fn fuse<'a>(
        &'a self,
        query: &str,
        textual: &'a [f32],
        allowed: &'a dyn Fn(usize) -> bool,
    ) -> impl Iterator<Item = Parts> + 'a {
        let cosines: Vec<f32> = match vectors::embed(query) {
            Some(q) if self.dims == q.len() => self
                .meanings
                .chunks_exact(self.dims)
                .map(|d| vectors::dot(&q, d))
                .collect(),
            _ => Vec::new(),
        };
        let (mut best, mut low, mut high) = (0f32, f32::INFINITY, f32::NEG_INFINITY);
        for d in (0..self.docs.len()).filter(|&d| allowed(d)) {
            best = best.max(textual[d]);
            if let Some(&c) = cosines.get(d) {
                (low, high) = (low.min(c), high.max(c));
            }
        }
        let spread = high - low;
        let (weight, floor) = (self.tuning.meaning, self.tuning.meaning_floor);
        (0..self.docs.len()).filter_map(move |d| {
            let text = textual[d];
            let cosine = cosines.get(d).copied().unwrap_or(f32::NEG_INFINITY);
            if !(allowed(d) && (text > 0.0 || cosine >= floor)) {
                return None;
            }
            let meaning = if spread > 0.0 && cosine.is_finite() {
                weight * (cosine - low) / spread
            } else {
                0.0
            };
            let p = Parts {
                doc: d,
                text,
                best,
                meaning,
                boost: 1.0,
                named: 0.0,
                server: 0.0,
                unmade: 1.0,
            };
            (p.total() > 0.0 && p.total().is_finite()).then_some(p)
        })
    }

    /// Every document's textual score: per query word, the best of the word's relatives that
    /// the document holds, summed over the query's words; and per query word, what it gave
    /// each document.
    fn score(&self, query_terms: &[(String, f32)]) -> (Vec<f32>, Vec<Vec<(u32, f32)>>) {
        let n = self.docs.len();
        let mut total = vec![0f32; n];
        let mut by_term = Vec::with_capacity(query_terms.len());
        let (mut best, mut phrase) = (Slots::new(n), Slots::new(n));
        for (q, q_weight) in query_terms {
            let relatives = self.relatives(q);
            for &(term, weight) in &relatives.words {
                for (doc, s) in self.term_scores(term, weight * q_weight) {
                    best.raise(doc, s);
                }
            }
            // A phrase scores as its words would together, then competes as one relative.
            for words in &relatives.phrases {
                for &term in words {
                    for (doc, s) in self.term_scores(term, self.tuning.synonym * q_weight) {
                        phrase.add(doc, s);
                    }
                }
                phrase.drain(|doc, s| best.raise(doc, s));
            }
            let mut mine = Vec::new();
            best.drain(|doc, s| {
                total[doc] += s;
                mine.push((doc as u32, s));
            });
            by_term.push(mine);
        }
        (total, by_term)
    }

    /// Each document holding `term`, with the term's weighted BM25F score there.
    fn term_scores(&self, term: usize, weight: f32) -> impl Iterator<Item = (usize, f32)> + '_ {
        let idf = self.idf[term] * weight;
        let k1 = self.tuning.k1;
        self.postings[term]
            .iter()
            .map(move |p| (p.doc as usize, idf * p.freq * (k1 + 1.0) / (p.freq + k1)))
    }

    /// The indexed terms a query stem reaches, with their discounts: itself, its synonyms
    /// (words and phrases), longer words it begins, and shorter words that begin it.
    fn relatives(&self, q: &str) -> Relatives {
        let mut out = Relatives::default();
        let mut add =
            |term: usize, weight: f32| match out.words.iter_mut().find(|(t, _)| *t == term) {
                Some(seen) => seen.1 = seen.1.max(weight),
                None => out.words.push((term, weight)),
            };
        if let Some(t) = self.lookup(q) {
            add(t, 1.0);
        }
        for synonym in synonyms::of(q) {
            let terms: Option<Vec<usize>> = synonym.iter().map(|s| self.lookup(s)).collect();
            match terms.as_deref() {
                Some([t]) => add(*t, self.tuning.synonym),
                Some(words) if !words.is_empty() => out.phrases.push(words.to_vec()),
                _ => {}
            }
        }
        if q.chars().count() >= MIN_PREFIX {
            let start = self.terms.partition_point(|t| t.as_str() <= q);
            let longer = self.terms[start..]
                .iter()
                .take_while(|t| t.starts_with(q))
                .take(MAX_LONGER);
            for (i, _) in longer.enumerate() {
                add(start + i, self.tuning.longer);
            }
        }
        for (end, _) in q.char_indices().skip(MIN_SHORTER) {
            if let Some(t) = self.lookup(&q[..end]) {
                add(t, self.tuning.shorter);
            }
        }
        out
    }

    fn lookup(&self, term: &str) -> Option<usize> {
        self.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()
    }
}

pub use crate::types::events::KeptPlace as Kept;
/// Why a tool ranked where it did (see `Parts`).
pub use crate::types::events::RankParts as Why;

/// The word of `query` that gave the indexed `term` (a stem), or the term itself when none
/// does (a word a path implied).
fn query_word(query: &str, term: &str) -> String {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .find(|w| {
            let mut hit = false;
            text::terms(w, |t| hit |= t == term);
            hit
        })
        .map_or_else(|| term.to_owned(), str::to_owned)
}

/// A search's scores before the tools are chosen.
struct Scored {
    parts: Vec<Parts>,
    /// Per query word (in `terms`' order): what it gave each document.
    by_term: Vec<Vec<(u32, f32)>>,
    terms: Vec<(String, f32)>,
}

/// The parts of one document's score in one search.
struct Parts {
    doc: usize,
    /// Its textual score, and the best of any allowed document.
    text: f32,
    best: f32,
    /// `Tuning::meaning` times its rescaled cosine.
    meaning: f32,
    /// This session's use of it (a factor), and what it gains from a server the query names
    /// (`Tuning::named`) and from its server's best score (`Tuning::server`).
    boost: f32,
    named: f32,
    server: f32,
    /// `Tuning::unmade` for a tool that reads a kind of file the request only makes, else 1:
    /// a factor on the whole.
    unmade: f32,
}

impl Parts {
    fn total(&self) -> f32 {
        self.with_text(self.text)
    }

    /// Its score had its textual score been `text`.
    fn with_text(&self, text: f32) -> f32 {
        let text = if self.best > 0.0 {
            text / self.best
        } else {
            0.0
        };
        ((text + self.meaning) * self.boost + self.named + self.server) * self.unmade
    }
}

/// Keeps the `limit` best of `hits`, best first.
fn top(hits: &mut Vec<Hit>, limit: usize, order: impl Fn(&Hit, &Hit) -> Ordering + Copy) {
    if hits.len() > limit && limit > 0 {
        hits.select_nth_unstable_by(limit - 1, order);
    }
    hits.truncate(limit);
    hits.sort_unstable_by(order);
}

/// The text whose meaning stands for a document: every field, name first.
fn meaning_text(doc: &ToolDoc) -> String {
    let mut out = format!("{} {}", doc.server, doc.original);
    for part in doc.title.iter().chain([&doc.description]) {
        out.push(' ');
        out.push_str(part);
    }
    for (name, description) in &doc.params {
        out.push(' ');
        out.push_str(name);
        out.push(' ');
        out.push_str(description);
    }
    let english = glossary::english(&out);
    if !english.is_empty() {
        out.push(' ');
        out.push_str(&english);
    }
    out
}

/// A document's terms per field, in the order of `Tuning::weight`.
fn field_terms(doc: &ToolDoc) -> [Vec<String>; FIELDS] {
    // Prose is read with the English of its Chinese words (`glossary`).
    let read = |s: &str, v: &mut Vec<String>| {
        text::terms(s, |t| v.push(t));
        text::terms(&glossary::english(s), |t| v.push(t));
    };
    let of = |s: &str| {
        let mut v = Vec::new();
        read(s, &mut v);
        v
    };
    let mut param_names = Vec::new();
    let mut param_descriptions = Vec::new();
    for (name, description) in &doc.params {
        text::terms(name, |t| param_names.push(t));
        read(description, &mut param_descriptions);
    }
    [
        of(&doc.original),
        doc.title.as_deref().map(of).unwrap_or_default(),
        of(&doc.description),
        param_names,
        param_descriptions,
        of(&doc.server),
    ]
}

/// Per document, the tools of its server that feed it: tools to call before it, for what it
/// requires. A tool `S` feeds `D` when `D`'s description or parameters name `S`
/// (`must come from get-station-code-of-citys`), or when `D` requires a parameter whose words
/// `S`'s description holds while `S` takes no parameter of those words (`geocode_address`
/// says it returns latitude and longitude, which `find_parking_facilities` requires): the
/// request rarely says such a step, which only the tools' own text tells. Never across
/// servers.
fn feeders(
    docs: &[ToolDoc],
    prepared: &[Arc<Prepared>],
    server_of: &[u32],
    servers: usize,
) -> Vec<Vec<u32>> {
    let mut by_server: Vec<Vec<usize>> = vec![Vec::new(); servers];
    for (d, &s) in server_of.iter().enumerate() {
        by_server[s as usize].push(d);
    }
    // Per document: the terms of its description, and of its parameters' names (sorted in
    // `Prepared::read`; `distinct` skips repeats).
    let says = |d: usize| prepared[d].fields[2].as_slice();
    let takes = |d: usize| prepared[d].fields[3].as_slice();
    let has = |v: &[String], t: &String| v.binary_search(t).is_ok();
    // A word of parameter names that many tools of the fleet take (`path`, `query`), or tools
    // of several servers (`ticker`, `date`), names what a request supplies, not what an earlier
    // step gives. Per word: how many tools take it, and how many servers.
    let mut df: std::collections::HashMap<&str, (usize, usize)> = Default::default();
    for tools in &by_server {
        let mut words: Vec<&str> = Vec::new();
        for &d in tools {
            for w in distinct(takes(d)) {
                df.entry(w.as_str()).or_default().0 += 1;
                words.push(w.as_str());
            }
        }
        words.sort_unstable();
        words.dedup();
        for w in words {
            df.entry(w).or_default().1 += 1;
        }
    }
    let common_above = (COMMON_PARAM * docs.len() as f32).max(COMMON_PARAM_TOOLS);
    let common = |t: &String| {
        df.get(t.as_str()).is_some_and(|&(tools, servers)| {
            tools as f32 > common_above || servers >= COMMON_PARAM_SERVERS
        })
    };
    let mut out = vec![Vec::new(); docs.len()];
    for tools in &by_server {
        // This server's tools by name, and by each word of their descriptions: a tool's
        // feeders are looked up, not compared with every other tool of its server.
        let mut by_name: std::collections::HashMap<&str, usize> = Default::default();
        let mut saying: std::collections::HashMap<&str, Vec<usize>> = Default::default();
        for &s in tools {
            if text::is_identifier(&docs[s].original) {
                by_name.entry(docs[s].original.as_str()).or_insert(s);
            }
            for t in distinct(says(s)) {
                saying.entry(t.as_str()).or_default().push(s);
            }
        }
        for &d in tools {
            let p = &prepared[d];
            let mut fed: Vec<usize> = p
                .mentions
                .iter()
                .filter_map(|m| by_name.get(m.as_str()).copied())
                .collect();
            for need in &p.needs {
                let rare: Vec<&String> = need.iter().filter(|t| !common(t)).collect();
                let Some((first, others)) = rare.split_first() else {
                    continue;
                };
                // A word that many of the server's descriptions hold is not what one tool gives.
                let Some(sayers) = saying.get(first.as_str()).filter(|s| s.len() <= MAX_SAYERS)
                else {
                    continue;
                };
                for &s in sayers {
                    if others.iter().all(|t| has(says(s), t))
                        && !need.iter().any(|t| has(takes(s), t))
                    {
                        fed.push(s);
                    }
                }
            }
            fed.retain(|&s| s != d);
            fed.sort_unstable();
            fed.dedup();
            fed.truncate(MAX_FEEDERS);
            out[d] = fed.into_iter().map(|s| s as u32).collect();
        }
    }
    out
}

/// The distinct words of a sorted list, each once.
fn distinct(sorted: &[String]) -> impl Iterator<Item = &String> {
    sorted.chunk_by(|a, b| a == b).map(|run| &run[0])
}

/// Puts `hit` at `at` (at most the end) with the score of the tool whose place it takes (or of
/// the last), so that the scores stay falling.
fn insert_falling(hits: &mut Vec<Hit>, at: usize, hit: Hit) {
    let at = at.min(hits.len());
    let score = hits.get(at).or(hits.last()).map_or(hit.score, |h| h.score);
    hits.insert(at, Hit { score, ..hit });
}

/// Gives each needed tool (`Finder::needed`) a place no later than its own, without one need
/// pushing another past its place: the needs already in time keep where they are, the others
/// take their place, and needs that want the same place take the ones just before it. Returns
/// the tools moved up, with why.
fn keep_places(hits: &mut Vec<Hit>, needs: Vec<(Hit, usize, Kept)>) -> Vec<(usize, Kept)> {
    // Per need: the hit, where it goes, and why when it moves up.
    let mut moving: Vec<(Hit, usize, Option<Kept>)> = Vec::new();
    for (needed, at, reason) in needs {
        if moving.iter().any(|(h, _, _)| h.index == needed.index) {
            continue;
        }
        match hits.iter().position(|h| h.index == needed.index) {
            Some(p) if p <= at => moving.push((hits[p], p, None)),
            Some(p) => moving.push((hits[p], at, Some(reason))),
            None => moving.push((needed, at, Some(reason))),
        }
    }
    hits.retain(|h| !moving.iter().any(|(m, _, _)| m.index == h.index));
    moving.sort_by_key(|(_, at, _)| *at);
    for j in (0..moving.len().saturating_sub(1)).rev() {
        let next = moving[j + 1].1;
        if moving[j].1 >= next {
            moving[j].1 = next.saturating_sub(1);
        }
    }
    let mut placed = Vec::new();
    for (hit, at, reason) in moving {
        insert_falling(hits, at, hit);
        placed.extend(reason.map(|r| (hit.index, r)));
    }
    placed
}
