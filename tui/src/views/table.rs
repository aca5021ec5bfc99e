//! The pane body: a table for panes with data, one line for the others.

use crate::model::audit::{AuditLog, TailStatus};
use crate::model::format::width;
use crate::model::jobs::StateFilter;
use crate::model::layout;
use crate::model::pane::PaneId;
use crate::model::queue::Status;
use crate::model::state::{Conn, State};
use crate::model::table::{Alert, TableModel, Target};
use crate::model::view::PaneView;
use crate::views::theme::{MARK, Theme};
use ratatui::Frame;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState, Wrap};

/// Width left for data columns after the mark column and its spacing.
fn data_width(area: Rect) -> u16 {
    area.width.saturating_sub(2)
}

/// (column index, width) of the columns shown, and how many are hidden
/// (for want of room: a sparse column left out as empty is not hidden).
pub fn fitted(view: &PaneView, model: &TableModel, area: Rect) -> (Vec<(usize, u16)>, usize) {
    let sort_col = view.sort.map(|(c, _)| c);
    let cols = fit_columns(model, data_width(area), sort_col);
    let unused = (0..model.columns.len()).filter(|&i| unused(model, i, sort_col)).count();
    let hidden = model.columns.len() - cols.len() - unused;
    (cols, hidden)
}

fn note(frame: &mut Frame, area: Rect, line: Line) {
    frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: true }), area);
}

/// Why the Nodes pane has no table yet: still connecting, refused, or a
/// controller without `Cluster.Watch`.
fn nodes_note(watch_error: Option<&str>, conn: &Conn) -> (String, bool) {
    match (watch_error, conn) {
        (_, Conn::Reconnecting { .. } | Conn::Disconnected) => {
            ("no data: the controller is unreachable".into(), false)
        }
        (Some(e), _) => (format!("✗ Nodes unavailable: the controller refused the cluster watch: {e}"), true),
        (None, Conn::Connecting) => ("loading…".into(), false),
        (None, Conn::Connected) => ("Nodes: not available from this controller yet.".into(), false),
    }
}

/// Why the Queue pane has no jobs to show yet.
fn queue_note(status: &Status, conn: &Conn) -> (String, bool) {
    match (status, conn) {
        (_, Conn::Reconnecting { .. } | Conn::Disconnected) => {
            ("no data: the controller is unreachable".into(), false)
        }
        (Status::Unsupported, _) => ("Queue: not available from this controller yet.".into(), false),
        (Status::Failed(e), _) => (format!("✗ jobs unavailable: {e} (r retries)"), true),
        (Status::Loading | Status::Loaded, _) => ("loading…".into(), false),
    }
}

/// What the Audit pane says while it has no rows, and whether that is an error.
fn audit_note(log: &AuditLog) -> (String, bool) {
    match &log.status {
        TailStatus::Failed(reason) => (format!("✗ audit log unavailable: {reason} (r retries)"), true),
        TailStatus::Idle | TailStatus::Loading => ("loading the txn log…".into(), false),
        TailStatus::Live if !log.filter.is_empty() => {
            (format!("no txn rows match {} yet (f changes the filter)", log.filter_text), false)
        }
        TailStatus::Live => ("no txn rows yet; new ones appear here as they commit".into(), false),
    }
}

/// The pane body: the pane's table, or the one line that says why there is none.
pub fn pane(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    if state.pane == PaneId::Queue && state.queue.jobs.is_none() {
        let (text, error) = queue_note(&state.queue.status, &state.conn);
        note(frame, area, Line::styled(text, if error { theme.error() } else { theme.dim() }));
        return;
    }
    if state.pane == PaneId::Nodes && state.nodes.list.is_none() {
        let (text, error) = nodes_note(state.watch_error.as_deref(), &state.conn);
        note(frame, area, Line::styled(text, if error { theme.error() } else { theme.dim() }));
        return;
    }
    let summary = state.summary();
    let (top, area) = layout::split_summary(area, &summary);
    if top.height > 0 {
        let lines: Vec<Line> = (summary.into_iter())
            .map(|(text, error)| Line::styled(text, if error { theme.error() } else { Default::default() }))
            .collect();
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), top);
    }
    let Some(model) = state.table(state.pane) else {
        let text = format!("{}: not available from this controller yet.", state.pane.title());
        note(frame, area, Line::styled(text, theme.dim()));
        return;
    };
    if state.pane == PaneId::Audit && model.rows.is_empty() && model.total == 0 {
        // The tail's state is what an empty log means: loading, refused or quiet.
        let (text, error) = audit_note(&state.audit);
        note(frame, area, Line::styled(text, if error { theme.error() } else { theme.dim() }));
        return;
    }
    if !matches!(state.pane, PaneId::Audit | PaneId::Nodes | PaneId::Queue | PaneId::Preempt)
        && state.accounting.data.is_none()
    {
        let text = match state.conn {
            Conn::Connected | Conn::Connecting => "loading…",
            Conn::Reconnecting { .. } | Conn::Disconnected => "no data: the controller is unreachable",
        };
        note(frame, area, Line::styled(text, theme.dim()));
        return;
    }
    table(&model, state.view(), state.pane, theme, frame, area);
}

/// One pane's table: only the rows on screen are built.
fn table(model: &TableModel, view: &PaneView, pane: PaneId, theme: Theme, frame: &mut Frame, area: Rect) {
    let (cols, _) = fitted(view, model, area);
    let header = Row::new(std::iter::once(Cell::from("")).chain(cols.iter().map(|&(i, _)| {
        let c = model.columns[i];
        let arrow = match view.sort {
            Some((s, false)) if s == i => "▲",
            Some((s, true)) if s == i => "▼",
            _ => "",
        };
        Cell::from(format!("{}{arrow}", c.name))
    })))
    .style(theme.header());
    // Only the rows on screen are built and become widgets: the Queue may
    // hold 100,000 jobs, and the Audit pane redraws several times a second.
    let shown = usize::from(area.height.saturating_sub(1));
    let first = view.offset.min(model.rows.len());
    let window = model.rows.window(first, shown);
    let rows = window.iter().map(|r| {
        let marked = view.marks.contains(&r.key);
        let mark = if marked { Cell::from(Span::styled(MARK, theme.marked())) } else { Cell::from(" ") };
        let cells = cols.iter().map(|&(i, _)| {
            let text = r.cells.get(i).map(String::as_str).unwrap_or_default();
            let text = if i == 0 { format!("{}{text}", r.prefix) } else { text.to_string() };
            let line = Line::from(text);
            Cell::from(if model.columns[i].numeric { line.alignment(Alignment::Right) } else { line })
        });
        let style = match (r.alert, &r.target) {
            (Some(Alert::Denied), _) => theme.denied(),
            (Some(Alert::Error), _) => theme.failed(),
            (Some(Alert::Down), _) => theme.node_down(),
            (Some(Alert::Drain), _) => theme.node_drain(),
            (Some(Alert::NotResponding), _) => theme.node_lost(),
            (Some(Alert::JobFailed), _) => theme.denied(),
            (Some(Alert::JobEnded), _) => theme.dim(),
            (None, Target::Account(_) | Target::Root) => theme.account(),
            _ => theme.plain(),
        };
        Row::new(std::iter::once(mark).chain(cells)).style(style)
    });
    let widths =
        std::iter::once(Constraint::Length(1)).chain(cols.iter().map(|&(_, w)| Constraint::Length(w)));
    let table =
        Table::new(rows, widths).header(header).column_spacing(1).row_highlight_style(theme.selected());
    let selected = view.selected.checked_sub(first);
    let mut ts = TableState::default().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut ts);
    if model.rows.is_empty() {
        let msg = match view.job_states {
            _ if view.filter.is_some() => "no rows match the filter (esc clears it)".to_string(),
            // Only the Queue's `t` sets a state filter.
            StateFilter::All => pane.decl().empty.to_string(),
            s => format!("no {} jobs", s.label()),
        };
        let below = Rect { y: area.y.saturating_add(1), height: area.height.saturating_sub(1), ..area };
        note(frame, below, Line::styled(msg, theme.dim()));
    }
}

/// The widest cell of column `i` (an ID cell with its tree glyphs).
fn widest(model: &TableModel, i: usize) -> u16 {
    match &model.cell_widths {
        Some(w) => w.get(i).copied().unwrap_or(0),
        None => (model.rows.built().iter())
            .map(|r| {
                let cell = r.cells.get(i).map(String::as_str).unwrap_or_default();
                if i == 0 { width(&r.prefix).saturating_add(width(cell)) } else { width(cell) }
            })
            .max()
            .unwrap_or(0),
    }
}

/// A sparse column no row has a value in, left out unless it is sorted by
/// (its header then says what the order is).
fn unused(model: &TableModel, i: usize, sort_col: Option<usize>) -> bool {
    model.columns[i].sparse && Some(i) != sort_col && widest(model, i) == 0
}

/// Pick the columns that fit in `width` and their widths, dropping the least
/// important first. The first column and the sort column always stay.
pub fn fit_columns(model: &TableModel, avail: u16, sort_col: Option<usize>) -> Vec<(usize, u16)> {
    let columns = model.columns;
    // What each column would take uncapped; the cap gives its natural width.
    let wanted: Vec<u16> = (columns.iter().enumerate())
        .map(|(i, c)| widest(model, i).max(width(c.name) + u16::from(Some(i) == sort_col)))
        .collect();
    let natural: Vec<u16> = wanted.iter().zip(columns).map(|(&w, c)| w.min(c.max).max(1)).collect();
    let mut keep: Vec<usize> = (0..columns.len()).filter(|&i| !unused(model, i, sort_col)).collect();
    let total = |keep: &[usize]| -> u32 {
        keep.iter().map(|&i| u32::from(natural[i])).sum::<u32>() + keep.len().saturating_sub(1) as u32
    };
    while total(&keep) > u32::from(avail) {
        let victim = keep
            .iter()
            .copied()
            .filter(|&i| i != 0 && Some(i) != sort_col)
            .max_by_key(|&i| (columns[i].priority, i));
        match victim {
            Some(v) => keep.retain(|&i| i != v),
            None => break,
        }
    }
    let mut fitted: Vec<(usize, u16)> = keep.iter().map(|&i| (i, natural[i])).collect();
    // The cap keeps a long cell from pushing other columns out; on a wide
    // terminal the last column may take the room left over, which pushes
    // nothing. All of what it wants or nothing: a few more characters of a
    // cut cell only make a ragged edge.
    let spare = u32::from(avail).saturating_sub(total(&keep));
    if let Some((i, w)) = fitted.last_mut()
        && u32::from(wanted[*i].saturating_sub(*w)) <= spare
    {
        *w = wanted[*i].max(*w);
    }
    fitted
}
