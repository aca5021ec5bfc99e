//! The `:` command line (parsing, Tab completion) and the `/` filter
//! prompt, which share one line. Called only from [`crate::update`]: a
//! submitted command goes back to dispatch to run, since running one
//! switches panes.

use crate::model::action::Action;
use crate::model::filter::Filter;
use crate::model::pane::PaneId;
use crate::model::state::{Mode, State};
use crate::update::nav;
use tui_input::Input;

/// A parsed `:` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Pane(PaneId),
    /// `:explain ID` opens the Preemption pane for one job.
    Explain(u64),
    Help,
    Quit,
    /// `:queue all`: the merged Queue of every context.
    QueueAll,
    /// `:ctx` lists the contexts, `:ctx NAME` switches to one.
    Context(Option<String>),
}

/// The commands that are not a pane's name.
const OTHER_COMMANDS: [&str; 4] = ["ctx", "explain", "help", "quit"];

/// Completable command names, sorted: each pane's name (its declaration's
/// first) and the others (aliases such as `q` are accepted but not offered).
pub fn commands() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = PaneId::ALL.iter().map(|p| p.name()).chain(OTHER_COMMANDS).collect();
    all.sort_unstable();
    all
}

pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim().trim_start_matches(':');
    let mut words = line.split_whitespace();
    let Some(name) = words.next() else {
        return Err("empty command (try Tab)".into());
    };
    let arg = words.next();
    if words.next().is_some() {
        return Err(format!(":{name}: too many arguments"));
    }
    let pane = PaneId::named(name);
    match (name, pane, arg) {
        (_, Some(p), None) => Ok(Command::Pane(p)),
        (_, Some(PaneId::Queue), Some("all")) => Ok(Command::QueueAll),
        ("explain", _, Some(id)) => {
            id.parse().map(Command::Explain).map_err(|_| format!(":explain: '{id}' is not a job id"))
        }
        ("explain", _, None) => Err("usage: :explain JOBID".into()),
        ("ctx" | "context", None, arg) => Ok(Command::Context(arg.map(str::to_string))),
        ("q" | "quit" | "q!" | "qa", _, None) => Ok(Command::Quit),
        ("help" | "h", _, None) => Ok(Command::Help),
        (_, Some(_), Some(_)) | ("q" | "quit" | "help", _, Some(_)) => {
            Err(format!(":{name} takes no argument"))
        }
        _ => Err(format!("unknown command :{name} (Tab completes)")),
    }
}

/// The result of pressing Tab on a partial command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The new line contents (unchanged when nothing can be added).
    pub line: String,
    /// Every command the typed prefix could still become.
    pub candidates: Vec<&'static str>,
}

pub fn complete(line: &str) -> Completion {
    let trimmed = line.trim_start();
    if trimmed.contains(char::is_whitespace) {
        // Arguments (job ids) are not completable yet.
        return Completion { line: line.to_string(), candidates: Vec::new() };
    }
    let candidates: Vec<&'static str> = commands().into_iter().filter(|c| c.starts_with(trimmed)).collect();
    let line = match candidates.as_slice() {
        [] => line.to_string(),
        [only] if *only == "explain" || *only == "ctx" => format!("{only} "),
        [only] => (*only).to_string(),
        many => common_prefix(many),
    };
    Completion { line, candidates }
}

fn common_prefix(words: &[&str]) -> String {
    let first = words.first().copied().unwrap_or_default();
    let len = words.iter().fold(first.len(), |len, w| {
        first.bytes().zip(w.bytes()).take(len).take_while(|(a, b)| a == b).count()
    });
    first[..len].to_string()
}

/// A key in the `:` or `/` prompt; a submitted command is returned to run.
/// The filter applies on every key, so the rows narrow while typing.
pub fn prompt(state: &mut State, action: Action) -> Option<Command> {
    let is_filter = matches!(state.mode, Mode::Filter(_));
    let (Mode::Command(p) | Mode::Filter(p)) = &mut state.mode else {
        return None;
    };
    match action {
        Action::Input(req) => {
            p.input.handle(req);
            p.hint = None;
            if is_filter {
                let text = p.input.value().to_string();
                match Filter::parse(&text) {
                    Ok(f) => nav::set_filter(state, f),
                    Err(e) => p.hint = Some(e),
                }
            }
        }
        Action::Complete if !is_filter => {
            let c = complete(p.input.value());
            p.input = Input::new(c.line);
            p.hint = (c.candidates.len() != 1).then(|| match c.candidates.as_slice() {
                [] => "no such command".to_string(),
                many => many.join(" "),
            });
        }
        Action::Submit if is_filter => match Filter::parse(p.input.value()) {
            Ok(f) => {
                nav::set_filter(state, f);
                state.mode = Mode::Normal;
            }
            Err(e) => p.hint = Some(e),
        },
        Action::Submit => match parse(p.input.value()) {
            Ok(cmd) => {
                state.mode = Mode::Normal;
                return Some(cmd);
            }
            Err(e) => p.hint = Some(e),
        },
        Action::Back => {
            state.mode = Mode::Normal;
            if is_filter {
                nav::set_filter(state, None);
            }
        }
        _ => {}
    }
    None
}
