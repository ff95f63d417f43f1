//! The `loom` command line: parses arguments and calls into the library; nothing else.

use anyhow::Context;
use clap::{Parser, Subcommand};
use loom::config::Config;
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
    /// Serve MCP on stdio: what an MCP client launches.
    Serve(ConfigArg),
    /// Validate the config, start every server, print health and tool counts.
    Check(ConfigArg),
    /// A built-in downstream MCP server (stdio) with realistic small and large results.
    SampleServer,
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
        .with_target(false);
    match file {
        Some(path) => {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
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
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(loom::downstream::guard::GUARD_ARG) {
        let rest = if args.get(2).map(String::as_str) == Some("--") {
            &args[3..]
        } else {
            &args[2..]
        };
        return std::process::ExitCode::from(
            loom::downstream::guard::run_guard(rest).clamp(0, 255) as u8,
        );
    }
    if args.get(1).map(String::as_str) == Some(loom::store::SEAL_CHECK_ARG) {
        return match loom::store::seal_check() {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                std::process::ExitCode::from(2)
            }
        };
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loom: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    loom::init_tls();
    let rt = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    match cli.command {
        Command::Serve(c) => {
            let config = c.load()?;
            init_logging(&cli.log_level, config.log_file.as_deref())?;
            rt.block_on(loom::upstream::stdio::serve(config))?;
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
        Command::SampleServer => {
            init_logging(&cli.log_level, None)?;
            rt.block_on(loom::sample_server::serve_stdio())?;
            rt.shutdown_timeout(std::time::Duration::from_millis(100));
            Ok(std::process::ExitCode::SUCCESS)
        }
    }
}
