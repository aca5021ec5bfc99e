//! The Overview pane's body: partitions with their nodes by state and
//! allocation bars, pending reasons (the pane's selectable rows) beside the
//! accounts running the most, and the scheduler's figures with sparklines
//! of the last hour. Only draws what `model::overview` added up when the
//! data changed; sections shrink, then go, as the terminal gets smaller.

use crate::model::format::width;
use crate::model::overview::{Overview, Partition, SLOWEST_RPCS, Sums, Use, bar, slowest};
use crate::model::state::State;
use crate::model::table::TableModel;
use crate::model::view::PaneView;
use crate::views::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};
use spur_proto::v1::DiagResponse;

/// The widths of a partition row's fixed cells: name, nodes, then the five state counts.
const NAME_W: usize = 12;
const COUNT_W: usize = 6;
const STATES: [&str; 5] = ["idle", "alloc", "mix", "drain", "down"];

/// An allocation bar: its heading and what it shows of a partition.
type Bar = (&'static str, fn(&Partition) -> Use);

pub fn draw(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    if area.height == 0 || area.width < 4 {
        return;
    }
    let ov = &state.overview;
    let sums: &Sums = &ov.sums;
    let h = area.height;
    // The scheduler's block: its figures, then sparklines when there is room.
    // A label line and the bars: a quarter of the height, within reason.
    let spark = if h < 12 { 0 } else { (h / 4).min(12) };
    let sched_h = (2 + spark).min(h);
    let parts_rows = sums.partitions.len().max(1) as u16;
    let parts_h = (1 + parts_rows).min(h.saturating_sub(sched_h) / 2).max(1).min(h);
    let [parts, middle, sched] =
        Layout::vertical([Constraint::Length(parts_h), Constraint::Min(0), Constraint::Length(sched_h)])
            .areas(area);
    partitions(state, sums, theme, frame, parts);
    if middle.height > 0 {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(middle);
        if let Some(model) = state.table(state.pane) {
            reasons(sums, &model, state.view(), theme, frame, left);
        }
        accounts(sums, theme, frame, right);
    }
    scheduler(ov, theme, frame, sched);
}

fn title(text: String, theme: Theme) -> Line<'static> {
    Line::styled(text, theme.header())
}

/// Cut `s` to `w` columns.
fn cut(s: &str, w: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let mut buf = [0u8; 4];
    for c in s.chars() {
        used += usize::from(width(c.encode_utf8(&mut buf)));
        if used > w {
            break;
        }
        out.push(c);
    }
    out
}

/// `█████░░░ 63%` in `w` columns (the bar takes what the percentage leaves).
fn bar_cell(u: Use, w: usize) -> String {
    if u.total == 0 {
        return format!("{:<w$}", "-");
    }
    let pct = format!(" {:>3.0}%", u.ratio() * 100.0);
    format!("{}{pct}", bar(u.ratio(), w.saturating_sub(pct.len())))
}

fn partitions(state: &State, sums: &Sums, theme: Theme, frame: &mut Frame, area: Rect) {
    let w = usize::from(area.width);
    let fixed = NAME_W + COUNT_W * (1 + STATES.len());
    let bars: Vec<Bar> = {
        let mut b: Vec<Bar> = vec![("CPU", |p| p.cpus), ("Mem", |p| p.mem)];
        if sums.gpus {
            b.push(("GPU", |p| p.gpus));
        }
        // A bar narrower than 8 columns says nothing: fewer bars, GPU first to go.
        while !b.is_empty() && w.saturating_sub(fixed) / b.len() < 9 {
            b.pop();
        }
        b
    };
    let bar_w = if bars.is_empty() { 0 } else { (w.saturating_sub(fixed) / bars.len()).min(30) };
    let mut header = format!("{:<NAME_W$}{:>COUNT_W$}", "Partition", "Nodes");
    for s in STATES {
        header.push_str(&format!("{s:>COUNT_W$}"));
    }
    for (name, _) in &bars {
        header.push_str(&format!(" {:<w$}", name, w = bar_w.saturating_sub(1)));
    }
    let mut lines = vec![title(cut(&header, w), theme)];
    if state.nodes.list.is_none() {
        lines.push(Line::styled("no nodes yet (the cluster watch sends them)", theme.dim()));
    }
    for p in &sums.partitions {
        let n = p.nodes;
        let mut row = format!("{:<NAME_W$}{:>COUNT_W$}", cut(&p.name, NAME_W - 1), n.total());
        for c in [n.idle, n.alloc, n.mix, n.drain, n.down] {
            row.push_str(&format!("{c:>COUNT_W$}"));
        }
        for (_, of) in &bars {
            row.push(' ');
            row.push_str(&bar_cell(of(p), bar_w.saturating_sub(1)));
        }
        // Drained or down nodes make the row stand out, in BOLD as well as colour.
        let style = if n.down > 0 {
            theme.node_down()
        } else if n.drain > 0 {
            theme.node_drain()
        } else {
            Style::default()
        };
        lines.push(Line::styled(cut(&row, w), style));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn reasons(sums: &Sums, model: &TableModel, view: &PaneView, theme: Theme, frame: &mut Frame, area: Rect) {
    let w = usize::from(area.width.saturating_sub(1));
    let head = format!("Pending by reason ({} jobs)", sums.pending);
    let mut lines = vec![title(cut(&head, w), theme)];
    let visible = usize::from(area.height.saturating_sub(1));
    let n = model.rows.len();
    if n == 0 {
        let empty = if model.total == 0 { "no jobs are pending" } else { "no reason matches the filter" };
        lines.push(Line::styled(empty, theme.dim()));
    }
    // The selected row stays in view whatever the height.
    let mut first = view.offset.min(view.selected);
    if visible > 0 && view.selected >= first + visible {
        first = view.selected + 1 - visible;
    }
    let count_w = 7;
    for i in first..(first + visible).min(n) {
        let Some(row) = model.rows.get(i) else { break };
        let count = row.cells.get(1).cloned().unwrap_or_default();
        let name = cut(&row.cells[0], w.saturating_sub(count_w + 2));
        let text = format!("{name:<nw$}{count:>count_w$}", nw = w.saturating_sub(count_w));
        let style = if i == view.selected { theme.selected() } else { Style::default() };
        lines.push(Line::styled(text, style));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn accounts(sums: &Sums, theme: Theme, frame: &mut Frame, area: Rect) {
    let w = usize::from(area.width);
    let head = format!("Top accounts ({} running)", sums.running);
    let mut lines = vec![title(cut(&head, w), theme)];
    if sums.accounts.is_empty() {
        lines.push(Line::styled("no jobs are running", theme.dim()));
    }
    let most = sums.accounts.first().map_or(1, |a| a.cpus.max(1));
    for a in &sums.accounts {
        let figures = format!(" {:>6} CPUs {:>5} jobs", a.cpus, a.jobs);
        let name_w = 12.min(w.saturating_sub(figures.len()));
        let bar_w = w.saturating_sub(name_w + figures.len() + 1).min(30);
        let share = a.cpus as f64 / most as f64;
        // Jobs of a cluster without accounting are charged to no account.
        let name = if a.account.is_empty() { "(none)" } else { &*a.account };
        let text = format!("{:<name_w$}{figures} {}", cut(name, name_w.saturating_sub(1)), bar(share, bar_w));
        lines.push(Line::raw(cut(&text, w)));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// A figure, or `-` before the controller's first sample.
fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".into())
}

fn scheduler(ov: &Overview, theme: Theme, frame: &mut Frame, area: Rect) {
    if area.height == 0 {
        return;
    }
    let w = usize::from(area.width);
    let Some(d) = ov.diag.as_deref() else {
        let text = match (&ov.diag_error, ov.unsupported) {
            (_, true) => "Scheduler: sdiag's figures are not available from this controller".to_string(),
            (Some(e), _) => format!("✗ Scheduler: {e} (r retries)"),
            (None, _) => "Scheduler: reading sdiag's figures…".to_string(),
        };
        let style = if ov.diag_error.is_some() { theme.error() } else { theme.dim() };
        frame.render_widget(Paragraph::new(Line::styled(cut(&text, w), style)), area);
        return;
    };
    let last = d.history.last();
    let figures = format!(
        "Scheduler  last pass {:.1} ms · starts {}/min · backfill {}/min · {} RPC/s",
        d.schedule_cycle_last as f64 / 1000.0,
        or_dash(last.map(|s| s.jobs_started.to_string())),
        or_dash(last.map(|s| s.bf_backfilled_jobs.to_string())),
        or_dash(last.map(|s| format!("{:.1}", s.rpcs_per_sec))),
    );
    let slow: Vec<String> =
        slowest(&d.rpcs, SLOWEST_RPCS).into_iter().map(|(name, ms)| format!("{name} {ms:.1} ms")).collect();
    let slow = if slow.is_empty() { "none yet".to_string() } else { slow.join(", ") };
    let mut lines = vec![
        Line::from(vec![Span::styled(cut(&figures, w), theme.header())]),
        Line::raw(cut(&format!("Slowest RPCs  {slow}"), w)),
    ];
    if let Some(e) = &ov.diag_error {
        lines[1] = Line::styled(cut(&format!("✗ {e} (figures from the last read)"), w), theme.error());
    }
    let [text, sparks] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(lines), text);
    if sparks.height >= 2 {
        sparklines(d, theme, frame, sparks);
    }
}

/// The last hour, a minute a bar: pass time, starts, backfill starts, RPC/s.
fn sparklines(d: &DiagResponse, theme: Theme, frame: &mut Frame, area: Rect) {
    let series: [(&str, Vec<u64>); 4] = [
        ("pass ms", d.history.iter().map(|s| s.last_pass_us / 1000).collect()),
        ("starts/min", d.history.iter().map(|s| s.jobs_started).collect()),
        ("backfill/min", d.history.iter().map(|s| s.bf_backfilled_jobs).collect()),
        ("RPC/s", d.history.iter().map(|s| s.rpcs_per_sec.round() as u64).collect()),
    ];
    // Four side by side when each gets 16 columns, else the first two.
    let shown = if area.width >= 64 { 4 } else { 2 };
    let cols = Layout::horizontal(vec![Constraint::Ratio(1, shown); shown as usize]).split(area);
    for ((label, data), col) in series.iter().zip(cols.iter()) {
        let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(*col);
        let max = data.iter().copied().max().unwrap_or(0);
        let text = format!("{label} max {max}");
        let room = usize::from(head.width.saturating_sub(1));
        frame.render_widget(Paragraph::new(Line::styled(cut(&text, room), theme.dim())), head);
        // The newest minute at the right edge, as k9s's pulses read.
        let n = usize::from(body.width.saturating_sub(1));
        let tail = &data[data.len().saturating_sub(n)..];
        frame.render_widget(Sparkline::default().data(tail).style(theme.key()), body);
    }
}
