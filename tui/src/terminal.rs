//! Entering and leaving full-screen mode. The terminal is restored on every
//! way out: normal exit, an error return (the guard's Drop) and a panic
//! (the hook restores it before the panic message is printed).

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{Stdout, stdout};

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Leave the alternate screen and raw mode; safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(stdout(), DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
}

/// Restore the terminal first so the panic message lands on a usable screen, then exit:
/// a panicking network task must not leave the UI drawing into a cooked terminal.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
        std::process::exit(101);
    }));
}

/// Restores the terminal when dropped.
#[derive(Debug)]
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

pub fn enter(mouse: bool) -> std::io::Result<(Term, Guard)> {
    enable_raw_mode()?;
    let guard = Guard;
    let mut out = stdout();
    execute!(out, EnterAlternateScreen)?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    let terminal = Terminal::new(CrosstermBackend::new(out))?;
    Ok((terminal, guard))
}
