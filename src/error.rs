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

/// A reduction that could not be done, with what was wrong and where.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ReduceError {
    pub code: ErrorCode,
    pub message: String,
    /// The input message at fault (`INVALID_MESSAGE`).
    pub index: Option<usize>,
    /// The config option at fault (`INVALID_CONFIG`).
    pub field: Option<String>,
}

impl ReduceError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ReduceError {
            code,
            message: message.into(),
            index: None,
            field: None,
        }
    }

    /// `INVALID_CONFIG` naming the option.
    pub fn config(field: &str, message: impl Into<String>) -> Self {
        ReduceError {
            field: Some(field.to_string()),
            ..ReduceError::new(ErrorCode::InvalidConfig, message)
        }
    }

    /// `INVALID_MESSAGE` naming the input index.
    pub fn message_at(index: usize, message: impl Into<String>) -> Self {
        ReduceError {
            index: Some(index),
            ..ReduceError::new(ErrorCode::InvalidMessage, message)
        }
    }
}

/// `parts` one after another with `sep` between them (a plain loop: smaller in the wasm
/// build than the standard library's generic `join`).
pub fn join<S: AsRef<str>>(parts: impl IntoIterator<Item = S>, sep: &str) -> String {
    let mut out = String::new();
    for (k, part) in parts.into_iter().enumerate() {
        if k > 0 {
            out.push_str(sep);
        }
        out.push_str(part.as_ref());
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
    let sign = if n < 0.0 { "-" } else { "" };
    let a = n.abs();
    if a >= 1e15 {
        return format!(
            "{sign}{}e{}",
            (a / 10f64.powi(a.log10() as i32)) as u64,
            a.log10() as i32
        );
    }
    let whole = a.trunc() as u64;
    let milli = ((a - a.trunc()) * 1000.0).round() as u64;
    match milli {
        0 => format!("{sign}{whole}"),
        1000 => format!("{sign}{}", whole + 1),
        _ => {
            let frac = format!("{milli:03}");
            format!("{sign}{whole}.{}", frac.trim_end_matches('0'))
        }
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
    }
}
