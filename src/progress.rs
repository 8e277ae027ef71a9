//! A progress bar on stderr, hand-rolled (no crate): `[=====>    ] 12/40 30%  2.1 runs/s  ETA
//! 0:13`. On a terminal it redraws one line; otherwise (logs, tests, CI) it prints a line at
//! every tenth of the work, so logs stay short.

use std::io::{IsTerminal, Write};
use std::time::Instant;

pub struct Progress {
    label: String,
    unit: &'static str,
    total: u64,
    done: u64,
    started: Instant,
    tty: bool,
    /// Tenths already printed (non-terminal mode).
    tenths_shown: u64,
    last_draw: Option<Instant>,
    quiet: bool,
}

impl Progress {
    /// `total` may be 0 (then nothing is drawn); `unit` names what is counted (`runs`, `cases`).
    pub fn new(label: impl Into<String>, unit: &'static str, total: u64) -> Progress {
        Progress {
            label: label.into(),
            unit,
            total,
            done: 0,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            tenths_shown: 0,
            last_draw: None,
            quiet: std::env::var_os("CAUSIM_NO_PROGRESS").is_some(),
        }
    }

    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Counts `n` more units done and redraws when useful.
    pub fn advance(&mut self, n: u64) {
        self.done += n;
        if self.quiet || self.total == 0 {
            return;
        }
        if self.tty {
            let now = Instant::now();
            let due = self.last_draw.is_none_or(|t| now.duration_since(t).as_millis() >= 100);
            if due || self.done >= self.total {
                self.last_draw = Some(now);
                eprint!("\r{}", self.line());
                let _ = std::io::stderr().flush();
            }
        } else {
            let tenths = self.done * 10 / self.total;
            if tenths > self.tenths_shown {
                self.tenths_shown = tenths;
                eprintln!("{}", self.line());
            }
        }
    }

    /// Ends the bar's line (terminal mode).
    pub fn finish(&mut self) {
        if self.tty && !self.quiet && self.total > 0 {
            eprintln!("\r{}", self.line());
        }
    }

    fn line(&self) -> String {
        let width = 24u64;
        let filled = (self.done.min(self.total) * width).checked_div(self.total).unwrap_or(0);
        let mut bar = "=".repeat(filled as usize);
        if filled < width {
            bar.push('>');
            bar.push_str(&" ".repeat((width - filled - 1) as usize));
        }
        let elapsed = self.elapsed_s();
        let rate = if elapsed > 0.0 { self.done as f64 / elapsed } else { 0.0 };
        let eta = if self.done > 0 && self.done < self.total {
            clock(elapsed / self.done as f64 * (self.total - self.done) as f64)
        } else {
            "-".to_string()
        };
        format!(
            "{} [{bar}] {}/{} {}%  {rate:.1} {}/s  elapsed {}  ETA {eta}   ",
            self.label,
            self.done,
            self.total,
            (self.done * 100).checked_div(self.total).unwrap_or(100),
            self.unit,
            clock(elapsed)
        )
    }
}

/// `m:ss` (or `h:mm:ss`).
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 { format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) } else { format!("{}:{:02}", s / 60, s % 60) }
}
