//! `wadm` for the test suite: the published `wadm` library driven the way wadm's own binary
//! drives it (that binary's package is not published on crates.io).

use std::io::IsTerminal;

use anyhow::Context;
use clap::Parser;
use tokio::signal::unix::{signal, SignalKind};
use tracing_subscriber::EnvFilter;
use wadm::config::WadmConfig;

fn main() -> anyhow::Result<()> {
    // wadm formats put's anyhow parse errors with `{e:?}` into the API reply, so RUST_BACKTRACE=1
    // in the caller's environment would add a stack trace to those replies that production wadm
    // (run without it) never sends. Keep replies deterministic unless RUST_LIB_BACKTRACE is set
    // explicitly; panics still honour RUST_BACKTRACE. Set while still single-threaded.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    tokio::runtime::Runtime::new()?.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    // Same flags and WADM_* env vars as the real binary (the `cli` feature derives the parser).
    let config = WadmConfig::parse();

    // `start_wadm` installs no logger. Logs go to stderr so stdout stays free for callers, without
    // colour codes when captured to a file; `-l` (JSON) is honoured so tests can parse the logs.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logger = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    if config.structured_logging {
        logger.json().init();
    } else {
        logger.init();
    }
    if config.tracing_enabled || config.tracing_endpoint.is_some() {
        // The upstream binary would export OTLP traces; we deliberately don't carry that stack.
        tracing::warn!("--tracing/--tracing-endpoint ignored: this build has no OTLP exporter");
    }

    let mut tasks = wadm::start_wadm(config)
        .await
        .context("failed to run wadm")?;

    // Tests stop us with SIGTERM, a terminal with SIGINT: both are a clean shutdown (exit 0).
    let mut sigterm =
        signal(SignalKind::terminate()).context("failed to install SIGTERM handler")?;
    tokio::select! {
        // The first task to finish decides: an error (or panic) exits 1 with it, as upstream does.
        res = tasks.join_next() => match res {
            Some(Ok(Err(e))) => return Err(e.context("wadm task failed")),
            Some(Err(e)) => return Err(anyhow::Error::new(e).context("wadm task panicked")),
            Some(Ok(Ok(()))) | None => tracing::warn!("a wadm task exited; shutting down"),
        },
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received; shutting down"),
        _ = sigterm.recv() => tracing::info!("SIGTERM received; shutting down"),
    }
    Ok(())
}
