//! Styles. Every state that matters (selection, focus, errors, marks) is
//! carried by a modifier or a symbol as well as by colour, so the mono
//! theme and NO_COLOR lose nothing.

use crate::model::state::ThemeName;
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

/// The symbol drawn in the first column of a marked row.
pub const MARK: &str = "●";

impl Theme {
    pub fn new(name: ThemeName) -> Theme {
        Theme { color: name == ThemeName::Default }
    }

    fn fg(self, c: Color) -> Style {
        if self.color { Style::new().fg(c) } else { Style::new() }
    }

    pub fn plain(self) -> Style {
        Style::new()
    }

    pub fn header(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn selected(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    pub fn marked(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    pub fn account(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn tab(self) -> Style {
        Style::new()
    }

    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    pub fn key(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A denied txn row: BOLD (and the row's `✗`) carry it without colour.
    pub fn denied(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A txn row that failed with an error: BOLD and `!`.
    pub fn failed(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// A DOWN node: BOLD and `▼`, red unless mono.
    pub fn node_down(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// A draining or drained node: BOLD and `◐`, yellow unless mono.
    pub fn node_drain(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// A node not responding (yet up): BOLD and `*`, magenta unless mono.
    pub fn node_lost(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    pub fn info(self) -> Style {
        self.fg(Color::Green)
    }

    pub fn banner(self) -> Style {
        let s = Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED);
        if self.color { s.fg(Color::Red) } else { s }
    }

    pub fn status(self) -> Style {
        let s = Style::new().add_modifier(Modifier::REVERSED);
        if self.color { s.fg(Color::Blue) } else { s }
    }

    /// The frame of a production context: BOLD (and the frame and its title) carry it without colour.
    pub fn production(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub fn border(self) -> Style {
        self.fg(Color::Cyan)
    }
}
