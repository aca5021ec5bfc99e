//! The one-line bars: pane tabs, breadcrumb, the unreachable banner, the
//! prompt/message line and the status bar.

use crate::model::action::Action;
use crate::model::audit::{AuditLog, TailStatus};
use crate::model::jobs::{RowKey, StateFilter};
use crate::model::layout;
use crate::model::pane::{Offered, PaneId};
use crate::model::session;
use crate::model::state::{Conn, Mode, OnController, Prompt, State};
use crate::views::table;
use crate::views::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Full titles, a blank apart, when they all fit; otherwise the short ones
/// side by side (each label is padded already), so nine panes still fit 80
/// columns. When even those do not and the current tab would be cut off,
/// the first tabs are left out until it shows.
pub fn tabs(current: PaneId, theme: Theme, frame: &mut Frame, area: Rect) {
    type Title = fn(PaneId) -> &'static str;
    let label = |p: PaneId, title: Title, pad: bool| {
        // Panes past the tenth have no number key: their title alone.
        let key = p.key().map_or(String::new(), |k| format!("{k} "));
        if pad { format!(" {key}{} ", title(p)) } else { format!("{key}{} ", title(p)) }
    };
    // The first that fits: full titles with gaps, without, short titles,
    // then short ones without the leading pad, so every number shows at 80 columns.
    let tiers: [(Title, &str, bool); 4] = [
        (PaneId::title, " ", true),
        (PaneId::title, "", true),
        (PaneId::short_title, "", true),
        (PaneId::short_title, "", false),
    ];
    let width = |&(title, gap, pad): &(Title, &str, bool)| -> usize {
        PaneId::ALL.iter().map(|&p| label(p, title, pad).chars().count() + gap.len()).sum()
    };
    let (title, gap, pad) =
        tiers.into_iter().find(|t| width(t) <= usize::from(area.width)).unwrap_or(tiers[3]);
    let tab = |p: PaneId| label(p, title, pad).chars().count() + gap.len();
    let upto: usize = PaneId::ALL[..=current.index()].iter().map(|&p| tab(p)).sum();
    let (mut skip, mut over) = (0, upto.saturating_sub(usize::from(area.width)));
    while over > 0 && skip < current.index() {
        over = over.saturating_sub(tab(PaneId::ALL[skip]));
        skip += 1;
    }
    let spans: Vec<Span> = PaneId::ALL
        .iter()
        .skip(skip)
        .flat_map(|&p| {
            let style = if p == current { theme.selected() } else { theme.tab() };
            [Span::styled(label(p, title, pad), style), Span::raw(gap)]
        })
        .collect();
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn breadcrumb(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    let cluster = state.accounting.data.as_ref().map(|d| d.cluster.as_str()).filter(|c| !c.is_empty());
    let root = match cluster.or(state.session.as_ref().map(|s| s.cluster.as_str())) {
        Some(c) if !c.is_empty() => format!("spur:{c}"),
        _ => "spur".to_string(),
    };
    let mut parts = vec![root, state.pane.title().to_string()];
    if let (PaneId::Preempt, Some(job)) = (state.pane, state.preempt.job) {
        parts.push(format!("job {job}"));
    }
    // The bottom layer: a detail view stays named under help or a dialog.
    let detail_key = match state.mode.layers().first() {
        Some(Mode::Detail { key, .. }) => Some(key),
        _ => None,
    };
    if let Some(key) = detail_key {
        let title = state.detail(state.pane, key).map(|d| d.crumb).unwrap_or_else(|| key.clone());
        parts.push(title);
    } else if let Some(model) = state.table(state.pane) {
        let v = state.view();
        parts.push(match model.rows.len() {
            n if n == model.total => format!("{n} rows"),
            n => format!("{n} of {} rows", model.total),
        });
        if let (PaneId::Queue, Some(m)) = (state.pane, &state.merged) {
            parts.push(m.crumb());
        }
        if state.pane == PaneId::Queue && v.job_states != StateFilter::All {
            parts.push(format!("{} only", v.job_states.label()));
        }
        if let Some(f) = &v.filter {
            parts.push(format!("filter {}", f.text));
        }
        if let Some((c, desc)) = v.sort {
            let name = model.columns.get(c).map(|c| c.name).unwrap_or("?");
            parts.push(format!("sort {name}{}", if desc { "▼" } else { "▲" }));
        }
        if !v.marks.is_empty() {
            parts.push(format!("{} marked", v.marks.len()));
        }
        if state.pane == PaneId::Audit {
            parts.extend(audit_crumbs(&state.audit, &state.conn));
        }
        let body = layout::areas(layout::screen(frame.area(), state.framed()), state.shows_banner()).body;
        let (_, hidden) = table::fitted(v, &model, body);
        if hidden > 0 {
            parts.push(format!("{hidden} cols hidden (enter: all)"));
        }
    }
    let mut spans = vec![Span::styled(parts.join(" › "), theme.header())];
    if state.loading {
        spans.push(Span::styled("  ⟳ loading", theme.dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The Audit pane's filter and whether it is live or paused (with the count held back).
fn audit_crumbs(log: &AuditLog, conn: &Conn) -> Vec<String> {
    let mut parts = Vec::new();
    if !log.filter_text.is_empty() {
        parts.push(format!("where {}", log.filter_text));
    }
    let connected = *conn == Conn::Connected;
    if log.paused {
        parts.push(format!("⏸ paused, {} new (p resumes)", log.arrived));
    } else if !connected && log.status != TailStatus::Idle {
        // Say where it picks up, so an operator knows nothing is lost meanwhile.
        match log.last_id {
            Some(id) => parts.push(format!("○ offline, resumes after #{id}")),
            None => parts.push("○ offline".into()),
        }
    } else if log.status == TailStatus::Live {
        parts.push("● live".into());
    }
    parts
}

pub fn banner(conn: &Conn, last_error: Option<&str>, theme: Theme, frame: &mut Frame, area: Rect) {
    let err = last_error.unwrap_or("");
    let head = match conn {
        Conn::Reconnecting { attempt, retry_in } => format!(
            " ⚠ controller unreachable — retry {attempt} in {:.1}s (r: retry now)",
            retry_in.as_secs_f32()
        ),
        Conn::Disconnected => " ✖ disconnected from the controller; restart the console to retry".to_string(),
        Conn::Connecting | Conn::Connected => String::new(),
    };
    let lines = vec![Line::from(head), Line::from(format!("   {err}"))];
    frame.render_widget(Paragraph::new(lines).style(theme.banner()), area);
}

/// Which of several controllers the console is on, its role, and the
/// failovers it lived through (where from is in the log, not here: 80 columns).
fn on_controller(on: &OnController) -> String {
    let host = on.controller.split("://").nth(1).unwrap_or(&on.controller);
    let role = match on.primary {
        Some(true) => " leader",
        Some(false) => " follower",
        None => "",
    };
    let mut text = format!("on {host}{role}");
    if on.failovers > 0 {
        text.push_str(&format!(" ⇄ failover {}", on.failovers));
    }
    text
}

/// Columns the input keeps beside a hint, so what is typed stays visible.
const INPUT_MIN: u16 = 16;

/// The open prompt, its lead and whether its hint is an error.
fn open_prompt(state: &State) -> Option<(&'static str, &Prompt, bool)> {
    match &state.mode {
        Mode::Command(p) => Some((":", p, false)),
        Mode::Filter(p) => Some(("/", p, true)),
        Mode::TxnFilter(p) => Some(("audit filter: ", p, true)),
        Mode::Resv(r) if r.editing.is_none() => Some(("new reservation: ", &r.prompt, true)),
        Mode::Resv(r) => Some(("change reservation: ", &r.prompt, true)),
        _ => None,
    }
}

/// A prompt hint too long for the prompt line (a txn filter error names
/// the key and every choice); the status bar shows it instead.
fn long_hint(state: &State, width: u16) -> Option<(&str, bool)> {
    let (lead, p, error) = open_prompt(state)?;
    let hint = p.hint.as_deref()?;
    let room = usize::from(width.saturating_sub(lead.len() as u16 + INPUT_MIN + 2));
    (Span::raw(hint).width() > room).then_some((hint, error))
}

fn prompt(frame: &mut Frame, theme: Theme, area: Rect, lead: &str, p: &Prompt, inline_hint: bool) {
    let lead_w = lead.len() as u16;
    let hint = match &p.hint {
        Some(h) if inline_hint => format!("  {h}"),
        _ => String::new(),
    };
    let hint_w = Span::raw(&hint).width() as u16;
    let width = area.width.saturating_sub(lead_w + hint_w).max(1);
    let scroll = p.input.visual_scroll(usize::from(width));
    let value: String = p.input.value().chars().skip(scroll).collect();
    let line = Line::from(vec![
        Span::styled(lead.to_string(), theme.key()),
        Span::raw(format!("{value:<w$}", w = usize::from(width))),
        Span::styled(hint, theme.dim()),
    ]);
    frame.render_widget(Paragraph::new(line), area);
    let cursor = p.input.visual_cursor().saturating_sub(scroll) as u16;
    frame.set_cursor_position((area.x + lead_w + cursor.min(width), area.y));
}

pub fn line(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    if let Some((lead, p, _)) = open_prompt(state) {
        return prompt(frame, theme, area, lead, p, long_hint(state, area.width).is_none());
    }
    let line = match &state.message {
        Some(m) if m.error => Line::styled(m.text.clone(), theme.error()),
        Some(m) => Line::styled(m.text.clone(), theme.info()),
        None if matches!(state.mode, Mode::Output) => {
            let keys = [("esc/q", "close"), ("↑/↓ pgup/pgdn", "scroll"), ("g/G", "top/follow")];
            let spans = keys.iter().flat_map(|(k, l)| {
                [Span::styled(k.to_string(), theme.key()), Span::styled(format!(" {l}  "), theme.dim())]
            });
            Line::from(spans.collect::<Vec<_>>())
        }
        None => hints(state, theme, area.width),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// Key hints: the shared three, then the pane's declared keys
/// ([`PaneId::decl`]) it may use now, as many as fit in `width`.
fn hints(state: &State, theme: Theme, width: u16) -> Line<'static> {
    let km = &state.settings.keymap;
    let mut items = vec![(Action::Help, "help"), (Action::Quit, "quit"), (Action::CommandMode, "cmd")];
    let decl = state.pane.decl();
    // Only a pane whose Enter opens arrays asks what its selected row is.
    let array = decl.hints.iter().any(|h| h.offered == Offered::OnArray).then(|| array_hint(state)).flatten();
    for h in &decl.hints {
        let label = match h.offered {
            Offered::Always => h.label,
            Offered::Writes(role) if writes_allowed(state, role) => h.label,
            // The merged Queue's rows are each their own cluster's, under its own rules.
            Offered::Writable
                if writable(state)
                    || (state.pane == PaneId::Queue
                        && state.merged.is_some()
                        && !state.settings.read_only) =>
            {
                h.label
            }
            Offered::OnArray if array.is_some() => array.unwrap_or(h.label),
            Offered::OffArray if array.is_none() => h.label,
            _ => continue,
        };
        let label = match h.action {
            Action::TogglePause if state.audit.paused => "resume",
            _ => label,
        };
        items.push((h.action.clone(), label));
    }
    let mut items: Vec<(String, &str)> = items.into_iter().map(|(a, l)| (km.keys_of(&a), l)).collect();
    // The operator's own plugins come before the pane's keys: they were configured to be used.
    let plugins = state.settings.plugins.iter().filter(|p| p.panes.contains(&state.pane));
    items.splice(3..3, plugins.map(|p| (p.key.to_string(), p.name.as_str())));
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (key, label) in items {
        let label = format!(" {label}  ");
        let w = Span::raw(&key).width() + label.len();
        if used + w > usize::from(width) {
            break;
        }
        used += w;
        spans.extend([Span::styled(key, theme.key()), Span::styled(label, theme.dim())]);
    }
    Line::from(spans)
}

/// What Enter does to the selected row when it is an array's: None for a job.
fn array_hint(state: &State) -> Option<&'static str> {
    let key = state.table(state.pane)?.rows.key(state.view().selected)?;
    match RowKey::parse(&key)? {
        RowKey::Array(id) if state.view().expanded.contains(id) => Some("fold"),
        RowKey::Array(_) => Some("expand"),
        RowKey::Job(_) => None,
    }
}

fn writable(state: &State) -> bool {
    !state.settings.read_only && !state.settings.contexts.current().is_some_and(|c| c.read_only)
}

fn writes_allowed(state: &State, role: session::Role) -> bool {
    writable(state) && session::refusal(state.session.as_ref(), role).is_none()
}

/// Connection first and the URL last: at 80 columns the URL is what gets cut.
pub fn status(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    if let Some((hint, error)) = long_hint(state, area.width) {
        let style = if error { theme.error() } else { theme.status() };
        frame.render_widget(Paragraph::new(Line::styled(format!(" {hint}"), style)), area);
        return;
    }
    let s = &state.settings;
    let ctx = s.contexts.current();
    let read_only = s.read_only || ctx.is_some_and(|c| c.read_only);
    let mode = match (read_only, session::write_refusal(state.session.as_ref())) {
        (true, _) => "READ-ONLY".to_string(),
        // The role is shown just before; the full reason comes with each refusal.
        (false, Some(_)) => format!("no writes: needs {}", session::WRITE_ROLE.as_str()),
        (false, None) => "admin".to_string(),
    };
    let who = match &state.session {
        Some(session) => session.label(),
        // Until WhoAmI answers: the name the console asserts, role not known yet.
        None => format!("{}: role ?", s.identity.user),
    };
    let conn = match state.conn {
        Conn::Connecting => "connecting…",
        Conn::Connected => "● connected",
        Conn::Reconnecting { .. } => "reconnecting…",
        Conn::Disconnected => "✖ disconnected",
    };
    // With several controllers, which one comes first: it is what changes in a failover.
    // The context right after the connection: on 80 columns it is what must not be cut.
    let conn = match ctx {
        Some(c) if c.production => format!("{conn} │ ctx {} PROD", c.name),
        Some(c) => format!("{conn} │ ctx {}", c.name),
        None => conn.to_string(),
    };
    let mut text = match &state.on {
        Some(on) => format!(" {conn} │ {} │ {who} │ {mode}", on_controller(on)),
        None => format!(" {conn} │ {who} │ {mode} │ {}", s.controller),
    };
    if let Some(e) = &state.last_error {
        text.push_str(" │ err: ");
        text.push_str(e);
    }
    frame.render_widget(Paragraph::new(Line::from(text)).style(theme.status()), area);
}
