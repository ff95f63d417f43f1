//! Syntax colouring for the SQL editor and the read-only JSON/SQL views. syntect's parser
//! (never its themes) assigns TextMate scopes, which are mapped to the semantic [`Theme`] slots,
//! so a theme file alone decides every colour. The stock SQL grammar leaves many DuckDB words
//! unscoped (QUALIFY, PIVOT, NULLS LAST, `::`), so unscoped SQL text is run through a small
//! word lexer too. This module only computes styles: it never edits text, never blocks on
//! input larger than [`HIGHLIGHT_MAX_BYTES`] / [`HIGHLIGHT_MAX_LINES`] (the rest is plain), and
//! never splits a multibyte character. An editor keeps a [`LineCache`], so a keystroke
//! re-parses only the lines it changed (and those after whose starting state changed), and a
//! line longer than [`LONG_LINE_BYTES`] is never given to syntect at all.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

use crate::tui::theme::Theme;

/// Only this many bytes at the start of a text are highlighted; everything after is plain.
/// syntect needs roughly 0.2 s per MB of JSON in release builds and 1 s in debug builds, so
/// 64 KiB keeps a redraw of a 1 MB result in the tens of milliseconds at worst.
pub const HIGHLIGHT_MAX_BYTES: usize = 64 * 1024;
/// Only this many lines at the start of a text are highlighted; everything after is plain.
pub const HIGHLIGHT_MAX_LINES: usize = 2_000;

/// A line longer than this is never given to syntect, whose regexes cost far more than linear
/// time on one long line (a 7.5 KB one-line paste took minutes in a debug build): SQL gets a
/// small linear lexer instead (strings, comments, keywords, numbers), JSON stays plain, and
/// the parse state carries over it unchanged.
pub const LONG_LINE_BYTES: usize = 2_000;

/// Custom-highlight priority for syntax colours in the editor. tui-textarea-2 ranks its own
/// layers as selection 10, search 20, cursor 30, so syntax stays beneath all of them.
pub const SYNTAX_PRIORITY: u8 = 1;

/// The semantic class of a piece of text, before a theme gives it a style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Plain,
    /// A quoted SQL identifier: plain to look at, but never re-lexed for keywords.
    Identifier,
    Comment,
    Str,
    Number,
    Keyword,
    Operator,
    Function,
    Punctuation,
    /// A key of a JSON object.
    Key,
}

impl Class {
    fn style(self, theme: &Theme) -> Option<Style> {
        match self {
            Class::Plain | Class::Identifier => None,
            Class::Comment => Some(theme.comment),
            Class::Str => Some(theme.string),
            Class::Number => Some(theme.number),
            Class::Keyword => Some(theme.keyword),
            Class::Operator => Some(theme.operator),
            Class::Function | Class::Key => Some(theme.function),
            Class::Punctuation => Some(theme.punctuation),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Sql,
    Json,
}

/// Scope prefixes and the class each one means; compiled once.
struct ScopeRules {
    /// Delimiters that take the class of what they delimit (the quotes of a string).
    transparent: Vec<Scope>,
    /// Any of these anywhere in the stack makes the text a JSON key.
    key: Vec<Scope>,
    /// Checked per scope, innermost scope first; the first match wins.
    ordered: Vec<(Scope, Class)>,
}

impl ScopeRules {
    fn get() -> &'static ScopeRules {
        static RULES: OnceLock<ScopeRules> = OnceLock::new();
        RULES.get_or_init(|| {
            let scopes = |names: &[&str]| names.iter().filter_map(|n| Scope::new(n).ok()).collect();
            let ordered = [
                ("string.quoted.double.sql", Class::Identifier),
                ("string.quoted.other.backtick.sql", Class::Identifier),
                ("comment", Class::Comment),
                ("string", Class::Str),
                ("constant.numeric", Class::Number),
                ("constant.language", Class::Keyword),
                ("constant.boolean", Class::Keyword),
                ("keyword.operator", Class::Operator),
                ("keyword", Class::Keyword),
                ("storage", Class::Keyword),
                ("support.function", Class::Function),
                ("entity.name.function", Class::Function),
                ("punctuation", Class::Punctuation),
            ];
            ScopeRules {
                transparent: scopes(&[
                    "punctuation.definition.string",
                    "punctuation.definition.comment",
                ]),
                key: scopes(&[
                    "meta.structure.dictionary.key.json",
                    "meta.mapping.key",
                    "support.type.property-name",
                ]),
                ordered: ordered
                    .iter()
                    .filter_map(|(name, class)| Some((Scope::new(name).ok()?, *class)))
                    .collect(),
            }
        })
    }

    fn classify(&self, stack: &[Scope]) -> Class {
        let is_key = stack
            .iter()
            .any(|scope| self.key.iter().any(|key| key.is_prefix_of(*scope)));
        if is_key {
            return Class::Key;
        }
        for scope in stack.iter().rev() {
            if self.transparent.iter().any(|t| t.is_prefix_of(*scope)) {
                continue;
            }
            if let Some((_, class)) = self.ordered.iter().find(|(p, _)| p.is_prefix_of(*scope)) {
                return *class;
            }
        }
        Class::Plain
    }
}

fn syntax_set() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// Highlights SQL and JSON with the theme's slots. `new()` is cheap after its first call (the
/// syntax set is loaded once per process, ~1 ms), so create one wherever it is convenient.
/// syntect compiles each grammar's regexes lazily: the first SQL highlight costs ~30 ms in a
/// release build and ~300 ms in a debug build, so call [`Highlighter::warm_up`] once on a
/// background thread at startup.
#[derive(Clone, Copy)]
pub struct Highlighter {
    syntaxes: &'static SyntaxSet,
    sql: Option<&'static SyntaxReference>,
    json: Option<&'static SyntaxReference>,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter")
            .field("sql", &self.sql.is_some())
            .field("json", &self.json.is_some())
            .finish()
    }
}

impl Default for Highlighter {
    fn default() -> Highlighter {
        Highlighter::new()
    }
}

type ClassRanges = Vec<(Range<usize>, Class)>;

/// syntect's state between lines: the parser's and the scopes open.
type LineState = (ParseState, ScopeStack);

/// What one line parsed to from one starting state, and the state it left.
struct CachedLine {
    start: LineState,
    classes: ClassRanges,
    end: LineState,
}

/// One editor's highlighting remembered between frames, keyed by (line text, parse state at
/// the line's start): a line whose text and starting state are unchanged is not parsed again.
/// Only the lines of the latest pass are kept, so it never outgrows the text.
#[derive(Default)]
pub struct LineCache {
    lines: HashMap<String, Vec<CachedLine>>,
    /// Lines given to syntect so far (what tests read to prove a keystroke is cheap).
    pub parsed_lines: u64,
    /// Bytes given to syntect so far.
    pub parsed_bytes: u64,
}

impl std::fmt::Debug for LineCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineCache")
            .field("lines", &self.lines.len())
            .field("parsed_lines", &self.parsed_lines)
            .field("parsed_bytes", &self.parsed_bytes)
            .finish()
    }
}

impl Highlighter {
    pub fn new() -> Highlighter {
        let syntaxes = syntax_set();
        Highlighter {
            syntaxes,
            sql: syntaxes.find_syntax_by_name("SQL"),
            json: syntaxes.find_syntax_by_name("JSON"),
        }
    }

    /// Compiles the SQL and JSON grammars' regexes so the first real highlight is fast.
    pub fn warm_up(&self) {
        let sql = "SELECT count(*) AS n, 'x' FROM t WHERE a = 1.5 -- c\n/* b */ ORDER BY 1";
        let _ = self.classify(sql, Language::Sql, None);
        let _ = self.classify("{\"k\": [1, \"v\", true, null]}", Language::Json, None);
    }

    /// Per line of `text` (split on `\n`, as the editor holds it): the byte ranges within that
    /// line that have a style, in order and never overlapping. Bytes not covered are plain.
    /// Lines past the highlight cap get no ranges.
    pub fn sql_ranges(&self, text: &str, theme: &Theme) -> Vec<Vec<(Range<usize>, Style)>> {
        self.ranges(text, Language::Sql, theme, None)
    }

    fn ranges(
        &self,
        text: &str,
        language: Language,
        theme: &Theme,
        cache: Option<&mut LineCache>,
    ) -> Vec<Vec<(Range<usize>, Style)>> {
        self.classify(text, language, cache)
            .into_iter()
            .map(|line| {
                line.into_iter()
                    .filter_map(|(range, class)| Some((range, class.style(theme)?)))
                    .collect()
            })
            .collect()
    }

    /// Ready-to-draw lines for a read-only JSON view. Styled spans carry only their slot's
    /// style and plain text carries none, so draw them inside a block styled with `theme.base`.
    pub fn json_lines(&self, text: &str, theme: &Theme) -> Vec<Line<'static>> {
        self.lines(text, Language::Json, theme)
    }

    /// Replaces the editor's custom highlights with SQL colours. Call it after every edit and
    /// whenever the selection or the cursor row changes: syntax colours are cut out of the
    /// selection (tui-textarea-2 stacks overlapping highlights, so a token inside the selection
    /// would otherwise hide it), and tokens on the cursor row get the cursor-line style
    /// underneath so that row stays marked. Only lines `cache` has not seen with the same
    /// starting state are parsed; call it once per frame, not per key.
    pub fn apply_sql(
        &self,
        area: &mut tui_textarea::TextArea<'_>,
        theme: &Theme,
        cache: &mut LineCache,
    ) {
        self.apply(area, Language::Sql, theme, cache)
    }

    /// Replaces an editor's custom highlights with JSON colours (the palette's arguments), by
    /// the same rules as [`Highlighter::apply_sql`].
    pub fn apply_json(
        &self,
        area: &mut tui_textarea::TextArea<'_>,
        theme: &Theme,
        cache: &mut LineCache,
    ) {
        self.apply(area, Language::Json, theme, cache)
    }

    fn apply(
        &self,
        area: &mut tui_textarea::TextArea<'_>,
        language: Language,
        theme: &Theme,
        cache: &mut LineCache,
    ) {
        let text = area.lines().join("\n");
        let ranges = self.ranges(&text, language, theme, Some(cache));
        let selection = area.selection_range();
        let cursor_row = area.cursor().0;
        let cursor_line_style = area.cursor_line_style();
        area.clear_custom_highlight();
        for (row, (line, tokens)) in text.split('\n').zip(ranges).enumerate() {
            let selected = selection.and_then(|sel| selected_bytes(line, row, sel));
            for (range, style) in tokens {
                let style = if row == cursor_row {
                    cursor_line_style.patch(style)
                } else {
                    style
                };
                for piece in subtract(range, selected.clone()) {
                    area.custom_highlight(
                        ((row, piece.start), (row, piece.end)),
                        style,
                        SYNTAX_PRIORITY,
                    );
                }
            }
        }
    }

    fn lines(&self, text: &str, language: Language, theme: &Theme) -> Vec<Line<'static>> {
        let classes = self.classify(text, language, None);
        text.split('\n')
            .zip(classes)
            .map(|(line, tokens)| {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let mut spans = Vec::with_capacity(tokens.len() * 2 + 1);
                let mut at = 0;
                for (range, class) in tokens {
                    let start = range.start.min(line.len());
                    let end = range.end.min(line.len());
                    if start >= end {
                        continue;
                    }
                    if at < start {
                        spans.push(Span::raw(line[at..start].to_string()));
                    }
                    let piece = line[start..end].to_string();
                    spans.push(match class.style(theme) {
                        Some(style) => Span::styled(piece, style),
                        None => Span::raw(piece),
                    });
                    at = end;
                }
                if at < line.len() {
                    spans.push(Span::raw(line[at..].to_string()));
                }
                Line::from(spans)
            })
            .collect()
    }

    /// One entry per `\n`-separated line of `text`: non-overlapping, ordered, merged ranges
    /// with a class other than plain. Falls back to plain on any parser error. With a
    /// `cache`, a line seen before with the same starting state is taken from it.
    fn classify(
        &self,
        text: &str,
        language: Language,
        mut cache: Option<&mut LineCache>,
    ) -> Vec<ClassRanges> {
        let mut out: Vec<ClassRanges> = Vec::new();
        let syntax = match language {
            Language::Sql => self.sql,
            Language::Json => self.json,
        };
        let Some(syntax) = syntax else {
            return text.split('\n').map(|_| Vec::new()).collect();
        };
        let rules = ScopeRules::get();
        let mut state = ParseState::new(syntax);
        let mut stack = ScopeStack::new();
        let mut budget = HIGHLIGHT_MAX_BYTES;
        let mut highlighting = true;
        let mut fed = String::new();
        let mut kept: HashMap<String, Vec<CachedLine>> = HashMap::new();
        for (index, line) in text.split('\n').enumerate() {
            if highlighting && (index >= HIGHLIGHT_MAX_LINES || line.len() + 1 > budget) {
                highlighting = false;
            }
            if !highlighting {
                out.push(Vec::new());
                continue;
            }
            budget -= line.len() + 1;
            if line.len() > LONG_LINE_BYTES {
                out.push(match language {
                    Language::Sql => merge(lex_long_sql_line(line)),
                    Language::Json => Vec::new(),
                });
                continue;
            }
            if let Some(cache) = cache.as_deref_mut() {
                let hit = cache.lines.get_mut(line).and_then(|seen| {
                    let at = seen
                        .iter()
                        .position(|c| c.start.0 == state && c.start.1 == stack)?;
                    Some(seen.swap_remove(at))
                });
                if let Some(hit) = hit {
                    (state, stack) = hit.end.clone();
                    out.push(hit.classes.clone());
                    kept.entry(line.to_owned()).or_default().push(hit);
                    continue;
                }
                cache.parsed_lines += 1;
                cache.parsed_bytes += line.len() as u64;
            }
            let start = cache.is_some().then(|| (state.clone(), stack.clone()));
            // The grammars were written for lines that end in a newline.
            fed.clear();
            fed.push_str(line);
            fed.push('\n');
            match scoped_line(
                &fed,
                line.len(),
                &mut state,
                &mut stack,
                self.syntaxes,
                rules,
            ) {
                Some(segments) => {
                    let segments = if language == Language::Sql {
                        lex_plain_sql(line, segments)
                    } else {
                        segments
                    };
                    let classes = merge(segments);
                    if let Some(start) = start {
                        kept.entry(line.to_owned()).or_default().push(CachedLine {
                            start,
                            classes: classes.clone(),
                            end: (state.clone(), stack.clone()),
                        });
                    }
                    out.push(classes);
                }
                None => {
                    highlighting = false;
                    out.push(Vec::new());
                }
            }
        }
        if let Some(cache) = cache {
            cache.lines = kept;
        }
        out
    }
}

/// The classes syntect's scopes give one line, covering `0..visible` without gaps.
fn scoped_line(
    fed: &str,
    visible: usize,
    state: &mut ParseState,
    stack: &mut ScopeStack,
    syntaxes: &SyntaxSet,
    rules: &ScopeRules,
) -> Option<ClassRanges> {
    let ops = state.parse_line(fed, syntaxes).ok()?;
    let mut segments = Vec::with_capacity(ops.len() + 1);
    let mut at = 0;
    for (offset, op) in ops {
        let end = offset.min(visible);
        if at < end {
            segments.push((at..end, rules.classify(stack.as_slice())));
            at = end;
        }
        stack.apply(&op).ok()?;
    }
    if at < visible {
        segments.push((at..visible, rules.classify(stack.as_slice())));
    }
    Some(segments)
}

/// Joins touching ranges of the same class and drops plain ones.
fn merge(segments: ClassRanges) -> ClassRanges {
    let mut out: ClassRanges = Vec::with_capacity(segments.len());
    for (range, class) in segments {
        if range.is_empty() || matches!(class, Class::Plain | Class::Identifier) {
            continue;
        }
        match out.last_mut() {
            Some((last, last_class)) if *last_class == class && last.end == range.start => {
                last.end = range.end;
            }
            _ => out.push((range, class)),
        }
    }
    out
}

const SQL_OPERATOR_CHARS: &str = "+-*/%<>=!|&~^:@";
const SQL_PUNCTUATION_CHARS: &str = "(),;.[]{}";

/// Re-lexes the plain segments of one SQL line: DuckDB keywords, function calls (a word right
/// before `(`), numbers, operators and punctuation. Scoped segments pass through untouched.
fn lex_plain_sql(line: &str, segments: ClassRanges) -> ClassRanges {
    let mut out = Vec::with_capacity(segments.len() * 2);
    for (range, class) in segments {
        if class == Class::Plain {
            lex_gap(line, range, &mut out);
        } else {
            out.push((range, class));
        }
    }
    out
}

/// A line too long for syntect, in one linear pass: quoted strings, quoted identifiers and
/// comments by their delimiters (one left open runs to the end of the line), the rest by the
/// word lexer.
fn lex_long_sql_line(line: &str) -> ClassRanges {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut gap_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let (end, class) = match bytes[i] {
            quote @ (b'\'' | b'"') => {
                let mut j = i + 1;
                while j < bytes.len() {
                    if bytes[j] == quote {
                        // A doubled quote is one quote inside the string.
                        if bytes.get(j + 1) == Some(&quote) {
                            j += 2;
                            continue;
                        }
                        j += 1;
                        break;
                    }
                    j += 1;
                }
                let class = if quote == b'\'' {
                    Class::Str
                } else {
                    Class::Identifier
                };
                (j.min(bytes.len()), class)
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => (bytes.len(), Class::Comment),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = line[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |at| i + 2 + at + 2);
                (end, Class::Comment)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        // Every delimiter is ASCII, so `i` and `end` are character boundaries.
        lex_gap(line, gap_start..i, &mut out);
        out.push((i..end, class));
        i = end;
        gap_start = end;
    }
    lex_gap(line, gap_start..bytes.len(), &mut out);
    out
}

fn lex_gap(line: &str, gap: Range<usize>, out: &mut ClassRanges) {
    let bytes = line.as_bytes();
    let before = |at: usize| at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
    let mut chars = line[gap.clone()].char_indices().peekable();
    while let Some((offset, ch)) = chars.next() {
        let start = gap.start + offset;
        let mut end = start + ch.len_utf8();
        let class = if ch.is_whitespace() {
            continue;
        } else if ch.is_ascii_digit()
            || (ch == '.'
                && bytes.get(end).is_some_and(u8::is_ascii_digit)
                && !before(start).is_some_and(|b| b.is_ascii_alphabetic() || b == b'_'))
        {
            let mut previous = ch;
            while let Some(&(next_offset, next)) = chars.peek() {
                let exponent_sign = matches!(next, '+' | '-') && matches!(previous, 'e' | 'E');
                if !(next.is_ascii_alphanumeric() || next == '.' || next == '_' || exponent_sign) {
                    break;
                }
                previous = next;
                end = gap.start + next_offset + next.len_utf8();
                chars.next();
            }
            Class::Number
        } else if ch.is_alphabetic() || ch == '_' {
            while let Some(&(next_offset, next)) = chars.peek() {
                if !(next.is_alphanumeric() || next == '_') {
                    break;
                }
                end = gap.start + next_offset + next.len_utf8();
                chars.next();
            }
            let word = &line[start..end];
            if before(start) == Some(b'.') {
                // A column after `t.` is a name, whatever it is called.
                Class::Plain
            } else if super::sql::is_keyword(word) {
                Class::Keyword
            } else if bytes.get(end) == Some(&b'(') {
                Class::Function
            } else {
                Class::Plain
            }
        } else if SQL_OPERATOR_CHARS.contains(ch) {
            while let Some(&(next_offset, next)) = chars.peek() {
                if !SQL_OPERATOR_CHARS.contains(next) {
                    break;
                }
                end = gap.start + next_offset + next.len_utf8();
                chars.next();
            }
            Class::Operator
        } else if SQL_PUNCTUATION_CHARS.contains(ch) {
            Class::Punctuation
        } else {
            Class::Plain
        };
        out.push((start..end, class));
    }
}

/// The bytes of `line` (row `row`) inside a selection given in character columns.
fn selected_bytes(
    line: &str,
    row: usize,
    ((start_row, start_col), (end_row, end_col)): ((usize, usize), (usize, usize)),
) -> Option<Range<usize>> {
    if row < start_row || row > end_row {
        return None;
    }
    let byte_at = |col: usize| line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
    let start = if row == start_row {
        byte_at(start_col)
    } else {
        0
    };
    let end = if row == end_row {
        byte_at(end_col)
    } else {
        line.len()
    };
    (start < end).then_some(start..end)
}

/// `range` minus `cut`: zero, one or two pieces.
fn subtract(range: Range<usize>, cut: Option<Range<usize>>) -> Vec<Range<usize>> {
    let Some(cut) = cut else {
        return vec![range];
    };
    if cut.end <= range.start || cut.start >= range.end {
        return vec![range];
    }
    [range.start..cut.start, cut.end..range.end]
        .into_iter()
        .filter(|piece| !piece.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::builtin("dark").expect("dark theme")
    }

    /// The text of each styled range on `line`, with its style.
    fn styled<'a>(text: &'a str, ranges: &[(Range<usize>, Style)]) -> Vec<(&'a str, Style)> {
        ranges
            .iter()
            .map(|(range, style)| (&text[range.clone()], *style))
            .collect()
    }

    fn style_of(text: &str, ranges: &[(Range<usize>, Style)], token: &str) -> Option<Style> {
        styled(text, ranges)
            .into_iter()
            .find(|(piece, _)| *piece == token)
            .map(|(_, style)| style)
    }

    #[test]
    fn sql_gets_keyword_string_number_and_comment_ranges() {
        let theme = theme();
        let sql = "SELECT name, 42 FROM users WHERE note = 'it''s' -- why\nqualify x > 3.5";
        let lines = Highlighter::new().sql_ranges(sql, &theme);
        assert_eq!(lines.len(), 2);
        let first = sql.split('\n').next().expect("line");
        let ranges = &lines[0];
        assert_eq!(ranges[0], (0..6, theme.keyword), "SELECT");
        assert_eq!(style_of(first, ranges, "FROM"), Some(theme.keyword));
        assert_eq!(style_of(first, ranges, "42"), Some(theme.number));
        assert_eq!(style_of(first, ranges, "'it''s'"), Some(theme.string));
        assert_eq!(style_of(first, ranges, "-- why"), Some(theme.comment));
        assert_eq!(style_of(first, ranges, "="), Some(theme.operator));
        assert_eq!(
            style_of(first, ranges, "name"),
            None,
            "identifiers stay plain"
        );

        let second = "qualify x > 3.5";
        assert_eq!(style_of(second, &lines[1], "qualify"), Some(theme.keyword));
        assert_eq!(style_of(second, &lines[1], "3.5"), Some(theme.number));
    }

    #[test]
    fn sql_ranges_are_ordered_and_disjoint() {
        let sql = "select a.\"order\", count(*)::BIGINT, row_number() over () from t; /* x\n y */ select 1";
        for line in Highlighter::new().sql_ranges(sql, &theme()) {
            for pair in line.windows(2) {
                assert!(pair[0].0.end <= pair[1].0.start, "{pair:?}");
            }
        }
    }

    #[test]
    fn sql_functions_quoted_identifiers_and_block_comments() {
        let theme = theme();
        let sql = "select row_number() over (), \"select\" from t /* a\nb */ where true";
        let lines = Highlighter::new().sql_ranges(sql, &theme);
        let (first, second) = sql.split_once('\n').expect("two lines");
        assert_eq!(
            style_of(first, &lines[0], "row_number"),
            Some(theme.function)
        );
        assert_eq!(style_of(first, &lines[0], "over"), Some(theme.keyword));
        assert_eq!(
            style_of(first, &lines[0], "\"select\""),
            None,
            "a quoted identifier is a name, not a string or keyword"
        );
        assert_eq!(style_of(first, &lines[0], "/* a"), Some(theme.comment));
        // The comment's state carries over to the next line.
        assert_eq!(style_of(second, &lines[1], "b */"), Some(theme.comment));
        assert_eq!(style_of(second, &lines[1], "true"), Some(theme.keyword));
    }

    #[test]
    fn json_keys_and_strings_differ() {
        let theme = theme();
        assert_ne!(
            theme.function, theme.string,
            "the dark theme must tell them apart"
        );
        let lines = Highlighter::new().json_lines(
            "{\n  \"name\": \"loom\",\n  \"n\": 12.5,\n  \"ok\": null\n}",
            &theme,
        );
        assert_eq!(lines.len(), 5);
        let span = |line: usize, text: &str| {
            lines[line]
                .spans
                .iter()
                .find(|span| span.content == text)
                .map(|span| span.style)
        };
        assert_eq!(span(1, "\"name\""), Some(theme.function));
        assert_eq!(span(1, "\"loom\""), Some(theme.string));
        assert_eq!(span(2, "12.5"), Some(theme.number));
        assert_eq!(span(3, "null"), Some(theme.keyword));
        assert_eq!(span(1, ":"), Some(theme.punctuation));
        let rendered: String = lines[1].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(rendered, "  \"name\": \"loom\",");
    }

    #[test]
    fn multibyte_text_is_never_split() {
        let theme = theme();
        let sql = "SELECT 'héllo wörld ✓' AS 名前, naïve_ß FROM 表 -- コメント";
        let lines = Highlighter::new().sql_ranges(sql, &theme);
        for (range, _) in &lines[0] {
            assert!(sql.is_char_boundary(range.start), "{range:?}");
            assert!(sql.is_char_boundary(range.end), "{range:?}");
        }
        assert_eq!(
            style_of(sql, &lines[0], "'héllo wörld ✓'"),
            Some(theme.string)
        );
        assert_eq!(style_of(sql, &lines[0], "-- コメント"), Some(theme.comment));

        let json = "{\"ключ\": \"значение ✓\"}";
        let rendered: String = Highlighter::new()
            .json_lines(json, &theme)
            .iter()
            .flat_map(|line| line.spans.iter().map(|s| s.content.to_string()))
            .collect();
        assert_eq!(rendered, json);
    }

    #[test]
    fn huge_json_is_capped_and_rendered_in_full() {
        let theme = theme();
        let row = "  {\"id\": 1234567, \"name\": \"some user name\", \"active\": true},\n";
        let text = format!("[\n{}]", row.repeat(1024 * 1024 / row.len()));
        let lines = Highlighter::new().json_lines(&text, &theme);
        assert_eq!(lines.len(), text.split('\n').count(), "every line is drawn");
        assert!(lines[1].spans.len() > 1, "the start is highlighted");
        let last_row = &lines[lines.len() - 2];
        assert_eq!(last_row.spans.len(), 1, "past the cap lines are plain");
        assert_eq!(last_row.spans[0].style, Style::default());
        assert_eq!(last_row.spans[0].content, row.trim_end_matches('\n'));
    }

    #[test]
    fn drawn_lines_round_trip_text() {
        let json = "{\r\n\"a\": 1\n}\n";
        let lines = Highlighter::new().json_lines(json, &theme());
        let texts: Vec<String> = lines
            .iter()
            .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(texts, ["{", "\"a\": 1", "}", ""]);
    }

    #[test]
    fn apply_sql_highlights_a_textarea_and_spares_the_selection() {
        use ratatui::Terminal;
        use ratatui::backend::TestBackend;
        use tui_textarea::{CursorMove, TextArea};

        let theme = theme();
        let mut area = TextArea::from(["SELECT 1", "FROM t"]);
        area.set_cursor_line_style(Style::default());
        area.move_cursor(CursorMove::Bottom);
        let highlighter = Highlighter::new();
        let mut cache = LineCache::default();
        highlighter.apply_sql(&mut area, &theme, &mut cache);

        let mut terminal = Terminal::new(TestBackend::new(20, 2)).expect("test terminal");
        terminal
            .draw(|frame| frame.render_widget(&area, frame.area()))
            .expect("draw");
        let buffer = terminal.backend().buffer().clone();
        assert_eq!(buffer[(0, 0)].fg, theme.keyword.fg.expect("keyword fg"));
        assert_eq!(buffer[(7, 0)].fg, theme.number.fg.expect("number fg"));
        assert_eq!(
            buffer[(1, 1)].fg,
            theme.keyword.fg.expect("keyword fg"),
            "FROM"
        );

        // Select "SEL" on the first row: those cells show the selection, the rest of the
        // keyword keeps its colour.
        area.move_cursor(CursorMove::Jump(0, 0));
        area.start_selection();
        area.move_cursor(CursorMove::Jump(0, 3));
        highlighter.apply_sql(&mut area, &theme, &mut cache);
        terminal
            .draw(|frame| frame.render_widget(&area, frame.area()))
            .expect("draw");
        let buffer = terminal.backend().buffer().clone();
        assert_ne!(buffer[(0, 0)].fg, theme.keyword.fg.expect("keyword fg"));
        assert_eq!(buffer[(4, 0)].fg, theme.keyword.fg.expect("keyword fg"));
    }

    #[test]
    fn a_long_line_is_lexed_without_syntect() {
        let theme = theme();
        let filler = "1, ".repeat(LONG_LINE_BYTES);
        let sql = format!("SELECT 'it''s -- no' AS \"from\", x IN ({filler}2) /* c */ -- tail");
        let lines = Highlighter::new().sql_ranges(&sql, &theme);
        let ranges = &lines[0];
        assert_eq!(style_of(&sql, ranges, "SELECT"), Some(theme.keyword));
        assert_eq!(style_of(&sql, ranges, "'it''s -- no'"), Some(theme.string));
        assert_eq!(style_of(&sql, ranges, "\"from\""), None, "a name");
        assert_eq!(style_of(&sql, ranges, "IN"), Some(theme.keyword));
        assert_eq!(style_of(&sql, ranges, "/* c */"), Some(theme.comment));
        assert_eq!(style_of(&sql, ranges, "-- tail"), Some(theme.comment));
        assert_eq!(style_of(&sql, ranges, "2"), Some(theme.number));
    }

    #[test]
    fn subtract_and_selection_bytes() {
        assert_eq!(subtract(2..8, None), vec![2..8]);
        assert_eq!(subtract(2..8, Some(4..6)), vec![2..4, 6..8]);
        assert_eq!(subtract(2..8, Some(0..3)), vec![3..8]);
        assert_eq!(subtract(2..8, Some(0..9)), Vec::<Range<usize>>::new());
        assert_eq!(subtract(2..8, Some(8..9)), vec![2..8]);
        // Columns count characters; ranges count bytes.
        assert_eq!(selected_bytes("héllo", 0, ((0, 1), (0, 3))), Some(1..4));
        assert_eq!(selected_bytes("héllo", 1, ((0, 1), (2, 0))), Some(0..6));
        assert_eq!(selected_bytes("héllo", 3, ((0, 1), (2, 0))), None);
    }
}
