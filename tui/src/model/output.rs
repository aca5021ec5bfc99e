//! A job's output, live (`o` stdout, `O` stderr on the Queue pane): the
//! last [`MAX_LINES`] lines of what `Steps.TailOutput` streams, never the
//! whole file. The view follows the end until the operator scrolls up; new
//! lines then leave what is shown where it is.

use std::collections::VecDeque;

/// Lines kept; older ones are dropped from the top.
pub const MAX_LINES: usize = 2_000;
/// An unfinished line longer than this is shown as a line of its own.
pub const MAX_LINE: usize = 16 << 10;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputView {
    pub job: u64,
    pub stderr: bool,
    /// Generation: pieces of a closed view's stream are dropped.
    pub sub: u64,
    lines: VecDeque<String>,
    /// The bytes of the last line, not ended yet (a character may be cut between pieces).
    partial: Vec<u8>,
    /// Lines dropped from the top to keep [`MAX_LINES`].
    pub dropped: u64,
    /// Lines the view is scrolled up from the end; 0 follows the end.
    pub back: usize,
    /// Why the stream ended (the job's end, a refusal, a lost connection).
    pub ended: Option<String>,
    /// What a plugin's view shows instead of the job's (`plugin ssh: ssh node01`); empty for a job's.
    pub label: String,
}

impl OutputView {
    pub fn new(job: u64, stderr: bool, sub: u64) -> OutputView {
        OutputView { job, stderr, sub, ..OutputView::default() }
    }

    /// A plugin's stdout and stderr, as it runs.
    pub fn plugin(label: String, sub: u64) -> OutputView {
        OutputView { sub, label, ..OutputView::default() }
    }

    /// What the view's title names: the job's stream, or the plugin's command.
    pub fn title(&self) -> String {
        if self.label.is_empty() { format!("job {} {}", self.job, self.what()) } else { self.label.clone() }
    }

    /// What the stream is: `stdout` or `stderr`.
    pub fn what(&self) -> &'static str {
        if self.stderr { "stderr" } else { "stdout" }
    }

    fn add(&mut self, line: String) {
        self.lines.push_back(line);
        if self.back > 0 {
            // Scrolled up: what is shown stays put.
            self.back += 1;
        }
        while self.lines.len() > MAX_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.back = self.back.min(self.len().saturating_sub(1));
    }

    /// A piece of the file: whole lines are kept, the rest waits for its newline.
    pub fn push(&mut self, data: &[u8]) {
        self.partial.extend_from_slice(data);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let rest = self.partial.split_off(end + 1);
            let line = std::mem::replace(&mut self.partial, rest);
            let text = String::from_utf8_lossy(&line[..end]);
            self.add(text.trim_end_matches('\r').to_string());
        }
        if self.partial.len() > MAX_LINE {
            let line = std::mem::take(&mut self.partial);
            self.add(String::from_utf8_lossy(&line).into_owned());
        }
    }

    /// A line of the stream's own (a requeue, a truncation), set apart from the job's.
    pub fn note(&mut self, text: &str) {
        self.flush();
        self.add(format!("── {text} ──"));
    }

    fn flush(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.add(String::from_utf8_lossy(&line).into_owned());
        }
    }

    /// The stream ended: its unfinished last line is shown, and why it ended.
    pub fn end(&mut self, why: String) {
        self.flush();
        self.ended = Some(why);
    }

    /// Lines kept (an unfinished last line counts).
    pub fn len(&self) -> usize {
        self.lines.len() + usize::from(!self.partial.is_empty())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lines a view `height` lines tall shows, top first.
    pub fn window(&self, height: usize) -> Vec<String> {
        let mut all: Vec<&str> = self.lines.iter().map(String::as_str).collect();
        let partial = String::from_utf8_lossy(&self.partial);
        if !self.partial.is_empty() {
            all.push(&partial);
        }
        let end = all.len().saturating_sub(self.back);
        let start = end.saturating_sub(height);
        all[start..end].iter().map(|s| s.to_string()).collect()
    }

    /// Scrolls by `delta` lines (negative: up, towards older lines) in a view `height` tall.
    pub fn scroll(&mut self, delta: i64, height: usize) {
        let most = self.len().saturating_sub(height.max(1));
        let back = i64::try_from(self.back).unwrap_or(i64::MAX).saturating_sub(delta);
        self.back = usize::try_from(back.max(0)).unwrap_or(0).min(most);
    }

    /// Whether the view shows the end as it grows.
    pub fn following(&self) -> bool {
        self.back == 0
    }

    /// Goes to the top (the oldest line kept).
    pub fn top(&mut self, height: usize) {
        self.back = self.len().saturating_sub(height.max(1));
    }

    /// Follows the end again.
    pub fn bottom(&mut self) {
        self.back = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_become_lines_and_a_character_cut_between_pieces_is_whole() {
        let mut v = OutputView::new(7, false, 1);
        v.push(b"one\ntw");
        assert_eq!(v.window(10), ["one", "tw"], "an unfinished line is shown");
        v.push(b"o\r\nd\xc3");
        v.push(b"\xa9j\xc3\xa0\n");
        assert_eq!(v.window(10), ["one", "two", "déjà"]);
        v.note("job 7 ran again: its new output");
        v.end("the job ended".into());
        assert_eq!(v.window(2), ["déjà", "── job 7 ran again: its new output ──"]);
        assert_eq!(v.ended.as_deref(), Some("the job ended"));
    }

    #[test]
    fn only_the_last_lines_are_kept_and_a_long_line_is_cut() {
        let mut v = OutputView::new(7, true, 1);
        let many: String = (0..MAX_LINES + 5).map(|i| format!("l{i}\n")).collect();
        v.push(many.as_bytes());
        assert_eq!(v.len(), MAX_LINES);
        assert_eq!(v.dropped, 5);
        assert_eq!(v.window(1), [format!("l{}", MAX_LINES + 4)]);
        v.push(&vec![b'x'; MAX_LINE + 1]);
        assert_eq!(v.window(1)[0].len(), MAX_LINE + 1, "cut into a line of its own");
        assert!(v.partial.is_empty());
    }

    #[test]
    fn scrolled_up_the_view_stays_put_as_lines_arrive_and_g_follows_again() {
        let mut v = OutputView::new(7, false, 1);
        v.push(b"a\nb\nc\nd\n");
        v.scroll(-2, 2);
        assert_eq!(v.window(2), ["a", "b"]);
        assert!(!v.following());
        v.push(b"e\n");
        assert_eq!(v.window(2), ["a", "b"], "what is read stays on screen");
        v.scroll(-10, 2);
        assert_eq!(v.window(2), ["a", "b"], "no further than the top");
        v.bottom();
        assert_eq!(v.window(2), ["d", "e"]);
        v.top(2);
        assert_eq!(v.window(2), ["a", "b"]);
        v.scroll(10, 2);
        assert!(v.following());
    }
}
