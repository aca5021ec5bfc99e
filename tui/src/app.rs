//! The app loop: draw, wait for a terminal event or a network report,
//! dispatch, hand effects to the network task. The only place that owns
//! both the terminal and the channels.

use crate::cli::{self, Cli};
use crate::config;
use crate::model::action::{Action, Effect};
use crate::model::state::{Settings, State, ThemeName};
use crate::update::dispatch;
use crate::update::keys;
use crate::{net, terminal, views};
use crossterm::event::EventStream;
use spur_client::conn::Identity;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;

/// Run the console as the command line asks; returns when the operator quits.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = config::load(cli.config.as_deref())?;
    let mut settings = Settings::new(cli.controller_url());
    settings.identity = Identity::local();
    settings.read_only = cli.read_only;
    settings.mouse = cli.mouse;
    settings.keymap = config.keymap;
    settings.plugins = config.plugins;
    settings.theme = if cli::no_color() { ThemeName::Mono } else { config.theme };
    if cli.demo {
        return run_demo(settings).await;
    }
    run_console(settings).await
}

#[cfg(feature = "demo")]
async fn run_demo(mut settings: Settings) -> anyhow::Result<()> {
    let dir = tempfile::TempDir::new()?;
    let demo = spur_daemon::demo::start_demo(dir.path(), std::env::current_exe()?).await?;
    settings.controller = demo.url();
    let result = run_console(settings).await;
    demo.shutdown().await;
    drop(dir);
    result
}

#[cfg(not(feature = "demo"))]
async fn run_demo(_settings: Settings) -> anyhow::Result<()> {
    anyhow::bail!(
        "--demo needs spur-console built with the `demo` feature (cargo build -p spur-console --features demo)"
    )
}

/// The interactive loop against `settings.controller`.
pub async fn run_console(settings: Settings) -> anyhow::Result<()> {
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel();
    let (plugin_tx, controller) = (msg_tx.clone(), settings.controller.clone());
    let net = net::spawn(settings.controller.clone(), settings.identity.clone(), rpc_rx, msg_tx);
    terminal::install_panic_hook();
    let (mut term, guard) = terminal::enter(settings.mouse)?;
    let size = term.size()?;
    let mut state = State::new(settings, (size.width, size.height));
    let mut events = EventStream::new();
    let mut net_alive = true;
    let result = loop {
        if let Err(e) = term.draw(|f| views::render(&state, f)) {
            break Err(e.into());
        }
        let mut effects = tokio::select! {
            ev = events.next() => match ev {
                Some(Ok(ev)) => keys::on_event(&mut state, ev),
                Some(Err(e)) => break Err(e.into()),
                None => break Ok(()),
            },
            msg = msg_rx.recv(), if net_alive => match msg {
                Some(m) => dispatch(&mut state, Action::Net(m)),
                None => {
                    net_alive = false;
                    Vec::new()
                }
            },
        };
        // Whatever else the network reported meanwhile goes into this one frame:
        // a busy audit log must not cost a redraw per batch.
        while net_alive && let Ok(m) = msg_rx.try_recv() {
            effects.extend(dispatch(&mut state, Action::Net(m)));
        }
        if effects.contains(&Effect::Quit) {
            break Ok(());
        }
        for effect in effects {
            match effect {
                Effect::Rpc(rpc) => {
                    let _ = rpc_tx.send(rpc);
                }
                Effect::Run { sub, argv } => {
                    net::plugin::spawn(sub, argv, controller.clone(), plugin_tx.clone())
                }
                Effect::Quit => {}
            }
        }
    };
    drop(guard);
    drop(rpc_tx);
    net.abort();
    result
}
