//! The job output view (`o`/`O` on the Queue): a title line saying whose
//! output it is and whether it follows the end, then the lines that fit.

use crate::model::output::OutputView;
use crate::views::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(v: Option<&OutputView>, theme: Theme, frame: &mut Frame, area: Rect) {
    let Some(v) = v else { return };
    let state = match (&v.ended, v.following()) {
        (Some(why), _) => why.clone(),
        (None, true) => "following".to_string(),
        (None, false) => format!("{} lines up; G follows", v.back),
    };
    let dropped =
        if v.dropped > 0 { format!(" (the first {} lines not kept)", v.dropped) } else { String::new() };
    let title = format!("{}: {state}{dropped}  esc closes", v.title());
    let mut lines = vec![Line::from(Span::styled(title, theme.header()))];
    let height = usize::from(area.height.saturating_sub(1));
    if v.is_empty() && v.ended.is_none() {
        lines.push(Line::styled("(nothing yet)", theme.dim()));
    }
    lines.extend(v.window(height).into_iter().map(Line::raw));
    frame.render_widget(Paragraph::new(lines), area);
}
