//! Rendering the Queue pane with 100,000 jobs into a `TestBackend`, at
//! 120x40 and 80x24 (target: under 5 ms a frame), plus the operations that
//! recompute the display order (a sort key press, a filter keystroke),
//! which are memoised and so paid once per change, not per frame.
//! Run with `cargo bench -p spur-console --bench queue`.

mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use spur_console::{Action, dispatch};
use std::hint::black_box;
use std::time::Duration;
use tui_input::InputRequest;

const JOBS: u64 = 100_000;

fn render(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue_render_100k");
    g.measurement_time(Duration::from_secs(5));
    for size in [(120, 40), (80, 24)] {
        let state = common::state(JOBS, size);
        let mut term = common::terminal(size);
        g.bench_function(format!("{}x{}", size.0, size.1), |b| {
            b.iter(|| common::frame(&mut term, black_box(&state)))
        });
    }
    // Sorted by user and filtered: the memoised order is reused frame after frame.
    let mut state = common::state(JOBS, (120, 40));
    dispatch(&mut state, Action::SortNext);
    dispatch(&mut state, Action::SortNext);
    dispatch(&mut state, Action::FilterMode);
    for c in "user0".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    dispatch(&mut state, Action::Submit);
    let mut term = common::terminal((120, 40));
    g.bench_function("120x40_sorted_filtered", |b| b.iter(|| common::frame(&mut term, black_box(&state))));
    // Scrolling a page: a dispatch and a frame.
    let mut state = common::state(JOBS, (120, 40));
    let mut down = true;
    g.bench_function("120x40_page_down_and_frame", |b| {
        b.iter(|| {
            dispatch(&mut state, if down { Action::PageDown } else { Action::PageUp });
            down = !down;
            common::frame(&mut term, &state);
        })
    });
    g.finish();
}

fn reorder(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue_reorder_100k");
    g.sample_size(20).measurement_time(Duration::from_secs(8));
    // Each press moves to the next column (a new key), so every one re-sorts.
    let mut state = common::state(JOBS, (120, 40));
    g.bench_function("sort_next", |b| b.iter(|| dispatch(&mut state, Action::SortNext)));
    // Typing and erasing one character: each keystroke is a new regex over every job.
    let mut state = common::state(JOBS, (120, 40));
    dispatch(&mut state, Action::FilterMode);
    for c in "user1".chars() {
        dispatch(&mut state, Action::Input(InputRequest::InsertChar(c)));
    }
    let mut add = true;
    g.bench_function("filter_keystroke", |b| {
        b.iter(|| {
            let req = if add { InputRequest::InsertChar('2') } else { InputRequest::DeletePrevChar };
            add = !add;
            dispatch(&mut state, Action::Input(req))
        })
    });
    g.finish();
}

criterion_group!(benches, render, reorder);
criterion_main!(benches);
