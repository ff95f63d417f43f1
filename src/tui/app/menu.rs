//! The `?` menu: every key of the workbench, those that work where the person is first, a `/`
//! filter over keys, actions and views, and `enter` to run the chosen action where the person
//! was — so help can never drift from the bindings, and a forgotten key is one search away. It
//! owns its selection and filter; running an action is the app's. It never draws.

use super::navigation::step;
use super::*;

/// One row of the menu: a binding and whether `enter` can run it from here.
#[derive(Debug, Clone, PartialEq)]
pub struct MenuItem {
    pub ctx: Context,
    pub keys: String,
    pub action: Action,
    pub runs_here: bool,
}

/// The menu's state.
pub struct Menu {
    pub selected: usize,
    pub filter: LineInput,
    /// The filter is being typed (after `/`).
    pub typing: bool,
    /// The views under the menu when it opened: an action bound there runs.
    pub beneath: Vec<Context>,
    /// Rows on screen, as last drawn (paging moves by this).
    pub rows: std::cell::Cell<usize>,
}

impl Menu {
    pub(super) fn new(beneath: Vec<Context>) -> Menu {
        Menu {
            selected: 0,
            filter: LineInput::default(),
            typing: false,
            beneath,
            rows: std::cell::Cell::new(10),
        }
    }

    /// The rows under the filter: the bindings where the person is first, then the rest.
    pub fn items(&self, keymap: &Keymap) -> Vec<MenuItem> {
        let f = self.filter.to_lowercase();
        let mut order: Vec<Context> = self.beneath.clone();
        order.extend(Context::ALL.iter().filter(|c| !self.beneath.contains(c)));
        let mut out = Vec::new();
        for ctx in order {
            for (keys, action) in keymap.grouped(ctx) {
                let text = format!("{keys} {} {} {}", action.help(), action.name(), ctx.name());
                if !f.is_empty() && !text.to_lowercase().contains(&f) {
                    continue;
                }
                out.push(MenuItem {
                    ctx,
                    keys,
                    action,
                    runs_here: self.beneath.contains(&ctx),
                });
            }
        }
        out
    }

    pub(super) fn move_by(&mut self, delta: i64, len: usize) {
        self.selected = step(self.selected, len, delta);
    }

    pub(super) fn type_key(&mut self, k: KeyEvent) {
        super::keys::edit_line(&mut self.filter, k);
        self.selected = 0;
    }
}

impl App {
    /// `?`: opens the menu over where the person is (or closes it).
    pub(super) fn toggle_menu(&mut self) {
        if matches!(self.overlay, Overlay::Help(_)) {
            self.overlay = Overlay::None;
            return;
        }
        // Actions run only in the views of the panes; over another overlay the menu is help.
        let beneath = match self.overlay {
            Overlay::None => self.contexts(),
            _ => Vec::new(),
        };
        self.overlay = Overlay::Help(Box::new(Menu::new(beneath)));
    }

    pub(super) fn menu_mut(&mut self) -> Option<&mut Menu> {
        match &mut self.overlay {
            Overlay::Help(m) => Some(m),
            _ => None,
        }
    }

    /// `enter` in the menu: runs the chosen action where the person was.
    pub(super) fn run_menu_item(&mut self) {
        let Overlay::Help(m) = &self.overlay else {
            return;
        };
        let Some(item) = m.items(&self.keymap).get(m.selected).cloned() else {
            return;
        };
        if !item.runs_here {
            self.set_status(
                format!(
                    "{} works in the {} view ({})",
                    item.action.help(),
                    item.ctx.name(),
                    item.keys
                ),
                StatusKind::Info,
            );
            return;
        }
        self.overlay = Overlay::None;
        if item.action != Action::Help {
            self.apply(item.action);
        }
    }
}
