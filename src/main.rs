//! The `loom` command line: parses arguments and calls into the library; nothing else.

use anyhow::Context;
use clap::{Parser, Subcommand};
use loom::config::Config;
use loom::session::log_file::LazyLogFile;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "loom",
    version,
    about = "One MCP server in front of many: large results become queryable datasets"
)]
struct Cli {
    /// Log level for loom's own log on stderr (error, warn, info, debug, trace); RUST_LOG wins.
    #[arg(long, global = true, default_value = "warn")]
    log_level: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct ConfigArg {
    /// Config file. Without it, $LOOM_CONFIG, then ./loom.toml.
    #[arg(short, long)]
    config: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP on stdio: what an MCP client launches. With --http, also over streamable HTTP.
    Serve {
        #[command(flatten)]
        config: ConfigArg,
        /// Also serve MCP over streamable HTTP at this address (default 127.0.0.1:7331), on the
        /// same session, with a bearer token ($LOOM_HTTP_TOKEN, or one printed at start); loom
        /// then runs until SIGINT or SIGTERM.
        #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:7331", value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
    },
    /// Validate the config, start every server, print health and tool counts.
    Check(ConfigArg),
    /// A built-in downstream MCP server (stdio) with realistic small and large results.
    SampleServer {
        /// Serve the fixtures of the official MCP conformance suite instead.
        #[arg(long)]
        conformance: bool,
        /// With --conformance: speak only the handshake era (no `server/discover`), as servers
        /// written before 2026-07-28 do.
        #[arg(long, requires = "conformance")]
        legacy_only: bool,
    },
    /// The workbench, with the proxy in-process; MCP is served on the session socket.
    Tui {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        look: LookArgs,
        /// Also serve MCP over streamable HTTP at this address (default 127.0.0.1:7331), on the
        /// workbench's session, with a bearer token ($LOOM_HTTP_TOKEN, or one printed at start).
        #[arg(long, num_args = 0..=1, default_missing_value = "127.0.0.1:7331", value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Open a past session of the config's history instead, read-only (no servers start).
        #[arg(long, value_name = "ID", conflicts_with = "http")]
        open: Option<String>,
    },
    /// Past sessions of a config (its history_dir), newest first; `show`, `rm`, `prune`.
    History {
        /// Config file. Without it, $LOOM_CONFIG, then ./loom.toml.
        #[arg(short, long, global = true)]
        config: Option<PathBuf>,
        #[arg(long, global = true, default_value = "table", value_parser = ["table", "json"])]
        format: String,
        #[command(subcommand)]
        action: Option<HistoryAction>,
    },
    /// The workbench on a running session (`loom serve` or `loom tui`), from another terminal.
    Attach {
        /// A session's pid (see `loom sessions`); without it, the only running session.
        session: Option<String>,
        #[command(flatten)]
        look: LookArgs,
    },
    /// Bridge stdio to a running session's socket: what an MCP client launches to join it.
    Connect {
        /// A session's pid; without it, the only running session.
        session: Option<String>,
        /// How this client's tools are listed: full, compact or search (default: the config's).
        #[arg(long, value_parser = ["full", "compact", "search"])]
        listing: Option<String>,
    },
    /// List running sessions (and remove stale sockets).
    Sessions,
    /// Convert a client's MCP server list (Claude Desktop, Claude Code, Cursor, Windsurf, Cline:
    /// `mcpServers`; VS Code: `servers`) to loom.toml, on stdout or in a new file.
    Import {
        /// The client's JSON config (comments allowed); `-` reads standard input.
        file: PathBuf,
        /// Write a new file here (never overwriting) instead of printing.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Run one read-only SQL statement on a running session's store, or on a past one.
    Query {
        /// The session's pid, then the SQL; with one argument, it is the SQL.
        #[arg(required = true, num_args = 1..=2)]
        args: Vec<String>,
        #[arg(long, default_value = "table", value_parser = ["table", "csv", "json"])]
        format: String,
        /// A past session of the config's history (`loom history` lists them), read-only.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// With --session: the config whose history_dir holds it.
        #[arg(short, long, requires = "session")]
        config: Option<PathBuf>,
    },
    /// Export a dataset of a running session (or of a past one) to a file.
    Export {
        /// The session's pid, then the dataset ref; with one argument, it is the ref.
        #[arg(required = true, num_args = 1..=2)]
        args: Vec<String>,
        #[arg(long, default_value = "csv", value_parser = ["csv", "json", "jsonl", "parquet"])]
        format: String,
        /// A past session of the config's history (`loom history` lists them).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// With --session: the config whose history_dir holds it.
        #[arg(short, long, requires = "session")]
        config: Option<PathBuf>,
        /// Where to write; the session writes under its export_dir, then the file is copied here.
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
enum HistoryAction {
    /// One session: its manifest, datasets and notes.
    Show { id: String },
    /// Remove one ended session.
    Rm { id: String },
    /// Apply history_keep_days and history_max_bytes now.
    Prune,
}

#[derive(clap::Args)]
struct LookArgs {
    /// `dark`, `light`, or a theme file (TOML; may `extends` a built-in one).
    #[arg(long)]
    theme: Option<String>,
    /// A keymap file overriding single keys of the default one.
    #[arg(long)]
    keymap: Option<PathBuf>,
}

impl ConfigArg {
    fn load(&self) -> anyhow::Result<Arc<Config>> {
        let path = self
            .config
            .clone()
            .or_else(|| {
                std::env::var_os("LOOM_CONFIG")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from("loom.toml"));
        Ok(Arc::new(Config::load(&path)?))
    }
}

fn init_logging(level: &str, file: Option<&std::path::Path>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(level))
        .context("bad --log-level")?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .fmt_fields(loom::terminal_text::log_fields());
    match file {
        Some(path) => {
            // Opened now, so a log file that cannot be written is reported before anything
            // starts; a new file is private from the start.
            use std::os::unix::fs::OpenOptionsExt;
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot open log file {}", path.display()))?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(f))
                .init();
        }
        None => {
            use std::io::IsTerminal;
            builder
                .with_ansi(std::io::stderr().is_terminal())
                .with_writer(std::io::stderr)
                .init()
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    loom::PROCESS_START.get_or_init(std::time::Instant::now);
    // `args()` panics on an argument that is not UTF-8; clap reports those properly.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let first = args.get(1).and_then(|a| a.to_str());
    // The built-in sample server holds nothing of loom's (it runs with a server's curated
    // environment) and stays inspectable, so that the loom running it can read its descriptors
    // when it checks who is on the other end of an HTTP connection; every other loom process
    // is non-dumpable.
    if first != Some("sample-server") {
        loom::downstream::guard::forbid_inspection();
    }
    if first == Some(loom::downstream::guard::GUARD_ARG) {
        let skip = if args.get(2).is_some_and(|a| a == "--") {
            3
        } else {
            2
        };
        // loom writes the guard's command line itself, from its UTF-8 config.
        let Ok(rest) = args
            .into_iter()
            .skip(skip)
            .map(std::ffi::OsString::into_string)
            .collect::<Result<Vec<String>, _>>()
        else {
            eprintln!("loom guard: the command line is not UTF-8");
            return std::process::ExitCode::from(2);
        };
        return std::process::ExitCode::from(
            loom::downstream::guard::run_guard(&rest).clamp(0, 255) as u8,
        );
    }
    if first == Some(loom::store::SEAL_CHECK_ARG) {
        return match loom::store::seal_check() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{}", loom::terminal_text::text(&e.to_string()));
                std::process::ExitCode::from(2)
            }
        };
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // Errors quote what others wrote (engine messages, server output, file names).
            eprintln!("loom: {}", loom::terminal_text::text(&format!("{e:#}")));
            std::process::ExitCode::from(2)
        }
    }
}

/// The async runtime of one command. A proxy (`serve`, `connect`) runs its tasks on one worker
/// unless `TOKIO_WORKER_THREADS` says otherwise: a small call then goes from the client's pipe to
/// the server's and back on one thread, where with a worker per core the reader, the request
/// and the writers woke each other across workers (about six futex calls and three more
/// context switches per call, some 40% of loom's CPU for it; BENCHMARKS.md). Blocking work
/// (the store, ingest, the history) has its own threads either way. The other commands take a
/// worker per core.
fn runtime(proxy: bool) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if proxy && std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(1);
    }
    builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    loom::init_tls();
    let rt = runtime(matches!(
        cli.command,
        Command::Serve { .. } | Command::Connect { .. }
    ))?;
    match cli.command {
        Command::Serve { config: c, http } => {
            let config = c.load()?;
            init_logging(&cli.log_level, config.log_file.as_deref())?;
            // On the worker, not this thread: the reads of stdin and of the servers are then
            // woken where the runtime polls them, without a hop to another thread per message.
            rt.block_on(async move {
                tokio::spawn(loom::frontend::compose::serve(config, http))
                    .await
                    .map_err(|e| anyhow::anyhow!("loom serve stopped: {e}"))?
            })?;
            // Blocking reads of stdin may still be parked; do not wait for them.
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Check(c) => {
            let config = c.load()?;
            init_logging(&cli.log_level, None)?;
            let ok = rt.block_on(loom::check::run(config, &mut std::io::stdout()))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(if ok {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            })
        }
        Command::Tui {
            config,
            look,
            http,
            open,
        } => {
            let config = config.load()?;
            init_tui_logging(&cli.log_level, config.log_file.as_deref())?;
            let opts = loom::tui::TuiOptions {
                theme: look
                    .theme
                    .or(config.theme.clone())
                    .unwrap_or_else(|| "dark".into()),
                theme_overrides: config.theme_overrides.clone(),
                keymap: look.keymap.or(config.keymap.clone()),
                title: "loom tui".into(),
                history_file: loom::tui::app::default_history_file(),
                attached: false,
            };
            match open {
                Some(id) => rt.block_on(loom::cli::tui_past(config, &id, opts))?,
                None => rt.block_on(loom::cli::tui(config, opts, http))?,
            }
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Attach { session, look } => {
            init_tui_logging(&cli.log_level, None)?;
            let entry = loom::frontend::socket::resolve(session.as_deref())
                .map_err(|e| anyhow::anyhow!(e))?;
            let opts = loom::tui::TuiOptions {
                theme: look.theme.unwrap_or_else(|| "dark".into()),
                theme_overrides: None,
                keymap: look.keymap,
                title: format!("loom attach {}", entry.pid),
                history_file: loom::tui::app::default_history_file(),
                attached: true,
            };
            rt.block_on(loom::cli::attach(entry, opts))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Connect { session, listing } => {
            init_logging(&cli.log_level, None)?;
            let entry = loom::frontend::socket::resolve(session.as_deref())
                .map_err(|e| anyhow::anyhow!(e))?;
            let listing = listing
                .as_deref()
                .and_then(loom::config::ListingMode::parse);
            rt.block_on(loom::frontend::socket::bridge(&entry, listing))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Sessions => {
            loom::cli::sessions(&mut std::io::stdout())?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Query {
            args,
            format,
            session: Some(id),
            config,
        } => {
            init_logging(&cli.log_level, None)?;
            let config = ConfigArg { config }.load()?;
            let [sql] = <[String; 1]>::try_from(args)
                .map_err(|_| anyhow::anyhow!("with --session, give only the SQL"))?;
            rt.block_on(loom::cli::query_past(
                &config,
                &id,
                &sql,
                &format,
                &mut std::io::stdout(),
                loom::terminal_text::Sink::stdout(),
            ))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Query { args, format, .. } => {
            init_logging(&cli.log_level, None)?;
            let (session, sql) = split_session_arg(args);
            rt.block_on(loom::cli::query(
                session.as_deref(),
                &sql,
                &format,
                &mut std::io::stdout(),
                loom::terminal_text::Sink::stdout(),
            ))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Import { file, output } => {
            let ok = loom::cli::import(
                &file,
                output.as_deref(),
                &mut std::io::stdout(),
                &mut std::io::stderr(),
            )?;
            Ok(if ok {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            })
        }
        Command::Export {
            args,
            format,
            output,
            session: Some(id),
            config,
        } => {
            init_logging(&cli.log_level, None)?;
            let config = ConfigArg { config }.load()?;
            let [dataset] = <[String; 1]>::try_from(args)
                .map_err(|_| anyhow::anyhow!("with --session, give only the dataset's ref"))?;
            rt.block_on(loom::cli::export_past(
                &config, &id, &dataset, &format, &output,
            ))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::History {
            config,
            format,
            action,
        } => {
            let config = ConfigArg { config }.load()?;
            let out = &mut std::io::stdout();
            match action {
                None => loom::cli::history::list(&config, &format, out)?,
                Some(HistoryAction::Show { id }) => {
                    loom::cli::history::show(&config, &id, &format, out)?
                }
                Some(HistoryAction::Rm { id }) => loom::cli::history::remove(&config, &id, out)?,
                Some(HistoryAction::Prune) => loom::cli::history::prune(&config, out)?,
            }
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::Export {
            args,
            format,
            output,
            ..
        } => {
            init_logging(&cli.log_level, None)?;
            let (session, dataset) = split_session_arg(args);
            rt.block_on(loom::cli::export(
                session.as_deref(),
                &dataset,
                &format,
                &output,
            ))?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Command::SampleServer {
            conformance,
            legacy_only,
        } => {
            // rmcp warns on stderr about every error answer (an unknown tool, a cancelled
            // count): expected here, and loom shows a server's stderr to the person.
            init_logging(&format!("{},rmcp=error", cli.log_level), None)?;
            if conformance {
                rt.block_on(loom::sample_server::conformance::serve_stdio(legacy_only))?;
            } else {
                rt.block_on(loom::sample_server::serve_stdio())?;
            }
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
    }
}

/// `[SESSION] VALUE`: with two arguments the first names the session.
fn split_session_arg(mut args: Vec<String>) -> (Option<String>, String) {
    let value = args.pop().unwrap_or_default();
    (args.pop(), value)
}

/// The workbench owns the terminal: loom's own log goes to a file, never to the screen.
/// Without a configured `log_file` it goes beside the session socket, created only when a
/// line is logged.
fn init_tui_logging(level: &str, file: Option<&std::path::Path>) -> anyhow::Result<()> {
    if file.is_some() {
        return init_logging(level, file);
    }
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(level))
        .context("bad --log-level")?;
    let path = loom::frontend::socket::runtime_dir()
        .context("cannot create loom's runtime folder")?
        .join(format!("loom-{}.log", std::process::id()));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .fmt_fields(loom::terminal_text::log_fields())
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(LazyLogFile::new(path)))
        .init();
    Ok(())
}
