//! Semantic colour slots for the workbench: the [`Theme`] struct, the two built-in themes
//! (`themes/dark.toml`, `themes/light.toml`, embedded at compile time), user theme files that
//! extend a built-in, and the `[theme]` overrides from loom.toml. Draw code asks for a slot
//! (`theme.keyword`, `theme.selection`), never for a literal colour, so a theme file restyles
//! every pane. This module only parses and holds styles: it never draws, and a bad theme file
//! is an error naming the file, slot and value — never a panic and never a silent default.

use std::fmt;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use toml::{Table, Value};

const DARK_TOML: &str = include_str!("../../themes/dark.toml");
const LIGHT_TOML: &str = include_str!("../../themes/light.toml");

/// Names the built-in themes answer to, for error messages and `--theme` help.
pub const BUILTIN_THEMES: &[&str] = &["dark", "light"];

/// Declares the slots once, so the struct, the list of names and the by-name lookup can never
/// disagree.
macro_rules! theme_slots {
    ($($(#[doc = $doc:literal])+ $name:ident,)+) => {
        /// One style per semantic slot. A slot carries only what its theme file set (often just
        /// a foreground), so it can be patched over the pane's `base` style.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Theme {
            $($(#[doc = $doc])+ pub $name: Style,)+
        }

        impl Theme {
            /// Every slot name, in declaration order: the keys a theme's `[slots]` table accepts.
            pub const SLOT_NAMES: &'static [&'static str] = &[$(stringify!($name)),+];

            /// The style of the slot called `name`, if there is such a slot.
            pub fn slot(&self, name: &str) -> Option<Style> {
                match name {
                    $(stringify!($name) => Some(self.$name),)+
                    _ => None,
                }
            }

            fn slot_mut(&mut self, name: &str) -> Option<&mut Style> {
                match name {
                    $(stringify!($name) => Some(&mut self.$name),)+
                    _ => None,
                }
            }

            /// A theme with every slot unstyled; the starting point of a built-in file.
            fn blank() -> Theme {
                Theme { $($name: Style::new(),)+ }
            }
        }
    };
}

theme_slots! {
    /// Foreground and background of pane contents.
    base,
    /// Secondary text: hints, counts, timestamps.
    muted,
    /// Border of an unfocused pane.
    border,
    /// Border of the focused pane.
    border_focused,
    /// Title of an unfocused pane.
    title,
    /// Title of the focused pane.
    title_focused,
    /// The selected row in a list, tree or grid.
    selection,
    /// Column headers of the results grid and tables.
    header,
    /// NULL cells in the grid.
    null,
    /// Numbers: grid cells and numeric literals in SQL and JSON.
    number,
    /// String literals in SQL and JSON.
    string,
    /// SQL keywords, types and the literals NULL, TRUE, FALSE.
    keyword,
    /// Comments in SQL.
    comment,
    /// Function names in SQL; keys of JSON objects.
    function,
    /// Operators such as `=`, `||`, `::`.
    operator,
    /// Brackets, commas, semicolons, JSON structure.
    punctuation,
    /// Errors: failed calls, query errors.
    error,
    /// Warnings: degraded servers, capped results.
    warning,
    /// Success: finished calls, healthy servers.
    success,
    /// Neutral notices.
    info,
    /// Emphasis that draws the eye: counts that matter, the active tab.
    accent,
    /// Key names in the footer and the help screen.
    key,
    /// The status line.
    status,
    /// Gauges: the foreground is the filled part, the background the rest.
    gauge,
    /// Bars and sparklines in the describe view.
    chart,
}

impl Default for Theme {
    /// The built-in dark theme.
    fn default() -> Theme {
        // The builtin is embedded and covered by tests; the blank fallback keeps this total.
        Theme::builtin("dark").unwrap_or_else(Theme::blank)
    }
}

/// What went wrong while reading a theme, with enough context to fix the file.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("unknown theme `{spec}`: expected `dark`, `light` or a path to a .toml theme file")]
    UnknownTheme { spec: String },
    #[error("cannot read theme file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error("{file}: unknown key `{key}`; a theme file has `extends` and a [slots] table")]
    UnknownKey { file: String, key: String },
    #[error("{file}: `extends = {value}` is not a built-in theme; use \"dark\" or \"light\"")]
    BadExtends { file: String, value: String },
    #[error("{file}: unknown slot `{slot}`; known slots: {known}")]
    UnknownSlot {
        file: String,
        slot: String,
        known: String,
    },
    #[error(
        "{file}: slot `{slot}`: bad colour {value}; expected a colour name (red, lightblue, \
         darkgray, reset, …), \"#rrggbb\" or an index 0-255"
    )]
    BadColor {
        file: String,
        slot: String,
        value: String,
    },
    #[error("{file}: slot `{slot}`: bad value {value}; {expected}")]
    BadValue {
        file: String,
        slot: String,
        value: String,
        expected: String,
    },
}

/// Where slots came from, for error messages.
struct Origin<'a>(&'a str);

impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Origin<'_> {
    fn invalid(&self, message: impl Into<String>) -> ThemeError {
        ThemeError::Invalid {
            file: self.to_string(),
            message: message.into(),
        }
    }

    fn unknown_slot(&self, slot: &str) -> ThemeError {
        ThemeError::UnknownSlot {
            file: self.to_string(),
            slot: slot.to_string(),
            known: Theme::SLOT_NAMES.join(", "),
        }
    }

    fn bad_color(&self, slot: &str, value: &Value) -> ThemeError {
        ThemeError::BadColor {
            file: self.to_string(),
            slot: slot.to_string(),
            value: value.to_string(),
        }
    }

    fn bad_value(&self, slot: &str, value: &Value, expected: &str) -> ThemeError {
        ThemeError::BadValue {
            file: self.to_string(),
            slot: slot.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }
}

impl Theme {
    /// The built-in theme called `name` (`"dark"` or `"light"`).
    pub fn builtin(name: &str) -> Option<Theme> {
        let text = builtin_text(name)?;
        let origin = format!("built-in theme `{name}`");
        let file = parse_file(text, &Origin(&origin)).ok()?;
        Theme::blank()
            .apply_slots(&file.slots, &Origin(&origin))
            .ok()
    }

    /// `spec` is `dark`, `light`, or a path to a TOML theme file. A file may say
    /// `extends = "light"` (default `"dark"`) and set only the slots it changes; a relative path
    /// is relative to the current directory.
    pub fn load(spec: &str) -> Result<Theme, ThemeError> {
        if let Some(theme) = Theme::builtin(spec) {
            return Ok(theme);
        }
        let text = match std::fs::read_to_string(spec) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound && !looks_like_path(spec) => {
                return Err(ThemeError::UnknownTheme {
                    spec: spec.to_string(),
                });
            }
            Err(source) => {
                return Err(ThemeError::Read {
                    path: spec.to_string(),
                    source,
                });
            }
        };
        Theme::from_toml(&text, spec)
    }

    /// Parses a user theme file's text; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Theme, ThemeError> {
        let origin = Origin(file);
        let parsed = parse_file(text, &origin)?;
        let base_name = parsed.extends.as_deref().unwrap_or("dark");
        let base = Theme::builtin(base_name).ok_or_else(|| ThemeError::BadExtends {
            file: file.to_string(),
            value: format!("\"{base_name}\""),
        })?;
        base.apply_slots(&parsed.slots, &origin)
    }

    /// Applies `[theme]` overrides from loom.toml: each key is a slot name, each value a colour
    /// or an inline style table, exactly as in a theme file's `[slots]`.
    pub fn with_overrides(self, table: &Table) -> Result<Theme, ThemeError> {
        self.apply_slots(table, &Origin("[theme] overrides"))
    }

    /// A slot changes only the attributes its value names: `"red"` sets the foreground and
    /// keeps the rest, `bold = false` removes an inherited bold.
    fn apply_slots(mut self, slots: &Table, origin: &Origin<'_>) -> Result<Theme, ThemeError> {
        for (name, value) in slots {
            let current = self.slot(name).ok_or_else(|| origin.unknown_slot(name))?;
            let updated = patch_style(current, name, value, origin)?;
            if let Some(slot) = self.slot_mut(name) {
                *slot = updated;
            }
        }
        Ok(self)
    }
}

fn builtin_text(name: &str) -> Option<&'static str> {
    match name {
        "dark" => Some(DARK_TOML),
        "light" => Some(LIGHT_TOML),
        _ => None,
    }
}

fn looks_like_path(spec: &str) -> bool {
    spec.contains('/') || spec.contains('\\') || Path::new(spec).extension().is_some()
}

struct ThemeFile {
    extends: Option<String>,
    slots: Table,
}

fn parse_file(text: &str, origin: &Origin<'_>) -> Result<ThemeFile, ThemeError> {
    let table: Table = text.parse().map_err(|err: toml::de::Error| {
        let line = err
            .span()
            .and_then(|span| text.get(..span.start))
            .map_or(1, |before| before.matches('\n').count() + 1);
        origin.invalid(format!("not valid TOML (line {line}): {}", err.message()))
    })?;
    let mut file = ThemeFile {
        extends: None,
        slots: Table::new(),
    };
    for (key, value) in table {
        match (key.as_str(), value) {
            ("extends", Value::String(name)) => {
                if builtin_text(&name).is_none() {
                    return Err(ThemeError::BadExtends {
                        file: origin.to_string(),
                        value: format!("\"{name}\""),
                    });
                }
                file.extends = Some(name);
            }
            ("extends", other) => {
                return Err(ThemeError::BadExtends {
                    file: origin.to_string(),
                    value: other.to_string(),
                });
            }
            ("slots", Value::Table(slots)) => file.slots = slots,
            ("slots", _) => return Err(origin.invalid("`slots` must be a table")),
            _ => {
                return Err(ThemeError::UnknownKey {
                    file: origin.to_string(),
                    key,
                });
            }
        }
    }
    Ok(file)
}

const STYLE_TABLE_KEYS: &str = "fg, bg, bold, italic, underline, dim, reverse";

fn patch_style(
    style: Style,
    slot: &str,
    value: &Value,
    origin: &Origin<'_>,
) -> Result<Style, ThemeError> {
    match value {
        Value::String(_) | Value::Integer(_) => Ok(style.fg(parse_color(slot, value, origin)?)),
        Value::Table(table) => {
            let mut style = style;
            for (key, attr) in table {
                style = match key.as_str() {
                    "fg" => style.fg(parse_color(slot, attr, origin)?),
                    "bg" => style.bg(parse_color(slot, attr, origin)?),
                    "bold" => set_modifier(style, Modifier::BOLD, slot, attr, origin)?,
                    "italic" => set_modifier(style, Modifier::ITALIC, slot, attr, origin)?,
                    "underline" => set_modifier(style, Modifier::UNDERLINED, slot, attr, origin)?,
                    "dim" => set_modifier(style, Modifier::DIM, slot, attr, origin)?,
                    "reverse" => set_modifier(style, Modifier::REVERSED, slot, attr, origin)?,
                    _ => {
                        return Err(origin.bad_value(
                            slot,
                            &Value::String(key.clone()),
                            &format!("a style table takes {STYLE_TABLE_KEYS}"),
                        ));
                    }
                };
            }
            Ok(style)
        }
        _ => Err(origin.bad_value(
            slot,
            value,
            &format!("expected a colour or an inline table with {STYLE_TABLE_KEYS}"),
        )),
    }
}

fn set_modifier(
    style: Style,
    modifier: Modifier,
    slot: &str,
    value: &Value,
    origin: &Origin<'_>,
) -> Result<Style, ThemeError> {
    match value {
        Value::Boolean(true) => Ok(style.add_modifier(modifier)),
        Value::Boolean(false) => Ok(style.remove_modifier(modifier)),
        _ => Err(origin.bad_value(slot, value, "style flags are true or false")),
    }
}

/// Colour names as ratatui spells them, `#rrggbb`, or a 0-255 palette index (a TOML integer
/// or a string of digits).
fn parse_color(slot: &str, value: &Value, origin: &Origin<'_>) -> Result<Color, ThemeError> {
    match value {
        Value::String(text) => text
            .trim()
            .parse::<Color>()
            .map_err(|_| origin.bad_color(slot, value)),
        Value::Integer(index) => u8::try_from(*index)
            .map(Color::Indexed)
            .map_err(|_| origin.bad_color(slot, value)),
        _ => Err(origin.bad_color(slot, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots_table(text: &str) -> Table {
        let table: Table = text.parse().expect("test TOML parses");
        match table.get("slots") {
            Some(Value::Table(slots)) => slots.clone(),
            _ => panic!("test TOML has no [slots] table"),
        }
    }

    #[test]
    fn builtin_files_set_every_slot_and_nothing_else() {
        for name in BUILTIN_THEMES {
            let text = builtin_text(name).expect("listed builtin has text");
            let slots = slots_table(text);
            for slot in Theme::SLOT_NAMES {
                assert!(
                    slots.contains_key(*slot),
                    "built-in theme `{name}` does not set slot `{slot}`"
                );
            }
            let theme = Theme::builtin(name);
            assert!(theme.is_some(), "built-in theme `{name}` does not parse");
        }
    }

    #[test]
    fn builtins_differ_and_load_by_name() {
        let dark = Theme::load("dark").expect("dark loads");
        let light = Theme::load("light").expect("light loads");
        assert_ne!(dark.base, light.base);
        assert!(
            dark.selection.bg.is_some(),
            "a selected row needs a background"
        );
        assert!(
            light.selection.bg.is_some(),
            "a selected row needs a background"
        );
        assert_eq!(Theme::default(), dark);
    }

    #[test]
    fn partial_user_theme_overrides_only_its_slots() {
        let text = r##"
            extends = "light"
            [slots]
            keyword = "#ff0000"
            null = { fg = 240, italic = false, bold = true }
        "##;
        let theme = Theme::from_toml(text, "mine.toml").expect("user theme parses");
        let light = Theme::builtin("light").expect("light");
        assert_eq!(theme.keyword.fg, Some(Color::Rgb(0xff, 0, 0)));
        // A colour string changes only the foreground: the builtin's modifiers survive.
        assert_eq!(theme.keyword.add_modifier, light.keyword.add_modifier);
        assert_eq!(theme.null.fg, Some(Color::Indexed(240)));
        assert!(theme.null.add_modifier.contains(Modifier::BOLD));
        assert!(!theme.null.add_modifier.contains(Modifier::ITALIC));
        for slot in Theme::SLOT_NAMES {
            if *slot == "keyword" || *slot == "null" {
                continue;
            }
            assert_eq!(theme.slot(slot), light.slot(slot), "slot {slot} changed");
        }
    }

    #[test]
    fn user_theme_extends_dark_by_default() {
        let theme = Theme::from_toml("[slots]\naccent = \"lightmagenta\"\n", "mine.toml")
            .expect("user theme parses");
        let dark = Theme::builtin("dark").expect("dark");
        assert_eq!(theme.accent.fg, Some(Color::LightMagenta));
        assert_eq!(theme.base, dark.base);
    }

    #[test]
    fn bad_colour_names_file_slot_and_value() {
        let err = Theme::from_toml("[slots]\nstring = \"#12345\"\n", "mine.toml")
            .expect_err("bad colour is rejected");
        assert!(matches!(err, ThemeError::BadColor { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("mine.toml"), "{message}");
        assert!(message.contains("`string`"), "{message}");
        assert!(message.contains("\"#12345\""), "{message}");
        assert!(message.contains("#rrggbb"), "{message}");

        let err = Theme::from_toml("[slots]\nnumber = { bg = 300 }\n", "mine.toml")
            .expect_err("index above 255 is rejected");
        assert!(err.to_string().contains("300"), "{err}");
    }

    #[test]
    fn unknown_slot_lists_known_slots() {
        let err = Theme::from_toml("[slots]\nkeywrod = \"red\"\n", "mine.toml")
            .expect_err("unknown slot is rejected");
        let message = err.to_string();
        assert!(message.contains("mine.toml"), "{message}");
        assert!(message.contains("`keywrod`"), "{message}");
        for slot in Theme::SLOT_NAMES {
            assert!(message.contains(slot), "{message} lacks {slot}");
        }
    }

    #[test]
    fn bad_shapes_are_errors_not_defaults() {
        let cases = [
            ("[slots]\nkey = { fg = \"red\", blink = true }\n", "blink"),
            ("[slots]\nkey = { bold = \"yes\" }\n", "true or false"),
            ("[slots]\nkey = [1, 2]\n", "inline table"),
            ("extends = \"solarized\"\n", "solarized"),
            ("colours = 1\n", "colours"),
            ("[slots\n", "not valid TOML"),
        ];
        for (text, needle) in cases {
            let err = Theme::from_toml(text, "mine.toml").expect_err(text);
            let message = err.to_string();
            assert!(message.contains(needle), "{text:?} gave {message}");
            assert!(message.contains("mine.toml"), "{message}");
        }
    }

    #[test]
    fn overrides_from_config_table() {
        let table: Table = "selection = { bg = \"blue\" }\nerror = \"lightred\"\n"
            .parse()
            .expect("table parses");
        let theme = Theme::default()
            .with_overrides(&table)
            .expect("overrides apply");
        assert_eq!(theme.selection.bg, Some(Color::Blue));
        assert_eq!(theme.error.fg, Some(Color::LightRed));

        let bad: Table = "nope = \"red\"\n".parse().expect("table parses");
        let err = Theme::default()
            .with_overrides(&bad)
            .expect_err("unknown slot");
        assert!(err.to_string().contains("[theme]"), "{err}");
    }

    #[test]
    fn load_distinguishes_unknown_names_from_missing_files() {
        let err = Theme::load("solarized").expect_err("not a builtin");
        assert!(matches!(err, ThemeError::UnknownTheme { .. }), "{err:?}");
        let err = Theme::load("/nonexistent/loom/theme.toml").expect_err("missing file");
        assert!(matches!(err, ThemeError::Read { .. }), "{err:?}");
        assert!(err.to_string().contains("/nonexistent/loom/theme.toml"));
    }

    #[test]
    fn load_reads_a_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "extends = \"light\"\n[slots]\nchart = 33\n").expect("write");
        let theme = Theme::load(&path.to_string_lossy()).expect("file loads");
        assert_eq!(theme.chart.fg, Some(Color::Indexed(33)));
        assert_eq!(theme.base, Theme::builtin("light").expect("light").base);
    }
}
