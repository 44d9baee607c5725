//! The one error type of the core. The wasm boundary turns it into the JavaScript
//! `ReduceError` with the same `code`, `index` and `field`.

use std::fmt;

/// The codes of SPEC §10, as `ReduceError.code` spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidMessages,
    InvalidMessage,
    InvalidConfig,
    SummarizerRequired,
    SummarizerRequiresAsync,
    SummarizerFailed,
    SummaryTooLarge,
    BudgetUnreachable,
    Aborted,
}

impl ErrorCode {
    /// The code as JavaScript sees it (`"INVALID_CONFIG"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidMessages => "INVALID_MESSAGES",
            ErrorCode::InvalidMessage => "INVALID_MESSAGE",
            ErrorCode::InvalidConfig => "INVALID_CONFIG",
            ErrorCode::SummarizerRequired => "SUMMARIZER_REQUIRED",
            ErrorCode::SummarizerRequiresAsync => "SUMMARIZER_REQUIRES_ASYNC",
            ErrorCode::SummarizerFailed => "SUMMARIZER_FAILED",
            ErrorCode::SummaryTooLarge => "SUMMARY_TOO_LARGE",
            ErrorCode::BudgetUnreachable => "BUDGET_UNREACHABLE",
            ErrorCode::Aborted => "ABORTED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reduction that could not be done, with what was wrong and where: its [`Details`],
/// behind one pointer (a `Result` that carries it is moved by `?` as one word, which keeps
/// every fallible function of the core smaller — less for the engine to compile).
#[derive(Clone, PartialEq, thiserror::Error)]
#[error("{}", .0.message)]
pub struct ReduceError(Box<Details>);

/// What a [`ReduceError`] says (its fields read through it: `e.code`, `e.message`).
#[derive(Clone, Debug, PartialEq)]
pub struct Details {
    pub code: ErrorCode,
    pub message: String,
    /// The input message at fault (`INVALID_MESSAGE`).
    pub index: Option<usize>,
    /// The config option at fault (`INVALID_CONFIG`).
    pub field: Option<String>,
}

impl std::ops::Deref for ReduceError {
    type Target = Details;
    fn deref(&self) -> &Details {
        &self.0
    }
}

impl std::ops::DerefMut for ReduceError {
    fn deref_mut(&mut self) -> &mut Details {
        &mut self.0
    }
}

impl fmt::Debug for ReduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl ReduceError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::with(code, message.into(), None, None)
    }

    /// `INVALID_CONFIG` naming the option.
    pub fn config(field: &str, message: impl Into<String>) -> Self {
        Self::with(
            ErrorCode::InvalidConfig,
            message.into(),
            None,
            Some(field.to_string()),
        )
    }

    /// `INVALID_MESSAGE` naming the input index.
    pub fn message_at(index: usize, message: impl Into<String>) -> Self {
        Self::with(ErrorCode::InvalidMessage, message.into(), Some(index), None)
    }

    /// Errors are made on cold paths: one function, not one copy per caller.
    #[cold]
    #[inline(never)]
    fn with(code: ErrorCode, message: String, index: Option<usize>, field: Option<String>) -> Self {
        ReduceError(Box::new(Details {
            code,
            message,
            index,
            field,
        }))
    }
}

/// `parts` one after another with `sep` between them (a plain loop: smaller in the wasm
/// build than the standard library's generic `join`).
pub fn join(parts: &[&str], sep: &str) -> String {
    let mut out = String::new();
    for (k, part) in parts.iter().enumerate() {
        if k > 0 {
            out.push_str(sep);
        }
        out.push_str(part);
    }
    out
}

/// `parts` one after another: an error message (smaller in the wasm build than `format!`,
/// whose machinery the module then leaves out, or the standard library's generic `concat`).
#[inline(never)]
pub fn cat(parts: &[&str]) -> String {
    let mut out = String::new();
    for part in parts {
        out.push_str(part);
    }
    out
}

/// A number for an error message, without pulling float formatting into the wasm build:
/// whole numbers as they are, others with up to three decimals.
pub fn show(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let mut out = String::from(if n < 0.0 { "-" } else { "" });
    let a = n.abs();
    if a >= 1e15 {
        // (A loop, not `log10`: that would pull in half a kilobyte of libm.)
        let (mut m, mut e) = (a, 0);
        while m >= 10.0 {
            m /= 10.0;
            e += 1;
        }
        digits(m as u64, 1, &mut out);
        out.push('e');
        digits(e, 1, &mut out);
        return out;
    }
    let milli = ((a - a.trunc()) * 1000.0).round() as u64;
    // (999.9996 is 1000.)
    digits(a.trunc() as u64 + milli / 1000, 1, &mut out);
    if milli % 1000 > 0 {
        out.push('.');
        let mut frac = milli % 1000;
        let mut width = 3;
        while frac % 10 == 0 {
            frac /= 10;
            width -= 1;
        }
        digits(frac, width, &mut out);
    }
    out
}

/// `v` in decimal, at least `width` digits (the integer formatting of `core::fmt`, for the
/// one number type, costs more of the wasm build).
fn digits(mut v: u64, width: usize, out: &mut String) {
    let mut buf = [b'0'; 20];
    let mut at = buf.len();
    while v > 0 || buf.len() - at < width {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    for &b in &buf[at..] {
        out.push(b as char);
    }
}

#[cfg(test)]
mod tests {
    use super::show;

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        assert_eq!(show(1000.0), "1000");
        assert_eq!(show(-1.0), "-1");
        assert_eq!(show(2.5), "2.5");
        assert_eq!(show(0.125), "0.125");
        assert_eq!(show(f64::NAN), "NaN");
        assert_eq!(show(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(show(3e20), "3e20");
        assert_eq!(show(-1.5e300), "-1e300");
        assert_eq!(show(0.0), "0");
        assert_eq!(show(0.05), "0.05");
        assert_eq!(show(1.9996), "2");
        assert_eq!(show(12.3404), "12.34");
        assert_eq!(show(9007199254740991.0), "9e15");
        assert_eq!(show(999999999999999.0), "999999999999999");
    }
}
