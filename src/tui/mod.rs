//! The workbench (`loom tui`, `loom attach`): one reducer owns the state, draw functions only
//! read it, and every change to the session goes through the Engine API — never into the
//! proxy's internals — so the same screens work in-process and over the session socket.
//! The loop redraws only after something changed, at most every 16 ms; with nothing
//! happening it sleeps (no busy redraw, idle CPU near zero).
//!
//! The terminal belongs to the UI thread: only a panic there gives it back (raw mode off, main
//! screen) before the message is printed. A panic on any other thread (a runtime worker, the
//! input reader, highlighting) never writes to the terminal; it goes to the log and the
//! status line, and the workbench keeps running.

pub mod app;
pub mod clipboard;
pub mod highlight;
pub mod keymap;
pub mod sql;
pub mod theme;
pub mod ui;

#[cfg(test)]
mod catalog_tests;
#[cfg(test)]
mod daily_tests;
#[cfg(test)]
mod editor_tests;
#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod grid_tests;
#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod palette_tests;
#[cfg(test)]
mod safety_tests;
#[cfg(test)]
mod servers_tests;
#[cfg(test)]
mod text_entry_tests;
#[cfg(test)]
mod watching_tests;

use crate::frontend::engine::{Engine, EventFeed};
use app::{App, Msg};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event as TermEvent, KeyEventKind,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub struct TuiOptions {
    /// `dark`, `light` or a theme file.
    pub theme: String,
    pub theme_overrides: Option<toml::Table>,
    pub keymap: Option<PathBuf>,
    pub title: String,
    /// The SQL history; the editor's tabs are saved beside it (`editor-tabs.json`).
    pub history_file: Option<PathBuf>,
    /// `loom attach`: `q` detaches and the session goes on.
    pub attached: bool,
}

/// Builds the app state as `run` does, for tests and benchmarks that draw without a terminal.
pub fn build_app(opts: &TuiOptions, clipboard: clipboard::Clipboard) -> anyhow::Result<App> {
    let mut theme = theme::Theme::load(&opts.theme)?;
    if let Some(o) = &opts.theme_overrides {
        theme = theme.with_overrides(o)?;
    }
    let mut keys = keymap::Keymap::default_map();
    if let Some(path) = &opts.keymap {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read keymap {}: {e}", path.display()))?;
        keys.merge(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    let name = if opts.theme == "light" {
        "light"
    } else {
        "dark"
    };
    let mut app = App::new(keys, theme, name, clipboard);
    app.title = opts.title.clone();
    app.attached = opts.attached;
    app.editor.history_file = opts.history_file.clone();
    if let Some(h) = &opts.history_file {
        app.editor.history = app::load_history(h);
        app.prefs_file = app::preferences_file(h);
        // The editor's tabs are kept beside the history, as the person left them.
        app.restore_tabs(app::tabs_file_beside(h));
    }
    if let Some(p) = app.prefs_file.clone() {
        match app::load_preferences(&p) {
            Ok(prefs) => app.arrangement = prefs.layout,
            Err(why) => app.set_status(why.to_string(), app::StatusKind::Error),
        }
    }
    Ok(app)
}

/// Feeds the session's events (the backlog first) into the workbench's message queue; the
/// returned presence marks a person as attached while it is held.
pub fn forward_events(
    engine: &dyn Engine,
    tx: mpsc::UnboundedSender<Msg>,
) -> Option<crate::frontend::engine::Presence> {
    let EventFeed {
        backlog,
        mut live,
        presence,
    } = engine.events(true);
    for ev in backlog {
        let _ = tx.send(Msg::event(ev));
    }
    tokio::spawn(async move {
        while let Some(ev) = live.recv().await {
            if tx.send(Msg::event(ev)).is_err() {
                return;
            }
        }
        let _ = tx.send(Msg::SessionEnded);
    });
    presence
}

/// For the benchmark: writes the microseconds from process start to the first frame into
/// the file `LOOM_REPORT_FIRST_FRAME` names.
fn report_first_frame() {
    if let (Some(path), Some(start)) = (
        std::env::var_os("LOOM_REPORT_FIRST_FRAME"),
        crate::PROCESS_START.get(),
    ) {
        let _ = std::fs::write(path, start.elapsed().as_micros().to_string());
    }
}

fn now_minute() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 60)
        .unwrap_or(0)
}

/// The signals that end the workbench: SIGTERM (`kill`), SIGHUP (the terminal closed) and
/// SIGINT (`kill -INT`; in raw mode `ctrl-c` is a key, not this signal).
struct Stop {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl Stop {
    fn listen() -> std::io::Result<Stop> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Stop {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Resolves when one of them arrives.
    async fn next(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.hup.recv() => {}
            _ = self.int.recv() => {}
        }
    }
}

/// Gives the terminal back: raw mode off, main screen, cursor shown.
pub fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// The terminal in the workbench's modes (raw, alternate screen, mouse, bracketed paste) for
/// as long as this lives; dropping it gives the terminal back on every way out, an early error
/// or an unwinding panic included.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> std::io::Result<TerminalGuard> {
        enable_raw_mode()?;
        // From here on, whatever fails is undone by the guard's drop.
        let guard = TerminalGuard;
        execute!(
            std::io::stdout(),
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste
        )?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// A session to join once the one watched ended (`loom attach`): each call looks once, and
/// answers the engine of a new session of the same config, with the workbench's new title.
pub type Reattach = Arc<
    dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<Rejoined>> + Send>>
        + Send
        + Sync,
>;

/// A session joined after the one watched ended.
pub struct Rejoined {
    pub engine: Arc<dyn Engine>,
    pub title: String,
}

/// How often an attached workbench whose session ended looks for a new one.
const REATTACH_EVERY: Duration = Duration::from_secs(1);

/// Runs the workbench on `engine` until the user quits.
pub async fn run(engine: Arc<dyn Engine>, opts: TuiOptions) -> anyhow::Result<()> {
    run_reattaching(engine, opts, None).await
}

/// Runs the workbench on `engine` until the user quits; when the session ends and `reattach`
/// is given, it waits for a new session of the same config (saying so, `q` quits) and joins
/// it, the editor's tabs kept.
pub async fn run_reattaching(
    engine: Arc<dyn Engine>,
    opts: TuiOptions,
    reattach: Option<(Reattach, String)>,
) -> anyhow::Result<()> {
    let mut app = build_app(&opts, clipboard::Clipboard::new())?;
    app.reattach_to = reattach.as_ref().map(|(_, config)| config.clone());
    // Syntect builds a grammar's patterns on first use; do it before the first keystroke.
    let highlighter = app.highlighter;
    std::thread::spawn(move || highlighter.warm_up());
    let terminal = TerminalGuard::enter()?;
    let (tx, rx) = mpsc::unbounded_channel::<Msg>();
    let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
    let reports = tx.clone();
    std::panic::set_hook(panic_hook(
        std::thread::current().id(),
        restore_terminal,
        move |what| {
            let _ = reports.send(Msg::WorkerPanicked(what));
        },
        previous.clone(),
    ));
    let rejoin = reattach.map(|(r, _)| (r, opts));
    let result = event_loop(&mut app, engine, tx, rx, rejoin).await;
    drop(terminal);
    // Later panics print as they did before the workbench started.
    std::panic::set_hook(Box::new(move |info| previous(info)));
    result
}

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

/// The workbench's panic hook. On the `ui` thread: `restore` the terminal, then the
/// `previous` hook prints the message. On any other thread: the panic is logged (with where
/// it happened) and `report`ed for the status line, and nothing reaches the terminal.
fn panic_hook(
    ui: std::thread::ThreadId,
    restore: fn(),
    report: impl Fn(String) + Sync + Send + 'static,
    previous: Arc<PanicHook>,
) -> PanicHook {
    Box::new(move |info| {
        let thread = std::thread::current();
        if thread.id() == ui {
            restore();
            previous(info);
            return;
        }
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(
            thread = thread.name().unwrap_or("unnamed"),
            at = %place,
            backtrace = %std::backtrace::Backtrace::capture(),
            "a worker thread panicked: {what}"
        );
        report(what);
    })
}

async fn event_loop(
    app: &mut App,
    mut engine: Arc<dyn Engine>,
    tx: mpsc::UnboundedSender<Msg>,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    rejoin: Option<(Reattach, TuiOptions)>,
) -> anyhow::Result<()> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    let size = terminal.size()?;
    app.size = (size.width, size.height);
    app.now_minute = now_minute();
    app.now_secs = crate::types::time::now_secs();
    // Terminal input is read on a thread of its own: crossterm's read blocks.
    let input = tx.clone();
    std::thread::spawn(move || {
        loop {
            let msg = match crossterm::event::read() {
                Ok(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => Msg::Key(k),
                Ok(TermEvent::Mouse(m)) => Msg::Mouse(m),
                Ok(TermEvent::Paste(p)) => Msg::Paste(p),
                Ok(TermEvent::Resize(w, h)) => Msg::Resize(w, h),
                Ok(_) => continue,
                Err(_) => break,
            };
            if input.send(msg).is_err() {
                break;
            }
        }
    });
    // A person watches while this loop runs.
    let mut _presence = forward_events(engine.as_ref(), tx.clone());
    let dispatch = |engine: &Arc<dyn Engine>,
                    reqs: Vec<(u64, crate::frontend::engine::Request)>| {
        for (t, req) in reqs {
            let fut = engine.request(req);
            let tx = tx.clone();
            tokio::spawn(async move {
                let r = fut.await;
                let _ = tx.send(Msg::Reply(t, r));
            });
        }
    };
    dispatch(&engine, app.start());
    // A new session found after this one ended: the look runs while the person reads on.
    let (rejoined_tx, mut rejoined_rx) = mpsc::unbounded_channel::<Rejoined>();
    let mut looking: Option<tokio::task::JoinHandle<()>> = None;
    // Told to end (kill, a closed terminal, `kill -INT`): the loop ends as after `q`, so the
    // terminal guard gives the terminal back and the caller closes the session socket.
    let mut stop = Stop::listen()?;
    let frame_gap = Duration::from_millis(16);
    let mut last_draw = Instant::now() - frame_gap;
    let mut dirty = true;
    let mut first_frame = true;
    loop {
        if dirty {
            let wait = frame_gap.saturating_sub(last_draw.elapsed());
            if wait.is_zero() {
                app.prepare_frame();
                terminal.draw(|f| ui::draw(f, app))?;
                last_draw = Instant::now();
                dirty = false;
                if first_frame {
                    first_frame = false;
                    report_first_frame();
                }
            }
        }
        // Ticks only while something moves (a running query or call, an export, a prompt).
        let tick = app.tick_interval();
        let animating = tick.is_some();
        let timeout = if dirty {
            frame_gap.saturating_sub(last_draw.elapsed())
        } else {
            tick.unwrap_or(Duration::from_secs(30))
        };
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = tokio::time::sleep(timeout) => Some(Msg::Tick),
            _ = stop.next() => Some(Msg::Stop),
            Some(joined) = rejoined_rx.recv() => {
                looking = None;
                if let Some((_, opts)) = &rejoin {
                    // The workbench starts over on the new session; what the editor holds
                    // was saved as the old one ended and comes back with its tabs.
                    app.update(Msg::Stop);
                    let mut fresh = build_app(opts, clipboard::Clipboard::new())?;
                    fresh.rejoined(app, joined.title);
                    *app = fresh;
                    engine = joined.engine;
                    _presence = forward_events(engine.as_ref(), tx.clone());
                    dispatch(&engine, app.start());
                    dirty = true;
                }
                continue;
            }
        };
        let Some(msg) = msg else { break };
        let is_tick = matches!(msg, Msg::Tick);
        if !is_tick || animating {
            dirty = true;
        }
        app.now_minute = now_minute();
        app.now_secs = crate::types::time::now_secs();
        dispatch(&engine, app.update(msg));
        // Take everything already queued before drawing: a burst costs one frame.
        while let Ok(m) = rx.try_recv() {
            dispatch(&engine, app.update(m));
            dirty = true;
        }
        if app.quit {
            break;
        }
        if app.session_ended
            && looking.is_none()
            && let Some((reattach, _)) = &rejoin
        {
            let reattach = reattach.clone();
            let found = rejoined_tx.clone();
            looking = Some(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(REATTACH_EVERY).await;
                    if let Some(joined) = reattach().await {
                        let _ = found.send(joined);
                        return;
                    }
                }
            }));
        }
    }
    if let Some(l) = looking {
        l.abort();
    }
    Ok(())
}
