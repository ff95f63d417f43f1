//! The pager for parked text: the whole text with line numbers, scrolled like the other views,
//! `/` searches by the rules of `loom_fetch` (the engine finds the lines, so both agree), `n` and
//! `N` jump between matches, `y` copies the text. The `Pager` owns its lines, scroll and search;
//! asking the engine for the text or its matches is the app's. It never draws.

use super::*;

/// A parked text open in the pager.
pub struct Pager {
    pub key: String,
    /// What the title calls it.
    pub title: String,
    /// Text the workbench already has (a cell): searched here, by the same rules.
    pub local: bool,
    /// `None` while the text loads.
    pub lines: Option<Vec<String>>,
    pub top: usize,
    /// The pattern being typed after `/`.
    pub typing: Option<LineInput>,
    /// The last pattern searched and the 0-based lines it matched.
    pub pattern: Option<String>,
    pub matches: Vec<u64>,
    /// Which match the view is on.
    pub current: Option<usize>,
    pub error: Option<String>,
    /// Rows on screen, as last drawn.
    pub rows: std::cell::Cell<usize>,
    /// The server whose log this is (lines arrive live), if it is one.
    pub log_of: Option<String>,
    /// A log keeps its last line in view as lines arrive (`f` toggles).
    pub follow: bool,
}

impl Pager {
    /// A pager at the top of `lines` (`None` while they load), not searched yet.
    pub(super) fn new(key: String, title: String, lines: Option<Vec<String>>) -> Pager {
        Pager {
            local: lines.is_some(),
            key,
            title,
            lines,
            top: 0,
            typing: None,
            pattern: None,
            matches: Vec::new(),
            current: None,
            error: None,
            rows: std::cell::Cell::new(10),
            log_of: None,
            follow: false,
        }
    }

    /// While following, the view moves so that the last line shows.
    pub(super) fn keep_at_end(&mut self) {
        if self.follow {
            let n = self.lines.as_ref().map_or(0, Vec::len);
            self.top = n.saturating_sub(self.rows.get().max(1));
        }
    }

    /// Scrolls by what `a` asks; it stops with the last line at the bottom.
    pub(super) fn scroll(&mut self, a: Action) {
        let rows = self.rows.get().max(1);
        let n = self.lines.as_ref().map_or(0, Vec::len);
        let max = n.saturating_sub(rows) as i64;
        let delta: i64 = match a {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -(rows as i64),
            Action::PageDown => rows as i64,
            Action::Top => i64::MIN / 2,
            _ => i64::MAX / 2,
        };
        self.top = (self.top as i64).saturating_add(delta).clamp(0, max.max(0)) as usize;
        // Scrolling away from the end stops following; reaching it again resumes.
        if self.log_of.is_some() {
            self.follow = self.top as i64 >= max;
        }
    }

    /// `/`: starts typing a pattern.
    pub(super) fn start_search(&mut self) {
        self.typing = Some(LineInput::default());
    }

    /// Searches text held here by the rules of loom_fetch's pattern: a regular expression,
    /// any case.
    fn search_here(&mut self, pattern: &str) {
        match regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(10 << 20)
            .build()
        {
            Ok(re) => {
                let matches = self
                    .lines
                    .iter()
                    .flatten()
                    .enumerate()
                    .filter(|(_, l)| re.is_match(l))
                    .map(|(i, _)| i as u64)
                    .collect();
                self.matched(matches);
            }
            Err(e) => self.error = Some(format!("invalid pattern: {e}")),
        }
    }

    /// The lines the search matched: the view goes to the first.
    pub(super) fn matched(&mut self, lines: Vec<u64>) {
        self.matches = lines;
        self.current = None;
        if !self.matches.is_empty() {
            self.jump(true);
        }
    }

    /// `n` / `N`: the next or previous match, wrapping; the view puts it near the top.
    pub(super) fn jump(&mut self, forward: bool) {
        if self.matches.is_empty() {
            return;
        }
        let n = self.matches.len();
        let next = match (self.current, forward) {
            (None, _) => 0,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        self.current = Some(next);
        self.top = (self.matches[next] as usize).saturating_sub(2);
    }
}

impl App {
    pub(super) fn open_pager(&mut self, key: String) {
        self.send(
            Purpose::BlobText(key.clone()),
            Request::BlobText { key: key.clone() },
        );
        let title = format!("parked text {key}");
        self.overlay = Overlay::Pager(Box::new(Pager::new(key, title, None)));
    }

    /// Opens text the workbench already holds (a cell's value) in the pager.
    pub(super) fn open_text(&mut self, title: String, text: &str) {
        let lines = text.lines().map(str::to_owned).collect();
        self.overlay = Overlay::Pager(Box::new(Pager::new(String::new(), title, Some(lines))));
    }

    pub(super) fn pager_mut(&mut self) -> Option<&mut Pager> {
        match &mut self.overlay {
            Overlay::Pager(p) => Some(p),
            _ => None,
        }
    }

    /// `enter` after `/`: searches text held here, or asks the engine for the matching lines.
    pub(super) fn pager_run_search(&mut self) {
        let Some(p) = self.pager_mut() else { return };
        let Some(pattern) = p.typing.take().map(LineInput::into_string) else {
            return;
        };
        if pattern.is_empty() {
            return;
        }
        p.pattern = Some(pattern.clone());
        p.error = None;
        if p.local {
            p.search_here(&pattern);
            return;
        }
        let key = p.key.clone();
        self.send(
            Purpose::BlobSearch(key.clone()),
            Request::BlobSearch { key, pattern },
        );
    }

    pub(super) fn pager_text(&self) -> Option<String> {
        match &self.overlay {
            Overlay::Pager(p) => p.lines.as_ref().map(|l| l.join("\n")),
            _ => None,
        }
    }
}
