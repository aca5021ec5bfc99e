//! Views drawn over or instead of the table: help, the confirmation
//! dialog, the edit form, the drain/down reason field and the detail view.

use crate::model::action::Action;
use crate::model::form::EditForm;
use crate::model::format;
use crate::model::jobs::JobOp;
use crate::model::keymap::{Binding, FIXED_KEYS, Keymap};
use crate::model::layout::centered;
use crate::model::pane::PaneId;
use crate::model::plugin::Plugin;
use crate::model::state::{Choice, Confirm, ReasonPrompt, TypedName};
use crate::model::table::Detail;
use crate::model::write::NodeOp;
use crate::views::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Padding, Paragraph, Wrap};
use spur_vocab::hostlist;

fn popup(frame: &mut Frame, theme: Theme, area: Rect, title: &str) -> Rect {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border())
        .padding(Padding::horizontal(1))
        .title(Span::styled(title, theme.header()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    inner
}

/// Generated from the keymap, so rebinding keys updates it; console.toml's plugins last.
pub fn help(keymap: &Keymap, plugins: &[Plugin], theme: Theme, frame: &mut Frame, scroll: u16) {
    let screen = frame.area();
    let area = centered(screen, screen.width.saturating_sub(2).min(110), screen.height.saturating_sub(2));
    let inner = popup(frame, theme, area, " Keys — esc closes ");
    let bindings = keymap.bindings();
    let key_w = bindings.iter().map(|b| keys_text(b).chars().count()).max().unwrap_or(4).min(12);
    let entry = |keys: &str, desc: &str| {
        Line::from(vec![Span::styled(format!("{keys:>key_w$} "), theme.key()), Span::raw(desc.to_string())])
    };
    // Pane keys left at their defaults (the numbers the tab bar shows) take one
    // line instead of seven, so the whole table fits 80x24 without scrolling.
    let default_panes =
        bindings.iter().filter(|b| matches!(b.action, Action::GoPane(_))).all(|b| match b.action {
            Action::GoPane(p) => p.key().map_or(b.keys.is_empty(), |k| keys_text(b) == k),
            _ => false,
        });
    let groups = groups(bindings);
    let mut entries: Vec<Line> = Vec::new();
    for b in bindings {
        match b.action {
            Action::GoPane(p) if default_panes => {
                if p == PaneId::ALL[0] {
                    // The tenth pane's key is 0.
                    let keys = match PaneId::ALL.len() {
                        n if n < 10 => format!("1..{n}"),
                        _ => "1..9, 0".to_string(),
                    };
                    entries.push(entry(&keys, "go to the numbered pane"));
                } else if p.key().is_none() {
                    // Past the tenth: reached by its command (and Tab).
                    entries.push(entry(&format!(":{}", p.name()), p.goto_desc()));
                }
            }
            _ => match groups.iter().find(|g| g.members.contains(&b.action)) {
                Some(g) if g.members[0] == b.action => entries.push(entry(&g.keys, g.desc)),
                Some(_) => {}
                None => entries.push(entry(&keys_text(b), b.desc)),
            },
        }
    }
    for p in plugins {
        let panes: Vec<&str> = p.panes.iter().map(|pane| pane.name()).collect();
        entries.push(entry(&p.key.to_string(), &format!("plugin {} ({})", p.name, panes.join(", "))));
    }
    let fixed: Vec<Line> = FIXED_KEYS
        .iter()
        .map(|(k, d)| Line::from(vec![Span::styled(format!("{k:>key_w$} "), theme.key()), Span::raw(*d)]))
        .collect();
    let columns: u16 = if inner.width >= 70 { 2 } else { 1 };
    let per_col = entries.len().div_ceil(usize::from(columns));
    let fixed_h = (fixed.len() as u16 + 1).min(inner.height / 2);
    let [top, bottom] = Layout::vertical([Constraint::Min(0), Constraint::Length(fixed_h)]).areas(inner);
    let cols =
        Layout::horizontal(vec![Constraint::Ratio(1, u32::from(columns)); usize::from(columns)]).split(top);
    for (i, col) in cols.iter().enumerate() {
        let chunk: Vec<Line> = entries.iter().skip(i * per_col).take(per_col).cloned().collect();
        frame.render_widget(Paragraph::new(chunk).scroll((scroll, 0)), *col);
    }
    let mut lines = vec![Line::styled("In prompts, forms and dialogs:", theme.header())];
    lines.extend(fixed);
    frame.render_widget(Paragraph::new(lines), bottom);
}

/// Pane actions shown on one help line (`d/u/x drain/resume/down nodes`).
struct Group {
    members: Vec<Action>,
    keys: String,
    desc: &'static str,
}

/// The groups whose actions have one key each (a rebinding to several
/// keys, or none, lists them one by one again), so the table fits 80x24.
fn groups(bindings: &[Binding]) -> Vec<Group> {
    let all = [
        (
            vec![NodeOp::Drain, NodeOp::Resume, NodeOp::Down].into_iter().map(Action::NodeAction).collect(),
            "drain/resume/down nodes",
        ),
        (
            [JobOp::Cancel, JobOp::Hold, JobOp::Release, JobOp::Requeue]
                .into_iter()
                .map(Action::JobAction)
                .collect(),
            "cancel/hold/release/requeue",
        ),
        // One line, so the whole table still fits 80x24.
        (
            vec![Action::Explain, Action::Output(false), Action::Output(true)],
            "job: why / stdout / stderr live",
        ),
    ];
    all.into_iter()
        .filter_map(|(members, desc): (Vec<Action>, &'static str)| {
            let keys: Option<Vec<String>> = members
                .iter()
                .map(|a| match bindings.iter().find(|b| &b.action == a).map(|b| b.keys.as_slice()) {
                    Some([one]) => Some(one.to_string()),
                    _ => None,
                })
                .collect();
            Some(Group { keys: keys?.join("/"), members, desc })
        })
        .collect()
}

fn keys_text(b: &Binding) -> String {
    if b.keys.is_empty() {
        return "unbound".into();
    }
    b.keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join("/")
}

/// Greedy word wrap to `width` columns (long words are cut), done here
/// rather than by the Paragraph so the dialog can be sized to the result.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = vec![String::new()];
    for word in text.split(' ') {
        let cur = out.last_mut().map(|l| format::width(l) as usize).unwrap_or(0);
        let w = format::width(word) as usize;
        if cur > 0 && cur + 1 + w > width {
            out.push(String::new());
        } else if cur > 0 {
            out.last_mut().expect("never empty").push(' ');
        }
        let mut rest: String = word.to_string();
        while format::width(&rest) as usize > width {
            let head: String = rest.chars().take(width).collect();
            rest = rest.chars().skip(width).collect();
            out.last_mut().expect("never empty").push_str(&head);
            out.push(String::new());
        }
        out.last_mut().expect("never empty").push_str(&rest);
    }
    out
}

pub fn confirm(c: &Confirm, theme: Theme, frame: &mut Frame) {
    let (title, body) = c.op.describe();
    let screen = frame.area();
    let width = screen.width.saturating_sub(4).min(74);
    // Border and padding take four columns.
    let body: Vec<String> = body.iter().flat_map(|l| wrap(l, usize::from(width.saturating_sub(4)))).collect();
    // A typed confirmation has a prompt line more than the buttons.
    let extra = if c.typed.is_some() { 6 } else { 5 };
    let height = (body.len() as u16).saturating_add(extra);
    let area = centered(screen, width, height);
    let inner = popup(frame, theme, area, &format!(" {title} "));
    if let Some(t) = &c.typed {
        return typed(frame, theme, inner, body, t, c.op.button());
    }
    let ok = c.op.button();
    let button = |label: &str, choice: Choice| {
        let style = if c.focus == choice { theme.selected() } else { theme.plain() };
        Span::styled(format!("[ {label} ]"), style)
    };
    let mut lines: Vec<Line> = body.into_iter().map(Line::from).collect();
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        button("Cancel", Choice::Cancel),
        Span::raw("   "),
        button(ok, Choice::Confirm),
    ]));
    lines.push(Line::styled("tab/←/→ choose · enter press · esc cancel", theme.dim()));
    let [body, footer] = Layout::vertical([Constraint::Min(0), Constraint::Length(3)]).areas(inner);
    let (head, rest) = lines.split_at(lines.len() - 3);
    frame.render_widget(Paragraph::new(head.to_vec()).wrap(Wrap { trim: false }), body);
    frame.render_widget(Paragraph::new(rest.to_vec()), footer);
}

/// A production context's confirmation: the body, then the context's name to type.
fn typed(frame: &mut Frame, theme: Theme, inner: Rect, body: Vec<String>, t: &TypedName, ok: &str) {
    let [body_area, footer] = Layout::vertical([Constraint::Min(0), Constraint::Length(4)]).areas(inner);
    let lines: Vec<Line> = body.into_iter().map(Line::from).collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body_area);
    let width = usize::from(footer.width.saturating_sub(2).max(1));
    let scroll = t.input.visual_scroll(width);
    let value: String = t.input.value().chars().skip(scroll).collect();
    let about = match &t.hint {
        Some(h) => Line::styled(h.clone(), theme.error()),
        None => Line::styled(format!("enter {} · esc cancel", ok.to_lowercase()), theme.dim()),
    };
    let lines = vec![
        Line::raw(""),
        Line::from(vec![
            Span::styled("Production: type ", theme.production()),
            Span::styled(t.name.clone(), theme.key()),
            Span::styled(" to confirm", theme.production()),
        ]),
        Line::from(vec![Span::styled("> ", theme.key()), Span::raw(value)]),
        about,
    ];
    frame.render_widget(Paragraph::new(lines), footer);
    let x = footer.x + 2 + t.input.visual_cursor().saturating_sub(scroll) as u16;
    frame.set_cursor_position((x.min(footer.right().saturating_sub(1)), footer.y + 2));
}

/// `focused` is false while a confirmation sits on top (no cursor then).
pub fn form(form: &EditForm, theme: Theme, frame: &mut Frame, focused: bool) {
    let screen = frame.area();
    let height = (form.fields.len() as u16).saturating_add(4);
    let area = centered(screen, screen.width.saturating_sub(2).min(80), height);
    let inner = popup(frame, theme, area, &format!(" Modify {} ", form.subject()));
    let [fields, footer] = Layout::vertical([Constraint::Min(0), Constraint::Length(2)]).areas(inner);
    let label_w = form.fields.iter().map(|f| f.key().len()).max().unwrap_or(8) + 2;
    let visible = usize::from(fields.height.max(1));
    let first = form.focus.saturating_sub(visible - 1);
    let value_w = usize::from(fields.width).saturating_sub(label_w + 1).max(1);
    for (row, (i, f)) in form.fields.iter().enumerate().skip(first).take(visible).enumerate() {
        // `*` changed, `!` a value the controller would refuse: symbols, not colour alone.
        let flag = match f.change() {
            Ok(None) => " ",
            Ok(Some(_)) => "*",
            Err(_) => "!",
        };
        let label = format!("{flag}{:>w$}", f.key(), w = label_w - 1);
        let label_style = if i == form.focus { theme.selected() } else { theme.key() };
        let scroll = f.input.visual_scroll(value_w);
        let value: String = f.input.value().chars().skip(scroll).collect();
        let y = fields.y + row as u16;
        let line = Line::from(vec![Span::styled(label, label_style), Span::raw(" "), Span::raw(value)]);
        frame.render_widget(Paragraph::new(line), Rect { y, height: 1, ..fields });
        if focused && i == form.focus {
            let x = fields.x + label_w as u16 + 1 + (f.input.visual_cursor().saturating_sub(scroll)) as u16;
            frame.set_cursor_position((x.min(fields.right().saturating_sub(1)), y));
        }
    }
    let about = match form.focused().map(|f| (f.def.help, f.change())) {
        Some((_, Err(e))) => Line::styled(e, theme.error()),
        Some((help, _)) => Line::styled(help, theme.dim()),
        None => Line::raw(""),
    };
    let hint = Line::styled("enter review · tab/↑/↓ move · esc cancel · empty limit = none", theme.dim());
    frame.render_widget(Paragraph::new(vec![about, hint]), footer);
}

/// The reason field of a drain or down, with the recent reasons under it.
pub fn reason(p: &ReasonPrompt, theme: Theme, frame: &mut Frame) {
    let offered = p.offered();
    let listed = offered.len().max(1) as u16;
    let screen = frame.area();
    let area = centered(screen, screen.width.saturating_sub(4).min(74), listed + 8);
    let title = format!(" {} {} ", p.op.title(), hostlist::compress(&p.nodes));
    let inner = popup(frame, theme, area, &title);
    let width = usize::from(inner.width.saturating_sub(2)).max(1);
    let scroll = p.input.visual_scroll(width);
    let value: String = p.input.value().chars().skip(scroll).collect();
    let mut lines = vec![
        Line::styled("Reason (required; sinfo -R shows it):", theme.header()),
        Line::from(vec![Span::styled("> ", theme.key()), Span::raw(value)]),
        match &p.hint {
            Some(h) => Line::styled(h.clone(), theme.error()),
            None => Line::raw(""),
        },
        Line::styled("Recent reasons (↑/↓ or tab):", theme.dim()),
    ];
    if offered.is_empty() {
        lines.push(Line::styled("  none yet", theme.dim()));
    }
    for (i, r) in offered.iter().enumerate() {
        // `›` marks the pick as well as REVERSED, so it shows without colour or bold.
        lines.push(match p.pick == Some(i) {
            true => Line::styled(format!("› {r}"), theme.selected()),
            false => Line::raw(format!("  {r}")),
        });
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("enter review · esc cancel", theme.dim()));
    frame.render_widget(Paragraph::new(lines), inner);
    let x = inner.x + 2 + p.input.visual_cursor().saturating_sub(scroll) as u16;
    frame.set_cursor_position((x.min(inner.right().saturating_sub(1)), inner.y + 1));
}

/// `d` is None when the record is gone (the key says which).
pub fn detail(d: Option<Detail>, theme: Theme, frame: &mut Frame, area: Rect, key: &str, scroll: u16) {
    let Some(d) = d else {
        let msg = Line::styled(format!("{key}: no longer present (esc goes back)"), theme.dim());
        frame.render_widget(Paragraph::new(msg), area);
        return;
    };
    let label_w = d.fields.iter().map(|(l, _)| l.len()).max().unwrap_or(4);
    let mut lines = vec![Line::styled(d.title.clone(), theme.header()), Line::raw("")];
    // Long values (a pending reason's sentence) wrap under themselves, not under the labels.
    let value_w = usize::from(area.width).saturating_sub(label_w + 2).max(20);
    for (label, value) in &d.fields {
        for (i, part) in wrap(value, value_w).into_iter().enumerate() {
            let label = if i == 0 { label.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("{label:>label_w$}  "), theme.key()),
                Span::raw(part),
            ]));
        }
    }
    if !d.body.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(d.body.iter().map(|l| Line::raw(l.clone())));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).scroll((scroll, 0)), area);
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_breaks_at_words_and_cuts_long_ones() {
        assert_eq!(wrap("aaa bbb ccc", 7), ["aaa bbb", "ccc"]);
        assert_eq!(wrap("Nodes:  node02", 40), ["Nodes:  node02"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    }
}
