//! A job's output, live: `o` (stdout) or `O` (stderr) on a Queue row opens
//! it in place of the table and asks the network task for the stream
//! (`Steps.TailOutput`, following); its keys scroll it, and Esc or `q`
//! closes it and stops the stream. Pieces of a closed view are dropped by
//! their generation.

use crate::model::action::{Action, Effect, OutputSpec, Rpc};
use crate::model::jobs::RowKey;
use crate::model::output::OutputView;
use crate::model::state::{Mode, State};
use crate::update::nav;

/// `o`/`O` on the Queue: the selected job's stdout or stderr.
pub fn open(state: &mut State, stderr: bool) -> Vec<Effect> {
    let Some(job) = nav::current_key(state).as_deref().and_then(RowKey::parse).map(|k| k.job()) else {
        state.info("no job selected");
        return Vec::new();
    };
    state.output_seq += 1;
    let sub = state.output_seq;
    state.output = Some(OutputView::new(job, stderr, sub));
    state.mode = Mode::Output;
    vec![Effect::Rpc(Rpc::Output(OutputSpec { sub, job, stderr }))]
}

/// The lines the view shows: the body less its title line.
pub fn height(state: &State) -> usize {
    usize::from(state.rows_area.height).max(1)
}

/// A key while the view is open.
pub fn key(state: &mut State, action: Action) -> Vec<Effect> {
    let h = height(state);
    let half = i64::try_from(h / 2).unwrap_or(1).max(1);
    let page = i64::try_from(h).unwrap_or(1).max(1);
    let Some(v) = state.output.as_mut() else {
        state.mode = Mode::Normal;
        return Vec::new();
    };
    match action {
        Action::Back | Action::Quit => return close(state),
        Action::Up => v.scroll(-1, h),
        Action::Down => v.scroll(1, h),
        Action::PageUp => v.scroll(-page, h),
        Action::PageDown => v.scroll(page, h),
        Action::HalfPageUp => v.scroll(-half, h),
        Action::HalfPageDown => v.scroll(half, h),
        Action::Scroll(n) => v.scroll(i64::from(n), h),
        Action::Top => v.top(h),
        Action::Bottom => v.bottom(),
        _ => {}
    }
    Vec::new()
}

/// Closes the view and stops its stream.
pub fn close(state: &mut State) -> Vec<Effect> {
    state.mode = Mode::Normal;
    // A plugin's process is not a stream of the controller's: it ends by itself, or at its timeout.
    let open = state.output.take().is_some_and(|v| v.ended.is_none() && v.label.is_empty());
    if open { vec![Effect::Rpc(Rpc::StopOutput)] } else { Vec::new() }
}

fn current(state: &mut State, sub: u64) -> Option<&mut OutputView> {
    state.output.as_mut().filter(|v| v.sub == sub)
}

/// A piece of the stream, or a line of its own.
pub fn on_piece(state: &mut State, sub: u64, data: &[u8], note: &str) {
    if let Some(v) = current(state, sub) {
        if !note.is_empty() {
            v.note(note);
        }
        v.push(data);
    }
}

/// The stream ended: the job's end, or why not.
pub fn on_ended(state: &mut State, sub: u64, error: Option<String>) {
    if let Some(v) = current(state, sub) {
        let (job, title) = (v.job, v.title());
        let plugin = !v.label.is_empty();
        let done = if plugin { "finished".to_string() } else { format!("job {job} has ended") };
        v.end(error.clone().unwrap_or(done));
        if let Some(e) = error {
            state.error(if plugin { format!("{title}: {e}") } else { format!("output of job {job}: {e}") });
        }
    }
}

/// The connection went: the stream with it.
pub fn lost(state: &mut State) {
    if let Some(v) = state.output.as_mut().filter(|v| v.ended.is_none() && v.label.is_empty()) {
        v.end("the connection to the controller was lost; esc, then o again".into());
    }
}
