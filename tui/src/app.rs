//! The app loop: draw, wait for a terminal event or a network report,
//! dispatch, hand effects to the network task. The only place that owns
//! both the terminal and the channels.

use crate::cli::{self, Cli};
use crate::config;
use crate::model::action::{Action, Effect, Msg, Rpc};
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
    settings.local_token = settings.identity.token.clone();
    settings.contexts.all = config.contexts;
    if let Some(name) =
        cli.context.or(config.default_context).filter(|_| cli.controller.is_none() && !cli.demo)
    {
        let Some(i) = settings.contexts.find(&name) else {
            let known = settings.contexts.names().join(", ");
            if known.is_empty() {
                anyhow::bail!("--context {name}: console.toml has no [[contexts]]");
            }
            anyhow::bail!("--context {name}: no such context in console.toml (known: {known})");
        };
        settings.enter_context(i);
    }
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
    let (mut rpc_tx, mut msg_rx, mut net) = connect(&settings);
    // Plugins' output comes back here, whichever cluster the console is on by then.
    let (plugin_tx, mut plugin_rx) = mpsc::unbounded_channel();
    terminal::install_panic_hook();
    let (mut term, guard) = terminal::enter(settings.mouse)?;
    let size = term.size()?;
    let mut state = State::new(settings, (size.width, size.height));
    let mut events = EventStream::new();
    let mut net_alive = true;
    // The merged Queue's connections, one per context, reporting into one channel.
    let mut remotes = Remotes::default();
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
            Some(m) = plugin_rx.recv() => dispatch(&mut state, Action::Net(m)),
            Some((ctx, m)) = remotes.rx.recv() => {
                dispatch(&mut state, Action::Net(Msg::Remote { ctx, msg: Box::new(m) }))
            }
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
                // A new context: the old connection's task, streams and unread reports all go.
                Effect::Connect => {
                    net.abort();
                    (rpc_tx, msg_rx, net) = connect(&state.settings);
                    net_alive = true;
                    remotes = Remotes::default();
                }
                Effect::Merge(open) => {
                    remotes = if open { Remotes::open(&state.settings) } else { Remotes::default() }
                }
                Effect::RpcTo(ctx, rpc) => {
                    if let Some(tx) = remotes.rpcs.get(ctx) {
                        let _ = tx.send(rpc);
                    }
                }
                Effect::Run { sub, argv } => {
                    net::plugin::spawn(sub, argv, state.settings.controller.clone(), plugin_tx.clone())
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

/// The merged Queue's connections: a network task per context, its
/// reports tagged with the context's index. Dropping it stops them all, and
/// reports still queued go with the channel.
struct Remotes {
    rpcs: Vec<mpsc::UnboundedSender<Rpc>>,
    rx: mpsc::UnboundedReceiver<(usize, Msg)>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Default for Remotes {
    fn default() -> Remotes {
        let (_, rx) = mpsc::unbounded_channel();
        Remotes { rpcs: Vec::new(), rx, tasks: Vec::new() }
    }
}

impl Remotes {
    fn open(settings: &Settings) -> Remotes {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut remotes = Remotes { rpcs: Vec::new(), rx, tasks: Vec::new() };
        for i in 0..settings.contexts.all.len() {
            let mut on = settings.clone();
            on.enter_context(i);
            let (rpc_tx, mut msg_rx, net) = connect(&on);
            let tx = tx.clone();
            let forward = tokio::spawn(async move {
                while let Some(m) = msg_rx.recv().await {
                    if tx.send((i, m)).is_err() {
                        return;
                    }
                }
            });
            remotes.rpcs.push(rpc_tx);
            remotes.tasks.extend([net, forward]);
        }
        remotes
    }
}

impl Drop for Remotes {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

type Net = (mpsc::UnboundedSender<Rpc>, mpsc::UnboundedReceiver<Msg>, tokio::task::JoinHandle<()>);

/// A network task for `settings.controller`, with its own channels.
fn connect(settings: &Settings) -> Net {
    let (rpc_tx, rpc_rx) = mpsc::unbounded_channel();
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let net = net::spawn(settings.controller.clone(), settings.identity.clone(), rpc_rx, msg_tx);
    (rpc_tx, msg_rx, net)
}
