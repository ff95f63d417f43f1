//! The describe view (an overlay over the catalog): it owns one dataset's description, the
//! selected column and that column's chart, asked for on demand and at most once unless the
//! person retries. Asking the engine is the app's (`App::send`); it never draws.

use super::navigation::step;
use super::*;

/// The describe view's state.
pub struct Describe {
    pub dataset: String,
    pub describe: Option<Box<Description>>,
    pub charts: HashMap<String, Vec<Bar>>,
    /// Charts the engine could not draw, by column: shown with the way on (`r` retries).
    pub chart_errors: HashMap<String, String>,
    requested: HashSet<String>,
    pub selected: usize,
}

impl Describe {
    fn new(dataset: String) -> Describe {
        Describe {
            dataset,
            describe: None,
            charts: HashMap::new(),
            chart_errors: HashMap::new(),
            requested: HashSet::new(),
            selected: 0,
        }
    }

    fn selected_column(&self) -> Option<&str> {
        self.describe
            .as_ref()
            .and_then(|v| v.columns.get(self.selected))
            .map(|c| c.name.as_str())
    }

    /// The selected column, when its chart was not asked for yet; it counts as asked now.
    fn wanted_chart(&mut self) -> Option<String> {
        let column = self
            .selected_column()
            .filter(|c| !self.requested.contains(*c))?
            .to_owned();
        self.requested.insert(column.clone());
        Some(column)
    }

    /// Forgets the selected column's chart error, so it is asked for again.
    fn retry(&mut self) {
        if let Some(name) = self.selected_column().map(str::to_owned) {
            self.chart_errors.remove(&name);
            self.requested.remove(&name);
        }
    }

    pub(super) fn move_by(&mut self, delta: i64) {
        let n = self.describe.as_ref().map_or(0, |v| v.columns.len());
        self.selected = step(self.selected, n, delta);
    }
}

impl App {
    pub(super) fn open_describe(&mut self, dataset: String) {
        self.overlay = Overlay::Describe(Box::new(Describe::new(dataset.clone())));
        self.send(
            Purpose::Describe(dataset.clone()),
            Request::Describe { dataset },
        );
    }

    /// The describe view on screen, if it is the one of `dataset`.
    pub(super) fn describe_of(&mut self, dataset: &str) -> Option<&mut Describe> {
        match &mut self.overlay {
            Overlay::Describe(d) if d.dataset == dataset => Some(d),
            _ => None,
        }
    }

    /// Asks for the selected column's chart in the describe view if it is not there yet.
    pub(super) fn chart_for_selection(&mut self) {
        let want = match &mut self.overlay {
            Overlay::Describe(d) => d.wanted_chart().map(|c| (d.dataset.clone(), c)),
            _ => None,
        };
        if let Some((table, column)) = want {
            self.send(
                Purpose::Chart(table.clone(), column.clone()),
                Request::Chart {
                    table,
                    column,
                    bins: 12,
                },
            );
        }
    }

    /// `r` in the describe view: asks again for the selected column's chart.
    pub(super) fn retry_chart(&mut self) {
        if let Overlay::Describe(d) = &mut self.overlay {
            d.retry();
        }
        self.chart_for_selection();
    }
}
