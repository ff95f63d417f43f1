//! Turning tool text and queries into index terms: split identifiers the ways tool authors
//! write them (snake_case, kebab-case, dotted, camelCase), lowercase, drop stopwords, and
//! strip common English suffixes so that `files`, `filed` and `file` meet. The stemmer is
//! deliberately light and only touches ASCII words: a wrong conflation costs ranking quality,
//! while an unstemmed word still matches itself. Nothing here may panic on any input.

use super::glossary;

/// Longest word kept, in bytes: anything longer is a hash, a blob or noise, not vocabulary.
const MAX_WORD: usize = 48;

/// Calls `each` with every lowercased word of `text`, in order, stopwords included. Chinese and
/// Japanese, written without spaces, give each pair of neighbouring characters as a word (a
/// lone character as itself), so that a request in them meets a description in them.
pub(super) fn words(text: &str, mut each: impl FnMut(&str)) {
    let mut run: Vec<char> = Vec::new();
    let mut word = String::new();
    let mut flush = |run: &mut Vec<char>, word: &mut String| {
        if run.first().copied().is_some_and(glossary::is_unspaced) {
            // Each pair of neighbours; a run of one character is that character (a run is
            // never empty here).
            for pair in run.windows(run.len().min(2)) {
                word.clear();
                word.extend(pair);
                each(word);
            }
        } else {
            split_case(run, |part| {
                word.clear();
                word.extend(part.iter().flat_map(|c| c.to_lowercase()));
                if !word.is_empty() && word.len() <= MAX_WORD {
                    each(word);
                }
            });
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            let switches = run
                .last()
                .is_some_and(|&l| glossary::is_unspaced(l) != glossary::is_unspaced(c));
            if switches {
                flush(&mut run, &mut word);
            }
            run.push(c);
        } else if !run.is_empty() {
            flush(&mut run, &mut word);
        }
    }
    if !run.is_empty() {
        flush(&mut run, &mut word);
    }
}

/// Splits one alphanumeric run at case changes: `readFile` → `read` `File`,
/// `HTTPServer` → `HTTP` `Server`, `v2Api` → `v2` `Api`.
fn split_case(run: &[char], mut part: impl FnMut(&[char])) {
    let mut start = 0;
    for i in 1..run.len() {
        let (prev, cur) = (run[i - 1], run[i]);
        let next_lower = run.get(i + 1).is_some_and(|n| n.is_lowercase());
        let boundary = cur.is_uppercase()
            && (prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower));
        if boundary {
            part(&run[start..i]);
            start = i;
        }
    }
    part(&run[start..]);
}

/// The index terms of `text`: words without stopwords or one-letter noise, stemmed.
pub(super) fn terms(text: &str, mut each: impl FnMut(String)) {
    words(text, |w| {
        let long_enough = w.chars().nth(1).is_some() || w.chars().all(glossary::is_unspaced);
        if long_enough && !is_stopword(w) {
            each(stem(w));
        }
    });
}

/// The identifiers `text` holds (`get-current-date`, `search_cards`, `getBaziDetail`): runs of
/// ASCII letters, digits, `_` and `-` that `is_identifier` takes, each once per occurrence.
pub(super) fn identifiers(text: &str, mut each: impl FnMut(&str)) {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    for run in text.split(|c: char| !part(c)) {
        let run = run.trim_matches(['_', '-']);
        if is_identifier(run) {
            each(run);
        }
    }
}

/// Whether a tool's name reads as an identifier rather than a word (`get-tickets`,
/// `search_cards`, `getStories`; not `fetch` or `search`): only then is its appearance in
/// another tool's text taken to name it.
pub(super) fn is_identifier(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 4
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
        && b.iter().any(u8::is_ascii_alphabetic)
        && (b.iter().any(|c| *c == b'_' || *c == b'-')
            || b.windows(2)
                .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase()))
}

/// The terms of a query, each with whether it stood inside quotes or backticks. An
/// apostrophe between letters (`page's`, `can't`) is not a quote.
pub(super) fn query_terms(query: &str, mut each: impl FnMut(String, bool)) {
    let chars: Vec<char> = query.chars().collect();
    let mut open: Option<char> = None;
    let mut segment = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let before = i
            .checked_sub(1)
            .and_then(|j| chars.get(j))
            .is_some_and(|p| p.is_alphanumeric());
        let after = chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        let closes = match (open, c) {
            (Some('\''), '\'') => !after,
            (Some('“'), '”') => true,
            (Some(o), c) => o == c && o != '“',
            (None, _) => false,
        };
        let opens = open.is_none()
            && match c {
                '"' | '`' | '“' => true,
                '\'' => !before,
                _ => false,
            };
        if closes || opens {
            let quoted = open.is_some();
            terms(&segment, |t| each(t, quoted));
            segment.clear();
            open = if opens { Some(c) } else { None };
        } else {
            segment.push(c);
        }
    }
    terms(&segment, |t| each(t, open.is_some()));
}

/// What the paths and web addresses of a query say. A path (`/root/notes/today.md`, `~/x`,
/// `./src/main.rs`, `C:\data`, or a file name with a known extension) or a web address is an
/// argument of the call, not what the tool should do; but it does say what kind of tool takes
/// it: one that takes a file (of the kind its extension names) or a directory, or one that takes
/// a URL. A path where the result goes implies the writing and little else (see below).
pub(super) fn implied(query: &str) -> Implied<'_> {
    let mut rest = String::with_capacity(query.len());
    let (mut words, mut tokens) = (Vec::new(), Vec::new());
    let (mut made, mut read): (Vec<&'static str>, Vec<&'static str>) = (Vec::new(), Vec::new());
    let mut add = |w: &[&'static str]| {
        for w in w {
            if !words.contains(w) {
                words.push(*w);
            }
        }
    };
    let mut last = 0;
    let mut before: Option<&str> = None;
    for (start, raw) in tokens_of(query) {
        let previous = before.replace(raw);
        let token = raw
            .trim_start_matches(['(', '[', '"', '\'', '`', '<', '“', '‘'])
            .trim_end_matches([
                '.', ',', ';', ':', '!', '?', ')', ']', '"', '\'', '`', '>', '”', '’',
            ]);
        let lower = token.to_ascii_lowercase();
        let url = ["http://", "https://", "www.", "ftp://"]
            .iter()
            .any(|p| lower.starts_with(p));
        let kind = if url { None } else { file_kind(token) };
        if !url && kind.is_none() {
            continue;
        }
        // A path where the result goes implies a writer, whose place `Finder::needed` keeps;
        // its own words, a folder, and a plain text kind that any writer writes, would only lift
        // the tools that read such files over the ones the rest of the request needs. A kind
        // that says what makes the content (a Word file, a slide deck, an image, a
        // spreadsheet) still says which tools fit.
        let mut destination = false;
        match kind {
            None => add(&["url", "web", "page"]),
            Some(kind) if is_destination(previous, makes_something(&query[last..start], query)) => {
                destination = true;
                made.extend(kind);
                if !kind.iter().any(|k| PLAIN_KINDS.contains(k)) {
                    add(kind);
                }
                add(WRITES);
            }
            Some(kind) => {
                add(&["file", "path"]);
                add(kind);
                read.extend(kind);
            }
        }
        rest.push_str(&query[last..start]);
        rest.push(' ');
        last = start + raw.len();
        if !destination {
            tokens.push(token);
        }
    }
    rest.push_str(&query[last..]);
    made.retain(|k| !read.contains(k) && !PLAIN_KINDS.contains(k));
    made.sort_unstable();
    made.dedup();
    Implied {
        rest,
        words,
        arguments: tokens,
        made,
    }
}

/// What `implied` reads from a query's paths and web addresses.
pub(super) struct Implied<'q> {
    /// The query with those tokens blanked out.
    pub rest: String,
    /// The words they imply.
    pub words: Vec<&'static str>,
    /// The tokens read from, to be read as arguments (a destination's are not).
    pub arguments: Vec<&'q str>,
    /// The kinds of file that only a path where the result goes has (`word`, `document` of
    /// `save it as /root/word/cv.docx` when no Word file is read from): files still to be
    /// made, which no tool can read yet. Plain kinds (`text`, `markdown`) are left out.
    pub made: Vec<&'static str>,
}

/// The kinds of file any writer writes: a destination of one of these says nothing of which
/// tool makes its content.
const PLAIN_KINDS: &[&str] = &["text", "markdown", "code", "html", "data", "directory"];

/// What a path where a result goes implies.
pub(super) const WRITES: &[&str] = &["write", "save"];

/// What a tool whose name begins with one of these does to a file: it reads one that exists
/// (`get_document_text`, `excel_read_sheet`, `copy_document`, `open_presentation`), useless
/// for a file the request has yet to make (`Implied::made`).
pub(super) const READS: &[&str] = &[
    "get", "read", "extract", "list", "describe", "find", "search", "open", "copy", "view", "show",
    "fetch", "load", "info",
];

/// Whether `query` names a day relative to today (`tomorrow`, `yesterday`, `next Wednesday`,
/// `last month`, `the past 3 days`, `the last 24h`): a tool needs the current date to read it.
/// `today` alone is not one: a tool that gives what is current already knows when it is.
pub(super) fn relative_day(query: &str) -> bool {
    const UNITS: &[&str] = &[
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "weekend",
        "hour",
        "hours",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "24h",
        "48h",
    ];
    let relative = |w: &str| matches!(w, "next" | "last" | "past" | "coming");
    let number = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    let (mut before, mut previous) = (String::new(), String::new());
    let mut found = false;
    words(query, |w| {
        let unit = UNITS.contains(&w);
        found |= matches!(w, "tomorrow" | "yesterday" | "tonight")
            || (unit && relative(&previous))
            || (unit && number(&previous) && relative(&before));
        before = std::mem::replace(&mut previous, w.to_owned());
    });
    found
}

/// Whether a request asks for something to be made or kept (`save it to`, `write a report`):
/// then a path it names where the result goes is a file to write. Read per path from the text
/// since the path before it: the last verb there that makes or reads decides (`read the data
/// under /root/x.xlsx, plot it and save it in /root/y.png`: the first is read from, the second
/// written), and a clause with neither goes by the whole request.
fn makes_something(clause: &str, request: &str) -> bool {
    const MAKING: &[&str] = &[
        "save",
        "saved",
        "saving",
        "write",
        "writing",
        "written",
        "store",
        "stored",
        "export",
        "exported",
        "create",
        "created",
        "generate",
        "generated",
        "make",
        "draft",
        "output",
        "produce",
        "put",
        "compose",
        "prepare",
        "record",
        "keep",
        "dump",
        "download",
    ];
    const READING: &[&str] = &[
        "read", "open", "load", "analyze", "analyse", "parse", "review", "extract", "check",
        "examine", "inspect", "convert", "compare", "merge", "view", "scan", "import",
    ];
    let verb = |w: &str| {
        let is = |list: &[&str]| list.iter().any(|m| w.eq_ignore_ascii_case(m));
        if is(MAKING) {
            Some(true)
        } else if is(READING) {
            Some(false)
        } else {
            None
        }
    };
    clause
        .split(|c: char| !c.is_alphanumeric())
        .rev()
        .find_map(verb)
        .unwrap_or_else(|| {
            request
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| verb(w) == Some(true))
        })
}

/// Whether a path that follows `previous` is where a result goes: after `to`, `into` or `as`,
/// or after `in`, `at`, `on` or `under` in a request that makes something. A path after
/// `from` or `of`, or in a request that only reads, is read.
fn is_destination(previous: Option<&str>, makes: bool) -> bool {
    let Some(previous) = previous else {
        return false;
    };
    let previous = previous.trim_matches(|c: char| !c.is_alphanumeric());
    let is = |words: &[&str]| words.iter().any(|w| previous.eq_ignore_ascii_case(w));
    is(&["to", "into", "as"]) || (makes && is(&["in", "at", "on", "under"]))
}

/// The whitespace-separated tokens of `text`, with their byte offsets.
fn tokens_of(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_whitespace()
        .map(move |t| (t.as_ptr() as usize - text.as_ptr() as usize, t))
}

/// When `token` is a path, what its extension says it holds (nothing for one without a
/// known extension, `directory` for one without any).
fn file_kind(token: &str) -> Option<&'static [&'static str]> {
    let bytes = token.as_bytes();
    let rooted = token.starts_with('/') && token.len() > 1 && !token[1..].starts_with('/')
        || token.starts_with("~/")
        || token.starts_with("./")
        || token.starts_with("../")
        || (bytes.len() > 3 && bytes[0].is_ascii_alphabetic() && &bytes[1..3] == b":\\");
    let name = token.rsplit(['/', '\\']).next().unwrap_or(token);
    let extension = name
        .rsplit_once('.')
        .filter(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
        .map(|(_, ext)| ext.to_ascii_lowercase());
    let known = extension.as_deref().and_then(extension_kind);
    match (rooted, known, &extension) {
        (_, Some(kind), _) => Some(kind),
        (true, None, None) => Some(&["directory"]),
        (true, None, Some(_)) => Some(&[]),
        (false, None, _) => None,
    }
}

/// What a file with this extension holds, in the words tools use for it.
fn extension_kind(ext: &str) -> Option<&'static [&'static str]> {
    Some(match ext {
        "md" | "markdown" => &["markdown", "text"],
        "txt" | "log" => &["text"],
        "pdf" => &["pdf"],
        "doc" | "docx" | "odt" | "rtf" => &["word", "document"],
        "ppt" | "pptx" | "odp" | "key" => &["presentation", "slide"],
        "xls" | "xlsx" | "ods" => &["excel", "spreadsheet"],
        "csv" | "tsv" => &["csv", "table"],
        "json" | "yaml" | "yml" | "toml" | "xml" => &["data"],
        "html" | "htm" => &["html"],
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp" | "svg" => &["image"],
        "wav" | "mp3" | "flac" | "ogg" | "m4a" => &["audio"],
        "mp4" | "mov" | "mkv" | "avi" | "webm" => &["video"],
        "py" | "rs" | "ts" | "tsx" | "jsx" | "go" | "java" | "rb" | "cpp" | "sh" => &["code"],
        "zip" | "tar" | "gz" | "tgz" | "7z" => &["archive"],
        "bib" => &["reference"],
        _ => return None,
    })
}

/// Words that carry no meaning about which tool fits: English function words and the filler
/// of requests to an agent ("please", "I want to", "a tool that").
pub(super) fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

// Sorted, so that lookup is a binary search (a unit test keeps it sorted).
const STOPWORDS: &[&str] = &[
    "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
    "each", "either", "else", "etc", "for", "from", "further", "had", "has", "have", "having",
    "he", "help", "her", "here", "him", "his", "how", "if", "in", "into", "is", "it", "its",
    "just", "kindly", "let", "lets", "like", "me", "might", "more", "most", "must", "my", "need",
    "needs", "no", "nor", "not", "now", "of", "off", "on", "one", "only", "or", "other", "our",
    "ours", "out", "over", "own", "please", "same", "she", "should", "so", "some", "such", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through",
    "to", "too", "tool", "tools", "under", "until", "up", "us", "very", "via", "want", "wants",
    "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your", "yours",
];

/// A light English stemmer: plurals, `-ing`/`-ed`, a few derivational endings, a final `e`
/// and a doubled final consonant. Both the index and the query go through it, so it needs to
/// be consistent rather than linguistically right. Non-ASCII words are returned unchanged.
pub(super) fn stem(word: &str) -> String {
    let mut s = word.to_owned();
    if !word.is_ascii() || word.len() < 3 {
        return s;
    }
    if word.len() == 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        // `prs`, `ids`, `dbs`: a short plural.
        s.pop();
    } else if word.len() > 3 {
        plural(&mut s);
        verb_ending(&mut s);
        derivational(&mut s);
    }
    if s.len() > 2 && s.ends_with('e') && has_vowel(&s[..s.len() - 1]) {
        s.pop();
    }
    undouble(&mut s);
    s
}

fn has_vowel(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

/// Replaces `suffix` by `with` when what stays before it is at least `min` bytes long and
/// has a vowel. Returns whether it did.
fn replace(s: &mut String, suffix: &str, with: &str, min: usize) -> bool {
    let Some(stem) = s.strip_suffix(suffix) else {
        return false;
    };
    if stem.len() < min || !has_vowel(stem) {
        return false;
    }
    s.truncate(stem.len());
    s.push_str(with);
    true
}

fn plural(s: &mut String) {
    if replace(s, "ies", "y", 2) || replace(s, "sses", "ss", 1) {
        return;
    }
    for ending in ["xes", "ches", "shes", "zzes"] {
        if s.ends_with(ending) {
            s.truncate(s.len() - 2);
            return;
        }
    }
    if s.ends_with('s') && !["ss", "us", "is"].iter().any(|e| s.ends_with(e)) {
        s.pop();
    }
}

fn verb_ending(s: &mut String) {
    if s.ends_with("eed") {
        return;
    }
    let _ = replace(s, "ied", "y", 2) || replace(s, "ing", "", 2) || replace(s, "ed", "", 2);
}

fn derivational(s: &mut String) {
    let _ = replace(s, "ization", "ize", 3)
        || replace(s, "isation", "ize", 3)
        || replace(s, "ation", "ate", 3)
        || replace(s, "tion", "t", 3)
        || replace(s, "sion", "s", 3)
        || replace(s, "ment", "", 4)
        || replace(s, "ness", "", 4)
        || replace(s, "ity", "", 4)
        || replace(s, "able", "", 4)
        || replace(s, "ible", "", 4)
        || replace(s, "ly", "", 4);
}

/// `runn` → `run`, `committ` → `commit`; `ll`, `ss` and `zz` stay (`fill`, `pass`, `buzz`).
fn undouble(s: &mut String) {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 3
        && b[n - 1] == b[n - 2]
        && !matches!(b[n - 1], b'l' | b's' | b'z')
        && !has_vowel(&s[n - 1..])
    {
        s.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        words(text, |w| out.push(w.to_owned()));
        out
    }

    fn all_terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, |t| out.push(t));
        out
    }

    #[test]
    fn identifiers_split_every_way_tool_authors_write_them() {
        assert_eq!(all_words("read_text_file"), ["read", "text", "file"]);
        assert_eq!(all_words("get-tiny-image"), ["get", "tiny", "image"]);
        assert_eq!(all_words("fs.readFile"), ["fs", "read", "file"]);
        assert_eq!(
            all_words("HTTPServer v2Api"),
            ["http", "server", "v2", "api"]
        );
        assert_eq!(all_words("base64 S3"), ["base64", "s3"]);
        assert_eq!(all_words("Größe ÄNDERN"), ["größe", "ändern"]);
    }

    #[test]
    fn inflections_meet_at_one_stem() {
        let same = [
            ["file", "files", "filed"],
            ["create", "created", "creating"],
            ["delete", "deletes", "deletion"],
            ["query", "queries", "queried"],
            ["directory", "directories", "directory"],
            ["run", "running", "runs"],
            ["commit", "committed", "commits"],
            ["use", "used", "using"],
            ["match", "matches", "matching"],
            ["process", "processes", "processing"],
            ["setting", "settings", "set"],
            ["validate", "validation", "validated"],
            ["deploy", "deployment", "deployments"],
        ];
        for group in same {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.iter().all(|s| *s == stems[0]),
                "{group:?} → {stems:?}"
            );
        }
        for word in ["status", "analysis", "string", "need", "address", "fill"] {
            assert_eq!(stem(word), word);
        }
    }

    #[test]
    fn stopwords_and_single_letters_are_not_terms() {
        assert_eq!(
            all_terms("Please find me a tool for the files"),
            ["find", "fil"]
        );
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOPWORDS, "STOPWORDS must stay sorted");
    }

    #[test]
    fn quoted_words_are_told_apart() {
        let mut out = Vec::new();
        let q = "Commit the page's edits as 'Add tests' with `git` and \"more docs\" “smart quotes” 'open";
        query_terms(q, |t, quoted| out.push((t, quoted)));
        let quoted: Vec<&str> = out.iter().filter(|t| t.1).map(|t| t.0.as_str()).collect();
        let plain: Vec<&str> = out.iter().filter(|t| !t.1).map(|t| t.0.as_str()).collect();
        assert_eq!(
            quoted,
            ["ad", "test", "git", "doc", "smart", "quot", "open"]
        );
        assert_eq!(plain, ["commit", "pag", "edit"]);
    }

    #[test]
    fn paths_and_web_addresses_are_arguments_that_imply_their_tool() {
        let Implied {
            rest,
            words,
            arguments: tokens,
            made,
        } = implied("Save it to /root/markdown/cv.md, then open https://x.org/a?b=1 (see ./src).");
        assert!(
            made.is_empty(),
            "a plain kind is made by any writer: {made:?}"
        );
        assert_eq!(
            rest.split_whitespace().collect::<Vec<_>>(),
            ["Save", "it", "to", "then", "open", "(see"]
        );
        // Where the result goes implies a writer only: its words and its plain kind would lift
        // the tools that read markdown; the paths read from say what reads them.
        assert_eq!(
            words,
            [
                "write",
                "save",
                "url",
                "web",
                "page",
                "file",
                "path",
                "directory"
            ]
        );
        assert_eq!(tokens, ["https://x.org/a?b=1", "./src"]);
        // A destination whose kind names an application keeps it: a Word file needs a Word tool.
        assert_eq!(
            implied("save it as /root/word/cv.docx").words,
            ["word", "document", "write", "save"]
        );
        assert_eq!(
            implied("save it as /root/word/cv.docx").made,
            ["document", "word"]
        );
        assert!(
            implied("turn /root/a.docx into a PDF, save it to /root/b.docx")
                .made
                .is_empty()
        );
        assert_eq!(
            implied("save them into /root/papers/").words,
            ["write", "save"]
        );
        assert_eq!(
            implied("read /root/notes/a.md").words,
            ["file", "path", "markdown", "text"]
        );
        // Where a result goes is a file to write; a path read from, or in a request that only
        // reads, is not.
        let writes = |q: &str| implied(q).words.contains(&"write");
        assert!(writes("put the summary in /root/notes/a.md"));
        assert!(writes("export as ~/out.csv"));
        assert!(!writes("read the table under /root/excel/people.xlsx"));
        assert!(!writes("make a chart from /root/data.csv"));
        assert!(!writes("/root/a.md"));
        // The verb before each path decides which it is: read from, then written.
        let both = implied(
            "Read the sales data under /root/excel/sales.xlsx, plot it and save it in /root/figs/s.png",
        );
        assert_eq!(both.made, ["image"]);
        assert!(both.words.contains(&"excel") && both.words.contains(&"write"));
        assert_eq!(both.arguments, ["/root/excel/sales.xlsx"]);
        // A name with a known extension is a file; `Next.js`, `1/2` and `and/or` are not paths.
        assert_eq!(implied("merge report.pdf").words, ["file", "path", "pdf"]);
        assert!(implied("Next.js and/or 1/2 // x").words.is_empty());
        for odd in ["/", "./", "C:\\", "....", "/é/ü.ß", "http://"] {
            let _ = implied(odd);
        }
    }

    #[test]
    fn identifiers_are_told_from_words() {
        let mut found = Vec::new();
        identifiers(
            "Must come from `get-station-code-of-citys`, or search_cards; getStories (not fetch, \
             -x-, __init__, 2024-01-01, 获取get_now)",
            |id| found.push(id.to_owned()),
        );
        assert_eq!(
            found,
            [
                "get-station-code-of-citys",
                "search_cards",
                "getStories",
                "get_now"
            ]
        );
        for word in ["fetch", "search", "Search", "x_y", "12-34", "a-b"] {
            assert!(!is_identifier(word), "{word}");
        }
    }

    #[test]
    fn non_ascii_and_long_words_are_safe() {
        assert_eq!(stem("ändern"), "ändern");
        assert_eq!(stem("días"), "días");
        assert!(all_words(&"x".repeat(500)).is_empty());
    }

    proptest::proptest! {
        /// Any text, Chinese, kana and scripts mixed with Latin words, digits and punctuation,
        /// splits and is read for days and paths without a panic, and every word is non-empty.
        #[test]
        fn mixed_scripts_split_without_panicking(
            text in "([\\p{Han}\\p{Hiragana}\\p{Katakana}\\p{Hangul}]{0,4}[a-zA-Z0-9 .,/_-]{0,4}|\\PC{0,3}){0,10}"
        ) {
            let mut empty = false;
            words(&text, |w| empty |= w.is_empty());
            proptest::prop_assert!(!empty);
            terms(&text, |t| empty |= t.is_empty());
            proptest::prop_assert!(!empty);
            let _ = relative_day(&text);
            let _ = implied(&text);
            identifiers(&text, |id| empty |= !is_identifier(id));
            proptest::prop_assert!(!empty);
        }
    }

    #[test]
    fn a_day_relative_to_today_is_told_from_one_that_is_not() {
        for yes in [
            "train tickets for next Wednesday",
            "stay tomorrow for 3 days",
            "the last 24h of BTC",
            "sales in the past 3 days",
            "what happened yesterday?",
            "my income last month",
        ] {
            assert!(relative_day(yes), "{yes}");
        }
        for no in [
            "today's trending topics",
            "a 3 day trip",
            "the last page of the report",
            "next steps",
            "",
            "明天",
        ] {
            assert!(!relative_day(no), "{no}");
        }
    }

    #[test]
    fn chinese_splits_into_pairs_of_characters_and_other_words_stay_whole() {
        assert_eq!(
            all_words("获取微博热搜"),
            ["获取", "取微", "微博", "博热", "热搜"]
        );
        // A lone character is a word; Latin letters and digits beside Chinese are their own.
        assert_eq!(all_words("获取 36 氪"), ["获取", "36", "氪"]);
        assert_eq!(all_words("获取36氪热榜"), ["获取", "36", "氪热", "热榜"]);
        assert_eq!(all_words("get-weibo热搜"), ["get", "weibo", "热搜"]);
        assert_eq!(all_terms("氪"), ["氪"]);
        // Korean is written with spaces and splits as other words do.
        assert_eq!(all_words("파일 읽기"), ["파일", "읽기"]);
    }
}
