//! The one-line bars: pane tabs, breadcrumb, the unreachable banner, the
//! prompt/message line and the status bar.

use super::table;
use super::theme::Theme;
use crate::action::Action;
use crate::pane::PaneId;
use crate::state::{Conn, Mode, Prompt, State};
use crate::views;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn tabs(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    let spans: Vec<Span> = PaneId::ALL
        .iter()
        .flat_map(|&p| {
            let style = if p == state.pane {
                theme.selected()
            } else if p.available() {
                theme.tab()
            } else {
                theme.tab_unavailable()
            };
            [Span::styled(format!(" {} {} ", p.number(), p.title()), style), Span::raw(" ")]
        })
        .collect();
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn breadcrumb(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    let root = match state.data.as_ref().map(|d| d.cluster.as_str()) {
        Some(c) if !c.is_empty() => format!("spur:{c}"),
        _ => "spur".to_string(),
    };
    let mut parts = vec![root, state.pane.title().to_string()];
    if let (PaneId::Preemption, Some(job)) = (state.pane, &state.explain) {
        parts.push(format!("job {job}"));
    }
    let detail_key = match &state.mode {
        Mode::Detail { key, .. } => Some(key),
        Mode::Help { prev, .. } => match prev.as_ref() {
            Mode::Detail { key, .. } => Some(key),
            _ => None,
        },
        _ => None,
    };
    if let Some(key) = detail_key {
        let title = views::detail(state, state.pane, key).map(|d| d.crumb).unwrap_or_else(|| key.clone());
        parts.push(title);
    } else if let Some(model) = views::table(state, state.pane) {
        let v = state.view();
        parts.push(match model.rows.len() {
            n if n == model.total => format!("{n} rows"),
            n => format!("{n} of {} rows", model.total),
        });
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
        let body = super::layout::areas(state, frame.area()).body;
        let (_, hidden) = table::fitted(state, &model, body);
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

pub fn banner(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    let err = state.last_error.as_deref().unwrap_or("");
    let head = match &state.conn {
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

fn prompt(frame: &mut Frame, theme: Theme, area: Rect, lead: &str, p: &Prompt) {
    let lead_w = lead.len() as u16;
    let hint = p.hint.as_deref().map(|h| format!("  {h}")).unwrap_or_default();
    let hint_w = (Span::raw(&hint).width() as u16).min(area.width / 2);
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
    match &state.mode {
        Mode::Command(p) => return prompt(frame, theme, area, ":", p),
        Mode::Filter(p) => return prompt(frame, theme, area, "/", p),
        _ => {}
    }
    let line = match &state.message {
        Some(m) if m.error => Line::styled(m.text.clone(), theme.error()),
        Some(m) => Line::styled(m.text.clone(), theme.info()),
        None => hints(state, theme, area.width),
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// Key hints, most important first, as many as fit in `width`.
fn hints(state: &State, theme: Theme, width: u16) -> Line<'static> {
    let km = &state.settings.keymap;
    let mut items = vec![(Action::Help, "help"), (Action::Quit, "quit"), (Action::CommandMode, "cmd")];
    items.extend([(Action::FilterMode, "filter"), (Action::Open, "detail"), (Action::Refresh, "refresh")]);
    if !state.settings.read_only {
        items.extend([(Action::Edit, "edit"), (Action::Delete, "delete")]);
    }
    items.extend([(Action::SortNext, "sort"), (Action::ToggleMark, "mark")]);
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (action, label) in items {
        let key = km.keys_of(&action);
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

pub fn status(state: &State, theme: Theme, frame: &mut Frame, area: Rect) {
    let s = &state.settings;
    let mode = if s.read_only { "READ-ONLY" } else { "admin" };
    let conn = match state.conn {
        Conn::Connecting => "connecting…",
        Conn::Connected => "● connected",
        Conn::Reconnecting { .. } => "reconnecting…",
        Conn::Disconnected => "✖ disconnected",
    };
    let mut text = format!(" {} │ {} │ role {} │ {mode} │ {conn}", s.controller, s.identity.user, s.role);
    if let Some(e) = &state.last_error {
        text.push_str(" │ err: ");
        text.push_str(e);
    }
    frame.render_widget(Paragraph::new(Line::from(text)).style(theme.status()), area);
}
